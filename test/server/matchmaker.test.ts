/** The player- and lobby-facing matchmaker (§3): find/join/create, seat waits, gates, lobby calls and listings. */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Matchmaker } from '../../src/services/matchmaker.js';
import { specConfig } from './fixtures.js';
import { harness, settle, str, until, type Harness, type W } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

const find = (token: string | undefined, body: unknown = { game_modes: ['default'] }, headers: Record<string, string> = {}) =>
  h.call('POST', '/matchmaker/lobbies/find', { ...(token === undefined ? {} : { token }), body, headers });

/** The lobby token the runtime handed the lobby's container. */
const lobbyToken = (lobbyId: string): string => str(h.runtime.startOf(lobbyId)?.env['RIVET_TOKEN'] as W | undefined);

const lobbyOf = (r: { body: W }): string => str(r.body['lobby']?.['lobby_id']);

describe('find', () => {
  it('creates a lobby and answers the JoinResponse with proxied ports and a player token', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub, nsId } = await h.setup();
    const r = await find(pub);
    expect(r.status).toBe(200);
    const lobbyId = lobbyOf(r);
    expect(r.body['lobby']?.['region']).toEqual({ region_id: 'local', display_name: 'Local' });
    const ports = r.body['ports'];
    expect(r.body['lobby']?.['ports']).toEqual(ports);
    expect(r.body['lobby']?.['player']).toEqual(r.body['player']);
    const udp = ports?.['default'];
    const udpPort = Number(udp?.['port']);
    expect(udpPort).toBeGreaterThanOrEqual(26_000);
    expect(udpPort).toBeLessThanOrEqual(31_999);
    expect(udp).toEqual({ host: `${lobbyId}-default.lobby.local.tavern.test:${udpPort}`, hostname: `${lobbyId}-default.lobby.local.tavern.test`, port: udpPort, is_tls: false });
    expect(ports?.['web']).toEqual({ host: `${lobbyId}-web.lobby.local.tavern.test:443`, hostname: `${lobbyId}-web.lobby.local.tavern.test`, port: 443, is_tls: true });
    expect(str(r.body['player']?.['token'])).toMatch(/^player\./);
    // The lobby's container got the server-side environment (§5.4).
    const env = h.runtime.startOf(lobbyId)?.env ?? {};
    expect(env).toMatchObject({ RIVET_API_ENDPOINT: 'http://tavern.test', RIVET_LOBBY_ID: lobbyId, RIVET_NAMESPACE_ID: nsId, RIVET_NAMESPACE_NAME: 'prod', RIVET_VERSION_NAME: 'v1', PORT_DEFAULT: '7777' });
    expect(env['RIVET_TOKEN']).toMatch(/^lobby\./);
    // A second find joins the same lobby.
    expect(lobbyOf(await find(pub))).toBe(lobbyId);
  });

  it('under the default job domain (localhost) gives tcp/udp ports as the API\'s own address, a game client\'s resolver may not know *.localhost', async () => {
    h = harness({ readyAfterMs: 0, config: { publicOrigin: 'http://127.0.0.1:8080', jobDomain: 'localhost' } });
    const { pub } = await h.setup();
    const r = await find(pub);
    const lobbyId = lobbyOf(r);
    const udpPort = Number(r.body['ports']?.['default']?.['port']);
    expect(r.body['ports']?.['default']).toEqual({ host: `127.0.0.1:${udpPort}`, hostname: '127.0.0.1', port: udpPort, is_tls: false });
    // Browsers and curl resolve *.localhost to this machine: the proxy's names stay.
    expect(r.body['ports']?.['web']).toMatchObject({ hostname: `${lobbyId}-web.lobby.local.localhost`, is_tls: true });
  });

  it('waits for a starting lobby and answers once it is ready', async () => {
    h = harness();
    const { pub } = await h.setup();
    let answered = false;
    const pending = find(pub).then((r) => ((answered = true), r));
    await until(() => h.timers.pending > 0);
    await settle();
    expect(answered).toBe(false);
    const lobbyId = h.runtime.started[0]?.lobbyId ?? '';
    const ready = await h.call('POST', '/matchmaker/lobbies/ready', { token: lobbyToken(lobbyId) });
    expect(ready.status).toBe(200);
    const r = await pending;
    expect(r.status).toBe(200);
    expect(lobbyOf(r)).toBe(lobbyId);
  });

  it('notices a lobby made ready through another instance sharing the store', async () => {
    h = harness();
    const { pub } = await h.setup();
    const other = new Matchmaker({
      store: h.store, clock: h.clock, random: h.random,
      verifier: { verify: () => Promise.resolve({ kind: 'status', status: 200 }) }, captcha: { verify: () => Promise.resolve({ success: true }) },
      routes: { bind: () => Promise.resolve(), unbind: () => Promise.resolve() }, logs: { append: () => Promise.resolve() },
    });
    const pending = find(pub);
    await until(() => h.timers.pending > 1);
    const lobbyId = h.runtime.started[0]?.lobbyId ?? '';
    const nsId = h.runtime.started[0]?.namespaceId ?? '';
    expect((await other.lobbyReady({ namespaceId: nsId, lobbyId })).ok).toBe(true);
    h.timers.advance(1_000);
    const r = await pending;
    expect(r.status).toBe(200);
    expect(lobbyOf(r)).toBe(lobbyId);
  });

  it('answers MATCHMAKER_LOBBY_NOT_STARTED before the client times out, and gives the seat back', async () => {
    h = harness();
    const { pub, nsId } = await h.setup();
    let answered = false;
    const pending = find(pub).then((r) => ((answered = true), r));
    await until(() => h.timers.pending > 0);
    h.timers.advance(49_000);
    await settle();
    expect(answered).toBe(false);
    h.timers.advance(1_000);
    const r = await pending;
    expect(r.status).toBe(400);
    const lobby = [...(h.store.world.namespaces.get(nsId)?.lobbies.values() ?? [])][0];
    // It names the lobby, whose log says why (`tavern logs <id>`).
    expect(r.body).toEqual({
      code: 'MATCHMAKER_LOBBY_NOT_STARTED', message: `The lobby ${lobby?.id} did not become ready within 50 s; the seat was released, try again.`, metadata: { lobby_id: lobby?.id },
    });
    expect(lobby?.playerCount).toBe(0);
  });

  it('stops a lobby whose game server never called ready once the seat wait runs out, saying in its log what the game server must do', async () => {
    h = harness();
    const { pub, nsId } = await h.setup();
    const pending = find(pub);
    await until(() => h.timers.pending > 0);
    h.timers.advance(50_000);
    expect((await pending).body['code']).toBe('MATCHMAKER_LOBBY_NOT_STARTED');
    const lobbyId = h.runtime.started[0]?.lobbyId ?? '';
    expect(h.store.world.namespaces.get(nsId)?.lobbies.get(lobbyId)?.lifecycle).toMatchObject({ status: 'stopping', reason: 'ready-timeout' });
    expect((await h.catalog.readLogs(lobbyId, 'tavern', 0, 10)).lines.map((l) => l.line)).toEqual([
      'stopping: not ready after 50 s: the game server must POST /matchmaker/lobbies/ready with its lobby token',
    ]);
    expect(h.runtime.stopped).toEqual([expect.objectContaining({ lobbyId, reason: 'ready-timeout' })]);
  });

  it('a client that goes away before the lobby is ready gives its seat back: the lobby stops as idle, not as not ready', async () => {
    h = harness();
    const { pub, nsId } = await h.setup();
    const controller = new AbortController();
    const pending = h.app.handle(new Request(h.request('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } }), { signal: controller.signal }));
    await until(() => h.timers.pending > 0);
    h.timers.advance(2_000);
    controller.abort();
    await pending;
    const lobbyId = h.runtime.started[0]?.lobbyId ?? '';
    await until(() => h.store.world.namespaces.get(nsId)?.lobbies.get(lobbyId)?.lifecycle.status === 'stopping');
    expect(h.store.world.namespaces.get(nsId)?.lobbies.get(lobbyId)?.lifecycle).toMatchObject({ reason: 'idle' });
  });

  it('fails with MATCHMAKER_LOBBY_STOPPED naming the lobby, why and its exit code when the lobby dies before it is ready', async () => {
    h = harness();
    const { pub } = await h.setup();
    const pending = find(pub);
    await until(() => h.runtime.started.length > 0);
    const lobbyId = h.runtime.started[0]?.lobbyId ?? '';
    h.runtime.exit(lobbyId, 'crashed', 1);
    const r = await pending;
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      code: 'MATCHMAKER_LOBBY_STOPPED',
      message: `The lobby ${lobbyId} has stopped or is stopping (start-failed).`,
      metadata: { lobby_id: lobbyId, reason: 'start-failed', exit_code: 1 },
    });
    expect((await h.catalog.readLogs(lobbyId, 'tavern', 0, 10)).lines.map((l) => l.line)).toEqual(['stopping: the game server exited with code 1 before it called ready']);
  });

  it('answers 503 MATCHMAKER_RUNTIME_UNAVAILABLE without a runtime (the rest still works)', async () => {
    h = harness({ runtime: false });
    const { pub, gameId, cloud, nsId } = await h.setup();
    const r = await find(pub);
    expect(r.status).toBe(503);
    expect(r.body['code']).toBe('MATCHMAKER_RUNTIME_UNAVAILABLE');
    expect(r.body['message']).toMatch(/^No lobby can start in region \S+ now: no container runtime is configured or answering/);
    expect((await h.call('GET', `/cloud/games/${gameId}/namespaces/${nsId}`, { token: cloud })).status).toBe(200);
  });

  it('refuses bad requests with the matchmaker codes', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup();
    expect((await find(pub, { game_modes: [] })).body['code']).toBe('MATCHMAKER_NO_GAME_MODE_PROVIDED');
    const mode = await find(pub, { game_modes: ['nope'] });
    expect(mode.status).toBe(400);
    expect(mode.body).toEqual({ code: 'MATCHMAKER_GAME_MODE_NOT_FOUND', message: 'Game mode not found: nope.' });
    expect((await find(pub, { game_modes: ['default'], regions: ['mars'] })).body['code']).toBe('MATCHMAKER_REGION_NOT_FOUND');
    expect((await find(pub, { game_modes: ['default'], tags: { a: 'b' } })).body['code']).toBe('MATCHMAKER_TAGS_DISABLED');
    expect((await find(pub, { game_modes: ['default'], max_players: 2 })).body['code']).toBe('MATCHMAKER_DYNAMIC_MAX_PLAYERS_DISABLED');
    expect((await find(pub, { game_modes: ['default'], prevent_auto_create_lobby: true })).body['code']).toBe('MATCHMAKER_NO_AVAILABLE_LOBBIES');
    expect((await find(undefined)).status).toBe(401);
  });

  it('caps seats per client address (MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE)', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub, gameId, cloud, nsId } = await h.setup();
    await h.call('POST', `/cloud/games/${gameId}/namespaces/${nsId}/mm-config`, { token: cloud, body: { lobby_count_max: 16, max_players: 1 } });
    expect((await find(pub)).status).toBe(200);
    expect((await find(pub)).body['code']).toBe('MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE');
    expect((await find(pub, undefined, { 'x-forwarded-for': '198.51.100.50' })).status).toBe(200);
  });

  it('is reachable through the deprecated host form', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup();
    const r = await h.call('POST', 'http://matchmaker.api.tavern.test/v1/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
    expect(r.status).toBe(200);
  });
});

describe('join and create', () => {
  it('joins a lobby by id, even a closed one', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup();
    const lobbyId = lobbyOf(await find(pub));
    await h.call('PUT', '/matchmaker/lobbies/closed', { token: lobbyToken(lobbyId), body: { is_closed: true } });
    const r = await h.call('POST', '/matchmaker/lobbies/join', { token: pub, body: { lobby_id: lobbyId.toUpperCase() } });
    expect(r.status).toBe(200);
    expect(lobbyOf(r)).toBe(lobbyId);
  });

  it('MATCHMAKER_LOBBY_NOT_FOUND for an unknown or non-UUID lobby id (Rivet: 500)', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup();
    for (const lobby_id of ['not-a-uuid', randomUUID()]) {
      const r = await h.call('POST', '/matchmaker/lobbies/join', { token: pub, body: { lobby_id } });
      expect(r.status).toBe(400);
      expect(r.body['code']).toBe('MATCHMAKER_LOBBY_NOT_FOUND');
    }
    expect((await h.call('POST', '/matchmaker/lobbies/join', { token: pub, body: {} })).body['code']).toBe('VALIDATION_ERROR');
  });

  it('creates a custom lobby (with its tags) where create is enabled', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub, nsId } = await h.setup();
    const r = await h.call('POST', '/matchmaker/lobbies/create', {
      token: pub, body: { game_mode: 'custom', region: 'lnd-atl', publicity: 'public', tags: { map: 'dust' }, max_players: 2, lobby_config: { rounds: 3 } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body['lobby']?.['region']).toEqual({ region_id: 'lnd-atl', display_name: 'Atlanta' });
    const lobby = h.store.world.namespaces.get(nsId)?.lobbies.get(lobbyOf(r));
    expect(lobby).toMatchObject({ tags: { map: 'dust' }, publicity: 'public', maxPlayers: { normal: 2, direct: 2 } });
    expect(h.runtime.startOf(lobbyOf(r))?.env['RIVET_LOBBY_CONFIG']).toBe('{"rounds":3}');
    const disabled = await h.call('POST', '/matchmaker/lobbies/create', { token: pub, body: { game_mode: 'default' } });
    expect(disabled.body['code']).toBe('MATCHMAKER_CUSTOM_LOBBIES_DISABLED');
    const big = await h.call('POST', '/matchmaker/lobbies/create', { token: pub, body: { game_mode: 'custom', lobby_config: { x: 'y'.repeat(17_000) } } });
    expect(big.body['code']).toBe('MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID');
  });
});

describe('gates', () => {
  it('asks for a captcha (403 with the site key), then verifies the answer', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup((buildId) => specConfig(buildId));
    const first = await find(pub);
    expect(first.status).toBe(403);
    expect(first.body).toEqual({ code: 'CAPTCHA_CAPTCHA_REQUIRED', message: 'A captcha is required.', metadata: { turnstile: { site_key: 'site-key-1' } } });
    h.captcha.answer = () => ({ success: false, reason: 'invalid-input-response' });
    const failed = await find(pub, { game_modes: ['default'], captcha: { turnstile: { client_response: 'wrong' } } });
    expect(failed.body['code']).toBe('CAPTCHA_CAPTCHA_FAILED');
    h.captcha.answer = () => ({ success: true });
    const solved = await find(pub, { game_modes: ['default'], captcha: { turnstile: { client_response: 'right' } } });
    expect(solved.status).toBe(200);
    expect(h.captchas.at(-1)).toMatchObject({ provider: 'turnstile', siteKey: 'site-key-1', secretKey: 'secret-key-1', response: 'right', remoteIp: '203.0.113.7' });
  });

  it('calls the verification URL with the verification data; a non-2xx refuses', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup((buildId) => ({
      matchmaker: {
        regions: { local: {} },
        docker: { image_id: buildId, ports: { default: { port: 7777, protocol: 'udp' } } },
        game_modes: { default: { actions: { find: { enabled: true, verification: { url: 'https://verify.example.com/check', headers: { 'x-key': 'k' } } } } } },
      },
    }));
    h.verify.answer = () => ({ kind: 'status', status: 403 });
    const refused = await find(pub, { game_modes: ['default'], verification_data: { user: 'alice' } });
    expect(refused.status).toBe(400);
    expect(refused.body['code']).toBe('MATCHMAKER_VERIFICATION_FAILED');
    expect(h.verifications[0]).toMatchObject({ url: 'https://verify.example.com/check', headers: { 'x-key': 'k' }, body: { verification_data: { user: 'alice' }, kind: 'Find' } });
    h.verify.answer = () => ({ kind: 'failed', reason: 'connection refused' });
    expect((await find(pub)).body['code']).toBe('MATCHMAKER_VERIFICATION_REQUEST_FAILED');
    h.verify.answer = () => ({ kind: 'status', status: 204 });
    expect((await find(pub)).status).toBe(200);
  });
});

describe('lobby-facing calls', () => {
  it('ready and setClosed need a lobby token (CLAIMS_MISSING_ENTITLEMENT otherwise)', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub, cloud } = await h.setup();
    for (const token of [pub, cloud]) {
      const r = await h.call('PUT', '/matchmaker/lobbies/closed', { token, body: { is_closed: true } });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ code: 'CLAIMS_MISSING_ENTITLEMENT', message: 'Missing "MatchmakerLobby" entitlement.' });
    }
    expect((await h.call('POST', '/matchmaker/lobbies/ready')).status).toBe(401);
  });

  it('setClosed stops routing finds to the lobby, and reopening restores it', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub, gameId, cloud, nsId } = await h.setup();
    const lobbyId = lobbyOf(await find(pub));
    const token = lobbyToken(lobbyId);
    const closed = await h.call('PUT', '/matchmaker/lobbies/closed', { token, body: { is_closed: true } });
    expect(closed.status).toBe(200);
    expect(closed.body).toEqual({});
    const live = await h.call('GET', `/cloud/games/${gameId}/namespaces/${nsId}/analytics/matchmaker/live`, { token: cloud });
    expect(live.body['lobbies']?.[0]).toMatchObject({ lobby_id: lobbyId, is_closed: true });
    const other = await find(pub);
    expect(lobbyOf(other)).not.toBe(lobbyId);
    await h.call('PUT', '/matchmaker/lobbies/closed', { token, body: { is_closed: false } });
    expect(h.store.world.namespaces.get(nsId)?.lobbies.get(lobbyId)?.closed).toBe(false);
    expect((await h.call('PUT', '/matchmaker/lobbies/closed', { token, body: { is_closed: 'yes' } })).body['code']).toBe('VALIDATION_ERROR');
  });

  it('sets, reads and clears lobby state within the namespace', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup();
    const a = lobbyOf(await find(pub));
    const b = lobbyOf(await h.call('POST', '/matchmaker/lobbies/join', { token: pub, body: { lobby_id: a } }));
    expect(b).toBe(a);
    const token = lobbyToken(a);
    expect((await h.call('PUT', '/matchmaker/lobbies/state', { token, body: { round: 2 } })).status).toBe(200);
    expect((await h.call('GET', `/matchmaker/lobbies/${a}/state`, { token })).body).toEqual({ round: 2 });
    expect((await h.call('PUT', '/matchmaker/lobbies/state', { token, raw: '' })).status).toBe(200);
    expect((await h.call('GET', `/matchmaker/lobbies/${a}/state`, { token })).body).toBeNull();
    expect((await h.call('GET', `/matchmaker/lobbies/${randomUUID()}/state`, { token })).body).toBeNull();
  });

  it('players connected/disconnected with the player token (§3.7)', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub, nsId } = await h.setup();
    const found = await find(pub);
    const lobbyId = lobbyOf(found);
    const token = lobbyToken(lobbyId);
    const player_token = str(found.body['player']?.['token']);
    expect((await h.call('POST', '/matchmaker/players/connected', { token, body: { player_token } })).status).toBe(200);
    expect(h.store.world.namespaces.get(nsId)?.lobbies.get(lobbyId)?.connectedCount).toBe(1);
    expect((await h.call('POST', '/matchmaker/players/connected', { token, body: { player_token } })).body['code']).toBe('MATCHMAKER_PLAYER_ALREADY_CONNECTED');
    const garbage = await h.call('POST', '/matchmaker/players/connected', { token, body: { player_token: 'garbage' } });
    expect(garbage.status).toBe(400);
    expect(garbage.body['code']).toBe('TOKEN_ERROR');
    expect((await h.call('POST', '/matchmaker/players/connected', { token, body: { player_token: pub } })).body['code']).toBe('TOKEN_ERROR');
    expect((await h.call('POST', '/matchmaker/players/disconnected', { token, body: { player_token } })).status).toBe(200);
    expect(h.store.world.namespaces.get(nsId)?.lobbies.get(lobbyId)?.playerCount).toBe(0);
  });

  it('a lobby cannot confirm another lobby\'s player', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup();
    const first = await find(pub);
    const second = await h.call('POST', '/matchmaker/lobbies/create', { token: pub, body: { game_mode: 'custom' } });
    const r = await h.call('POST', '/matchmaker/players/connected', { token: lobbyToken(lobbyOf(second)), body: { player_token: str(first.body['player']?.['token']) } });
    expect(r.body['code']).toBe('MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY');
  });
});

describe('listings', () => {
  it('lists lobbies, regions and statistics', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup();
    const found = await find(pub);
    const lobbyId = lobbyOf(found);
    await h.call('PUT', '/matchmaker/lobbies/state', { token: lobbyToken(lobbyId), body: { map: 'dust' } });
    const list = await h.call('GET', '/matchmaker/lobbies/list?include_state=true', { token: pub });
    expect(list.status).toBe(200);
    expect(list.body['game_modes']).toEqual([{ game_mode_id: 'default' }, { game_mode_id: 'custom' }]);
    expect(list.body['lobbies']).toEqual([{
      region_id: 'local', game_mode_id: 'default', lobby_id: lobbyId, max_players_normal: 4, max_players_direct: 4, max_players_party: 4,
      total_player_count: 0, state: { map: 'dust' },
    }]);
    const regions = await h.call('GET', '/matchmaker/regions', { token: pub, headers: { 'x-coords': '33.7,-84.4' } });
    expect((regions.body['regions'] as unknown as { region_id: string }[]).map((r) => r.region_id)).toEqual(['lnd-atl', 'local']);
    expect(regions.body['regions']?.[0]).toMatchObject({ provider_display_name: 'Tavern', region_display_name: 'Atlanta', datacenter_coord: { latitude: 33.7, longitude: -84.4 } });
    const stats = await h.call('GET', '/matchmaker/players/statistics', { token: pub });
    expect(stats.body).toEqual({ player_count: 1, game_modes: { default: { player_count: 1, regions: { local: { player_count: 1 } } } } });
  });
});

describe('development tokens (§4.3)', () => {
  it('answer every matchmaker call with mocks', async () => {
    h = harness({ readyAfterMs: 0 });
    const { gameId, cloud, nsId } = await h.setup();
    const dev = str((await h.call('POST', `/cloud/games/${gameId}/namespaces/${nsId}/tokens/development`, {
      token: cloud, body: { hostname: '127.0.0.1', ports: { default: { port: 7777, protocol: 'udp' }, web: { port: 8080, protocol: 'https' }, p2p: { port_range: { min: 27000, max: 27010 }, protocol: 'udp' } } },
    })).body['token']);
    const r = await find(dev);
    expect(r.status).toBe(200);
    expect(r.body['lobby']?.['lobby_id']).toBe('00000000-0000-0000-0000-000000000000');
    expect(r.body['lobby']?.['region']).toEqual({ region_id: 'dev-lcl', display_name: 'Local' });
    expect(r.body['ports']).toEqual({
      default: { host: '127.0.0.1:7777', hostname: '127.0.0.1', port: 7777, is_tls: false },
      web: { host: '127.0.0.1:8080', hostname: '127.0.0.1', port: 8080, is_tls: true },
      p2p: { hostname: '127.0.0.1', port_range: { min: 27000, max: 27010 }, is_tls: false },
    });
    expect(h.runtime.started).toHaveLength(0); // no lobby was started
    const playerToken = str(r.body['player']?.['token']);
    expect(playerToken).toMatch(/^dev_player\./);
    expect((await h.call('POST', '/matchmaker/lobbies/ready', { token: dev })).body).toEqual({});
    expect((await h.call('PUT', '/matchmaker/lobbies/closed', { token: dev, body: { is_closed: true } })).body).toEqual({});
    expect((await h.call('POST', '/matchmaker/players/connected', { token: dev, body: { player_token: playerToken } })).body).toEqual({});
    expect((await h.call('GET', '/matchmaker/players/statistics', { token: dev })).body).toEqual({ player_count: 0, game_modes: {} });
    const list = await h.call('GET', '/matchmaker/lobbies/list?include_state=true', { token: dev });
    expect(list.body['lobbies']?.[0]).toMatchObject({ region_id: 'dev-lcl', game_mode_id: 'default', state: { foo: 'bar' } });
    expect((await h.call('GET', '/matchmaker/regions', { token: dev })).body['regions']?.[0]).toMatchObject({ region_id: 'local', provider_display_name: 'Your Computer' });
    expect((await h.call('POST', '/matchmaker/lobbies/join', { token: dev, body: { lobby_id: 'anything' } })).status).toBe(200);
  });
});
