/** Bearer auth (§1.2, §4): token kinds, scopes, expiry, revocation, origin auth and client addresses. */
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, harness, str, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

const jtiOf = (token: string): string => {
  const parts = token.split('.');
  const payload = JSON.parse(Buffer.from(parts[parts.length - 2] ?? '', 'base64url').toString('utf8')) as { jti: string };
  return payload.jti;
};

describe('auth', () => {
  it('401 API_UNAUTHORIZED without a token, or with a malformed or forged one', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    const none = await h.call('GET', `/cloud/games/${gameId}`);
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ code: 'API_UNAUTHORIZED', message: 'Failed to authenticate: No bearer token provided.' });
    expect((await h.call('GET', `/cloud/games/${gameId}`, { token: 'nope' })).body['code']).toBe('API_UNAUTHORIZED');
    const forged = `${cloud.slice(0, -4)}AAAA`;
    expect((await h.call('GET', `/cloud/games/${gameId}`, { token: forged })).status).toBe(401);
    // Any other scheme is ignored, like no header at all.
    expect((await h.call('GET', `/cloud/games/${gameId}`, { headers: { authorization: `Basic ${cloud}` } })).body['message']).toMatch(/No bearer token/);
  });

  it('labels tokens like Rivet and accepts them with or without the label', async () => {
    h = harness();
    const { gameId, cloud, pub } = await h.setup();
    expect(cloud.startsWith('cloud.')).toBe(true);
    expect(pub.startsWith('pub_prod.')).toBe(true);
    const bare = cloud.slice('cloud.'.length);
    expect((await h.call('GET', `/cloud/games/${gameId}`, { token: bare })).status).toBe(200);
  });

  it('403 API_FORBIDDEN for a cloud token of another game; 401 CLAIMS_MISSING_ENTITLEMENT for the wrong kind', async () => {
    h = harness();
    const a = await h.setup(undefined, 'game-a');
    const b = await h.setup(undefined, 'game-b');
    const other = await h.call('GET', `/cloud/games/${b.gameId}`, { token: a.cloud });
    expect(other.status).toBe(403);
    expect(other.body['code']).toBe('API_FORBIDDEN');
    const wrongKind = await h.call('GET', `/cloud/games/${a.gameId}`, { token: a.pub });
    expect(wrongKind.status).toBe(401);
    expect(wrongKind.body).toEqual({ code: 'CLAIMS_MISSING_ENTITLEMENT', message: 'Missing "GameCloud" entitlement.' });
    const create = await h.call('POST', '/cloud/games', { token: a.cloud, body: {} });
    expect(create.status).toBe(403);
  });

  it('CLAIMS_ENTITLEMENT_EXPIRED once a token expires', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    h.clock.set(h.clock.now() + 366 * 24 * 3600 * 1000);
    const r = await h.call('GET', `/cloud/games/${gameId}`, { token: cloud });
    expect(r.status).toBe(401);
    expect(r.body['code']).toBe('CLAIMS_ENTITLEMENT_EXPIRED');
    expect((await h.call('GET', `/cloud/games/${gameId}`, { token: ADMIN })).status).toBe(200);
  });

  it('TOKEN_REVOKED on the next request after a revocation', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    expect((await h.call('GET', `/cloud/games/${gameId}`, { token: cloud })).status).toBe(200);
    await h.catalog.revokeToken(jtiOf(cloud), h.clock.now());
    const r = await h.call('GET', `/cloud/games/${gameId}`, { token: cloud });
    expect(r.status).toBe(403);
    expect(r.body['code']).toBe('TOKEN_REVOKED');
  });

  it('a token signed by one instance works on another sharing the catalog', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    const { TokenIssuer } = await import('../../src/services/tokens.js');
    const other = new TokenIssuer({ catalog: h.catalog, clock: h.clock, random: h.random });
    const verified = await other.verify(cloud);
    expect(verified).toMatchObject({ ok: true, value: { kind: 'cloud', gameId } });
    const fresh = await other.issue({ kind: 'cloud', gameId });
    expect((await h.call('GET', `/cloud/games/${gameId}`, { token: fresh })).status).toBe(200);
  });

  it('generates an admin token once and keeps it in the catalog when none is configured', async () => {
    h = harness();
    const { TokenIssuer } = await import('../../src/services/tokens.js');
    const first = await new TokenIssuer({ catalog: h.catalog, clock: h.clock, random: h.random }).adminToken();
    const second = await new TokenIssuer({ catalog: h.catalog, clock: h.clock, random: h.random }).adminToken();
    expect(first.generated).toBe(true);
    expect(second).toEqual({ token: first.token, generated: false });
    expect(first.token).toMatch(/^tavern_admin_/);
  });
});

describe('origin auth (§4.4)', () => {
  it('admits a tokenless find from a namespace domain while domain public auth is on', async () => {
    h = harness({ readyAfterMs: 0 });
    const { gameId, cloud, nsId } = await h.setup();
    expect((await h.call('POST', `/cloud/games/${gameId}/namespaces/${nsId}/domains`, { token: cloud, body: { domain: 'play.example.com' } })).status).toBe(200);
    const find = () => h.call('POST', '/matchmaker/lobbies/find', { headers: { origin: 'https://play.example.com' }, body: { game_modes: ['default'] } });
    expect((await find()).status).toBe(200);
    const other = await h.call('POST', '/matchmaker/lobbies/find', { headers: { origin: 'https://elsewhere.example.com' }, body: { game_modes: ['default'] } });
    expect(other.status).toBe(401);
    await h.call('PUT', `/cloud/games/${gameId}/namespaces/${nsId}/domain-public-auth`, { token: cloud, body: { enabled: false } });
    expect((await find()).status).toBe(401);
  });

  it('admits the CDN hostnames of the namespace when a CDN domain is configured', async () => {
    h = harness({ readyAfterMs: 0, config: { cdnDomain: 'cdn.tavern.test' } });
    await h.setup();
    const prod = await h.call('POST', '/matchmaker/lobbies/find', { headers: { origin: 'https://my-game.cdn.tavern.test' }, body: { game_modes: ['default'] } });
    expect(prod.status).toBe(200);
    const staging = await h.call('POST', '/matchmaker/lobbies/list', { headers: { origin: 'https://my-game--staging.cdn.tavern.test' } });
    expect(staging.status).toBe(400); // known path, wrong method: the origin resolved
    const list = await h.call('GET', '/matchmaker/lobbies/list', { headers: { origin: 'https://my-game--staging.cdn.tavern.test' } });
    expect(list.status).toBe(200);
  });

  it('statistics needs a token even from a namespace domain', async () => {
    h = harness();
    const { gameId, cloud, nsId } = await h.setup();
    await h.call('POST', `/cloud/games/${gameId}/namespaces/${nsId}/domains`, { token: cloud, body: { domain: 'play.example.com' } });
    const r = await h.call('GET', '/matchmaker/players/statistics', { headers: { origin: 'https://play.example.com' } });
    expect(r.status).toBe(401);
  });
});

describe('client address (§1.2)', () => {
  it('uses cf-connecting-ip, then x-forwarded-for, then the socket address', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup();
    const find = (headers: Record<string, string>, remoteAddress?: string) =>
      h.app.handle(h.request('POST', '/matchmaker/lobbies/find', { token: pub, headers, body: { game_modes: ['default'] } }), remoteAddress === undefined ? {} : { remoteAddress });
    await find({ 'cf-connecting-ip': '198.51.100.1', 'x-forwarded-for': '198.51.100.2' });
    await find({ 'x-forwarded-for': '198.51.100.3, 10.0.0.1' });
    const viaSocket = h.request('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
    viaSocket.headers.delete('x-forwarded-for');
    expect((await h.app.handle(viaSocket, { remoteAddress: '::ffff:198.51.100.4' })).status).toBe(200);
    const all = [...h.store.world.namespaces.values()].flatMap((ns) => [...ns.sources.keys()]);
    expect(all).toEqual(expect.arrayContaining(['198.51.100.1', '198.51.100.3', '198.51.100.4']));
  });

  it('API_MISSING_HEADER without any address, API_INVALID_IP for garbage', async () => {
    h = harness();
    const { pub } = await h.setup();
    const bare = h.request('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
    bare.headers.delete('x-forwarded-for');
    const missing = await h.app.handle(bare);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { code: string }).code).toBe('API_MISSING_HEADER');
    const invalid = await h.call('POST', '/matchmaker/lobbies/find', { token: pub, headers: { 'x-forwarded-for': 'not-an-ip' }, body: { game_modes: ['default'] } });
    expect(invalid.body['code']).toBe('API_INVALID_IP');
  });

  it('ignores proxy headers when told not to trust them', async () => {
    h = harness({ readyAfterMs: 0, config: { trustProxyHeaders: false } });
    const { pub } = await h.setup();
    const res = await h.app.handle(h.request('POST', '/matchmaker/lobbies/find', { token: pub, headers: { 'x-forwarded-for': '198.51.100.9' }, body: { game_modes: ['default'] } }), { remoteAddress: '192.0.2.1' });
    expect(res.status).toBe(200);
    const all = [...h.store.world.namespaces.values()].flatMap((ns) => [...ns.sources.keys()]);
    expect(all).toEqual(['192.0.2.1']);
    expect(str((await h.call('GET', '/health')).body['status'])).toBe('ok');
  });
});
