/** Games, namespaces, versions, tokens and domains. */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { fullConfig, specConfig } from './fixtures.js';
import { ADMIN, harness, str, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A complete CDN site (a version's `cdn.site_id` must name one). */
const completeSite = async (gameId: string, cloud: string): Promise<string> => {
  const site = await h.call('POST', `/cloud/games/${gameId}/cdn/sites`, { token: cloud, body: { display_name: 'Site', files: [{ path: 'index.html', content_length: 2 }] } });
  const url = str(site.body['presigned_requests']?.[0]?.['url']);
  expect((await h.app.handle(new Request(url, { method: 'PUT', body: 'hi' }))).status).toBe(200);
  await h.call('POST', `/cloud/uploads/${str(site.body['upload_id'])}/complete`, { token: cloud });
  return str(site.body['site_id']);
};

describe('games', () => {
  it('creates a game with prod and staging namespaces on a first version', async () => {
    h = harness();
    const group = randomUUID();
    const created = await h.call('POST', '/cloud/games', { token: ADMIN, body: { name_id: 'space-game', display_name: 'Space Game', developer_group_id: group } });
    expect(created.status).toBe(200);
    const gameId = str(created.body['game_id']);
    const got = await h.call('GET', `/cloud/games/${gameId}`, { token: ADMIN });
    expect(got.status).toBe(200);
    const game = got.body['game'];
    expect(game).toMatchObject({ game_id: gameId, name_id: 'space-game', display_name: 'Space Game', developer_group_id: group, total_player_count: 0 });
    expect(str(game?.['create_ts'])).toMatch(RFC3339_MS);
    expect((game?.['namespaces'] as unknown as { name_id: string }[]).map((n) => n.name_id)).toEqual(['prod', 'staging']);
    expect(game?.['versions']).toHaveLength(1);
    expect(game?.['available_regions']?.[0]).toMatchObject({ region_name_id: 'local', universal_region: 'local', region_display_name: 'Local' });
    expect(str(game?.['available_regions']?.[0]?.['region_id'])).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5/);
    expect(str(got.body['watch']?.['index'])).toMatch(/^\d+$/);
  });

  it('validates name id and display name, listing every problem', async () => {
    h = harness();
    const r = await h.call('POST', '/cloud/games', { token: ADMIN, body: { name_id: 'Bad--Name', display_name: ' x', developer_group_id: 'nope' } });
    expect(r.status).toBe(400);
    expect(r.body['message']).toBe('did not pass validation: name-id.invalid, display-name.invalid, developer_group_id.invalid');
  });

  it('answers a taken name id with CLOUD_NAME_ID_TAKEN', async () => {
    h = harness();
    await h.setup(undefined, 'taken');
    const r = await h.call('POST', '/cloud/games', { token: ADMIN, body: { name_id: 'taken', display_name: 'Again', developer_group_id: randomUUID() } });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('CLOUD_NAME_ID_TAKEN');
    const v = await h.call('POST', '/cloud/games/validate', { token: ADMIN, body: { name_id: 'taken', display_name: 'x' } });
    expect(v.body).toEqual({ errors: [{ path: ['name-id', 'not-unique'] }] });
  });

  it('lists every game to the admin and its own game to a cloud token', async () => {
    h = harness();
    const a = await h.setup(undefined, 'game-a');
    await h.setup(undefined, 'game-b');
    const all = await h.call('GET', '/cloud/games', { token: ADMIN });
    expect(all.body['games']).toHaveLength(2);
    expect(all.body['groups']).toHaveLength(2);
    expect(all.body['games']?.[0]).toMatchObject({ name_id: 'game-a', total_player_count: 0 });
    const own = await h.call('GET', '/cloud/games', { token: a.cloud });
    expect((own.body['games'] as unknown as { game_id: string }[]).map((g) => g.game_id)).toEqual([a.gameId]);
    expect((await h.call('GET', '/cloud/games', { token: a.pub })).status).toBe(401);
  });

  it('GAME_NOT_FOUND for an unknown game (admin)', async () => {
    h = harness();
    const r = await h.call('GET', `/cloud/games/${randomUUID()}`, { token: ADMIN });
    expect(r.status).toBe(404);
    expect(r.body['code']).toBe('GAME_NOT_FOUND');
  });

  it('inspect and bootstrap', async () => {
    h = harness();
    const { gameId, cloud, pub } = await h.setup();
    expect((await h.call('GET', '/cloud/auth/inspect', { token: cloud })).body).toEqual({ agent: { game_cloud: { game_id: gameId } } });
    expect((await h.call('GET', '/cloud/auth/inspect', { token: ADMIN })).body['agent']?.['identity']).toBeDefined();
    expect((await h.call('GET', '/cloud/auth/inspect', { token: pub })).status).toBe(401);
    expect((await h.call('GET', '/cloud/auth/inspect')).status).toBe(401);
    expect((await h.call('GET', '/cloud/bootstrap')).body).toEqual({ cluster: 'oss', captcha: {} });
    expect((await h.call('GET', '/cloud/bootstrap', { token: 'garbage' })).status).toBe(401);
  });
});

describe('namespaces', () => {
  it('returns the §2.2 shape with Rivet defaults', async () => {
    h = harness();
    const { gameId, cloud, nsId, versionId } = await h.setup();
    const r = await h.call('GET', `/cloud/games/${gameId}/namespaces/${nsId}`, { token: cloud });
    expect(r.status).toBe(200);
    expect(r.body['namespace']).toEqual({
      namespace_id: nsId,
      create_ts: expect.stringMatching(RFC3339_MS) as unknown,
      display_name: 'Production',
      version_id: versionId,
      name_id: 'prod',
      config: {
        cdn: { enable_domain_public_auth: true, domains: [], auth_type: 'none', auth_user_list: [] },
        matchmaker: {
          lobby_count_max: 128, max_players_per_client: 8, max_players_per_client_vpn: 4,
          max_players_per_client_proxy: 2, max_players_per_client_tor: 2, max_players_per_client_hosting: 2,
        },
        kv: {},
        identity: {},
      },
    });
  });

  it('NAMESPACE_NOT_FOUND for an unknown namespace or one of another game', async () => {
    h = harness();
    const a = await h.setup(undefined, 'game-a');
    const b = await h.setup(undefined, 'game-b');
    expect((await h.call('GET', `/cloud/games/${a.gameId}/namespaces/${randomUUID()}`, { token: a.cloud })).status).toBe(404);
    const cross = await h.call('GET', `/cloud/games/${a.gameId}/namespaces/${b.nsId}`, { token: a.cloud });
    expect(cross.status).toBe(404);
    expect(cross.body['code']).toBe('NAMESPACE_NOT_FOUND');
  });

  it('creates a namespace (validated) and validates without creating', async () => {
    h = harness();
    const { gameId, cloud, versionId } = await h.setup();
    const bad = await h.call('POST', `/cloud/games/${gameId}/namespaces`, { token: cloud, body: { display_name: 'Test', name_id: 'prod', version_id: randomUUID() } });
    expect(bad.body['message']).toBe('did not pass validation: name-id.not-unique, version-id.not-found');
    const created = await h.call('POST', `/cloud/games/${gameId}/namespaces`, { token: cloud, body: { display_name: 'Test', name_id: 'test', version_id: versionId } });
    expect(created.status).toBe(200);
    const nsId = str(created.body['namespace_id']);
    expect(h.store.world.namespaces.get(nsId)?.currentVersionId).toBe(versionId);
    const v = await h.call('POST', `/cloud/games/${gameId}/namespaces/validate`, { token: cloud, body: { display_name: 'T', name_id: 'test' } });
    expect(v.body).toEqual({ errors: [{ path: ['name-id', 'not-unique'] }] });
  });

  it('sets the version: the matchmaker publishes it (VERSION_NOT_FOUND otherwise)', async () => {
    h = harness();
    const { gameId, cloud, nsId, buildId } = await h.setup();
    const v2 = await h.call('POST', `/cloud/games/${gameId}/versions`, { token: cloud, body: { display_name: 'v2', config: specConfig(buildId) } });
    expect(v2.status).toBe(200);
    const set = await h.call('PUT', `/cloud/games/${gameId}/namespaces/${nsId}/version`, { token: cloud, body: { version_id: v2.body['version_id'] } });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({});
    expect(h.store.world.namespaces.get(nsId)?.currentVersionId).toBe(v2.body['version_id']);
    const history = await h.call('GET', `/cloud/games/${gameId}/namespaces/${nsId}/version-history`, { token: cloud });
    expect(history.body['versions']?.[0]?.['version_id']).toBe(v2.body['version_id']);
    const missing = await h.call('PUT', `/cloud/games/${gameId}/namespaces/${nsId}/version`, { token: cloud, body: { version_id: randomUUID() } });
    expect(missing.status).toBe(404);
    expect(missing.body['code']).toBe('VERSION_NOT_FOUND');
  });

  it('updates matchmaker limits, domain public auth and CDN auth', async () => {
    h = harness();
    const { gameId, cloud, nsId } = await h.setup();
    const base = `/cloud/games/${gameId}/namespaces/${nsId}`;
    expect((await h.call('POST', `${base}/mm-config/validate`, { token: cloud, body: { lobby_count_max: 0, max_players: 4 } })).body).toEqual({ errors: [{ path: ['lobby_count_max', 'out-of-range'] }] });
    expect((await h.call('POST', `${base}/mm-config`, { token: cloud, body: { lobby_count_max: 16, max_players: 3 } })).status).toBe(200);
    expect(h.store.world.namespaces.get(nsId)?.settings).toMatchObject({ lobbyCountMax: 16, maxPlayersPerClient: 3 });
    expect((await h.call('PUT', `${base}/domain-public-auth`, { token: cloud, body: { enabled: false } })).status).toBe(200);
    expect((await h.call('PUT', `${base}/cdn-auth`, { token: cloud, body: { auth_type: 'basic' } })).status).toBe(200);
    expect((await h.call('PUT', `${base}/cdn-auth`, { token: cloud, body: { auth_type: 'weird' } })).body['code']).toBe('VALIDATION_ERROR');
    const ns = (await h.call('GET', base, { token: cloud })).body['namespace']?.['config'];
    expect(ns?.['cdn']).toMatchObject({ enable_domain_public_auth: false, auth_type: 'basic' });
    expect(ns?.['matchmaker']).toMatchObject({ lobby_count_max: 16, max_players_per_client: 3 });
  });
});

describe('addNamespaceDomain (§2.7)', () => {
  it('adds a domain, shown in the namespace', async () => {
    h = harness({ config: { cdnDomain: 'cdn.tavern.test' } });
    const { gameId, cloud, nsId } = await h.setup();
    const base = `/cloud/games/${gameId}/namespaces/${nsId}`;
    const r = await h.call('POST', `${base}/domains`, { token: cloud, body: { domain: 'play.example.com' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({});
    const domains = (await h.call('GET', base, { token: cloud })).body['namespace']?.['config']?.['cdn']?.['domains'];
    expect(domains).toEqual([{
      domain: 'play.example.com', create_ts: expect.stringMatching(RFC3339_MS) as unknown, verification_status: 'active',
      verification_method: { http: { cname_record: 'my-game.cdn.tavern.test' } },
      verification_errors: ['no TLS certificate for this domain in TAVERN_CDN_TLS_DIR: served over HTTP only'],
    }]);
    expect((await h.call('DELETE', `${base}/domains/play.example.com`, { token: cloud })).status).toBe(200);
    expect((await h.call('GET', base, { token: cloud })).body['namespace']?.['config']?.['cdn']?.['domains']).toEqual([]);
  });

  it('CDN_INVALID_DOMAIN for bad or reserved names', async () => {
    h = harness({ config: { cdnDomain: 'cdn.tavern.test' } });
    const { gameId, cloud, nsId } = await h.setup();
    for (const domain of ['', 'Play.example.com', 'https://x.com', 'nodot', 'a..b.com', '-a.com', 'x.cdn.tavern.test', 'tavern.test', `${'a'.repeat(250)}.com`]) {
      const r = await h.call('POST', `/cloud/games/${gameId}/namespaces/${nsId}/domains`, { token: cloud, body: { domain } });
      expect(r.body['code'], domain).toBe('CDN_INVALID_DOMAIN');
      expect(r.status).toBe(400);
      expect(r.body['metadata']).toEqual({ path: ['domain'] });
    }
  });

  it('CLOUD_HOSTNAME_TAKEN when any namespace has it; CDN_TOO_MANY_DOMAINS after 10', async () => {
    h = harness();
    const a = await h.setup(undefined, 'game-a');
    const b = await h.setup(undefined, 'game-b');
    await h.call('POST', `/cloud/games/${a.gameId}/namespaces/${a.nsId}/domains`, { token: a.cloud, body: { domain: 'shared.example.com' } });
    const taken = await h.call('POST', `/cloud/games/${b.gameId}/namespaces/${b.nsId}/domains`, { token: b.cloud, body: { domain: 'shared.example.com' } });
    expect(taken.status).toBe(400);
    expect(taken.body).toMatchObject({ code: 'CLOUD_HOSTNAME_TAKEN', metadata: { path: ['domain'] } });
    for (let i = 0; i < 9; i++) await h.call('POST', `/cloud/games/${a.gameId}/namespaces/${a.nsId}/domains`, { token: a.cloud, body: { domain: `d${i}.example.com` } });
    const many = await h.call('POST', `/cloud/games/${a.gameId}/namespaces/${a.nsId}/domains`, { token: a.cloud, body: { domain: 'one-more.example.com' } });
    expect(many.body['code']).toBe('CDN_TOO_MANY_DOMAINS');
  });
});

describe('namespace tokens', () => {
  it('issues public and development tokens', async () => {
    h = harness();
    const { gameId, cloud, nsId } = await h.setup();
    const base = `/cloud/games/${gameId}/namespaces/${nsId}/tokens`;
    expect(str((await h.call('POST', `${base}/public`, { token: cloud })).body['token'])).toMatch(/^pub_prod\./);
    const dev = await h.call('POST', `${base}/development`, { token: cloud, body: { hostname: '127.0.0.1', ports: { default: { port: 7777, protocol: 'udp' } } } });
    expect(str(dev.body['token'])).toMatch(/^dev_prod\./);
    const legacy = await h.call('POST', `${base}/development`, { token: cloud, body: { hostname: '127.0.0.1', lobby_ports: [{ label: 'default', target_port: 7777, proxy_protocol: 'udp' }] } });
    expect(legacy.status).toBe(200);
  });

  it('CLOUD_INVALID_CONFIG for both or neither port lists; VALIDATION_ERROR for bad ports', async () => {
    h = harness();
    const { gameId, cloud, nsId } = await h.setup();
    const base = `/cloud/games/${gameId}/namespaces/${nsId}/tokens/development`;
    expect((await h.call('POST', base, { token: cloud, body: { hostname: 'h', ports: {}, lobby_ports: [] } })).body['code']).toBe('CLOUD_INVALID_CONFIG');
    expect((await h.call('POST', base, { token: cloud, body: { hostname: 'h' } })).body['code']).toBe('CLOUD_INVALID_CONFIG');
    expect((await h.call('POST', base, { token: cloud, body: { ports: {} } })).body['message']).toBe('did not pass validation: hostname.missing');
    const bad = await h.call('POST', base, { token: cloud, body: { hostname: 'h', ports: { Bad: { protocol: 'http', port_range: { min: 1, max: 2 } } } } });
    expect(bad.body['message']).toBe('did not pass validation: ports.0.label-invalid, ports.0.unsupported-port-range');
  });

  it('validates development ports (§2.5)', async () => {
    h = harness();
    const { gameId, cloud, nsId } = await h.setup();
    const r = await h.call('POST', `/cloud/games/${gameId}/namespaces/${nsId}/tokens/development/validate`, {
      token: cloud,
      body: { hostname: 'anything', lobby_ports: [{ label: 'a', target_port: 1, proxy_protocol: 'udp' }, { label: 'a', proxy_protocol: 'udp' }] },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ errors: [{ path: ['ports', '1', 'label-not-unique'] }, { path: ['ports', '1', 'missing-port-and-port-range'] }] });
    const ok = await h.call('POST', `/cloud/games/${gameId}/namespaces/${nsId}/tokens/development/validate`, {
      token: cloud, body: { hostname: 'x', lobby_ports: [{ label: 'a', target_port: 1, proxy_protocol: 'udp' }] },
    });
    expect(ok.body).toEqual({ errors: [] });
  });
});

describe('versions (§2.1)', () => {
  it('creates a version from a full config and returns it re-rendered without engine', async () => {
    h = harness();
    const { gameId, cloud, buildId } = await h.setup();
    const siteId = await completeSite(gameId, cloud);
    const created = await h.call('POST', `/cloud/games/${gameId}/versions`, { token: cloud, body: { display_name: 'Full', config: fullConfig(buildId, siteId) } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const versionId = str(created.body['version_id']);
    const got = await h.call('GET', `/cloud/games/${gameId}/versions/${versionId}`, { token: cloud });
    const version = got.body['version'];
    expect(version).toMatchObject({ version_id: versionId, display_name: 'Full' });
    expect(str(version?.['create_ts'])).toMatch(RFC3339_MS);
    expect(version?.['config']?.['engine']).toBeUndefined();
    expect(version?.['config']?.['cdn']?.['site_id']).toBe(siteId);
    expect(version?.['config']?.['matchmaker']?.['docker']?.['image_id']).toBe(buildId);
    expect(Object.keys(version?.['config']?.['matchmaker']?.['game_modes'] ?? {})).toEqual(['default', 'verified']);
  });

  it('accepts the spec spellings the 23.2 client cannot send (scripts, engine.custom, captcha keys, container)', async () => {
    h = harness();
    const { gameId, cloud, buildId } = await h.setup();
    const r = await h.call('POST', `/cloud/games/${gameId}/versions`, { token: cloud, body: { display_name: 'Spec', config: specConfig(buildId) } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const got = await h.call('GET', `/cloud/games/${gameId}/versions/${str(r.body['version_id'])}`, { token: cloud });
    expect(got.body['version']?.['config']?.['scripts']).toEqual({ start: 'node server.js' });
    expect(got.body['version']?.['config']?.['matchmaker']?.['captcha']?.['turnstile']).toEqual({ site_key: 'site-key-1', secret_key: 'secret-key-1' });
  });

  it('reports every problem with its path as one VALIDATION_ERROR', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    const r = await h.call('POST', `/cloud/games/${gameId}/versions`, {
      token: cloud,
      body: {
        display_name: 'v1',
        config: { cdn: { site_id: randomUUID() }, matchmaker: { regions: { mars: {} }, docker: { image_id: randomUUID(), ports: { default: { port: 7777, protocol: 'udp' } } }, game_modes: { default: { max_players: 0 } } } },
      },
    });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('VALIDATION_ERROR');
    const errors = r.body['metadata']?.['errors'] as unknown as { path: string[]; message?: string }[];
    const paths = errors.map((p) => p.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['display-name.not-unique']));
    expect(paths.length).toBeGreaterThanOrEqual(4);
    expect(paths.some((p) => p.includes('mars'))).toBe(true);
    expect(paths.some((p) => p.includes('image-id'))).toBe(true);
    expect(paths.some((p) => p.startsWith('config.cdn'))).toBe(true);
    // Each path, followed by its own words where it has them.
    expect(str(r.body['message'])).toBe(`did not pass validation: ${errors.map((p) => (p.message === undefined ? p.path.join('.') : `${p.path.join('.')} (${p.message})`)).join(', ')}`);
    expect(errors.find((p) => p.path.includes('*mars*'))?.message).toContain('it runs: local, lnd-atl');
  });

  it('refuses unknown and forbidden keys, naming each as written with the key it meant or why, in create and validate alike', async () => {
    h = harness();
    const { gameId, cloud, buildId } = await h.setup();
    const config = { matchmaker: { max_player: 32, regions: { local: {} }, docker: { image_id: buildId, privileged: true, ports: { game: { port: 7777, protocl: 'udp' } } }, game_modes: { default: {} } } };
    const r = await h.call('POST', `/cloud/games/${gameId}/versions`, { token: cloud, body: { display_name: 'typo', config } });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('VALIDATION_ERROR');
    const errors = r.body['metadata']?.['errors'] as unknown as { path: string[]; message?: string }[];
    const privileged = 'lobbies run unprivileged, with no added capabilities: Tavern sets their user, security profile and runtime';
    expect(errors).toEqual(expect.arrayContaining([
      { path: ['config', 'matchmaker', '*max_player*', 'unknown-key'], message: 'unknown key `max_player`: did you mean `max_players`?' },
      { path: ['config', 'matchmaker', 'docker', 'ports', '*game*', '*protocl*', 'unknown-key'], message: 'unknown key `protocl`: did you mean `protocol`?' },
      { path: ['config', 'matchmaker', 'docker', '*privileged*', 'forbidden-key'], message: `\`privileged\` is never allowed: ${privileged}` },
    ]));
    expect(errors).toHaveLength(3);
    expect(str(r.body['message'])).toContain('config.matchmaker.*max_player*.unknown-key (unknown key `max_player`: did you mean `max_players`?)');
    const v = await h.call('POST', `/cloud/games/${gameId}/versions/validate`, { token: cloud, body: { display_name: 'typo', config } });
    expect(v.body['errors']).toEqual(errors);
    const game = await h.call('GET', `/cloud/games/${gameId}`, { token: cloud });
    expect((game.body['game']?.['versions'] as unknown as { display_name: string }[]).map((x) => x.display_name)).not.toContain('typo');
  });

  it('validate returns the same problems without creating; GET of an unknown version is VERSION_NOT_FOUND', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    const v = await h.call('POST', `/cloud/games/${gameId}/versions/validate`, { token: cloud, body: { display_name: '', config: {} } });
    expect(v.body).toEqual({ errors: [{ path: ['display-name', 'too-short'] }] });
    const ok = await h.call('POST', `/cloud/games/${gameId}/versions/validate`, { token: cloud, body: { display_name: 'fine', config: {} } });
    expect(ok.body).toEqual({ errors: [] });
    expect((await h.call('GET', `/cloud/games/${gameId}/versions/${randomUUID()}`, { token: cloud })).body['code']).toBe('VERSION_NOT_FOUND');
  });
});
