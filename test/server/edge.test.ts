/** The request lifecycle: routing, bodies, error bodies, ray ids, CORS, both URL styles, 500s. */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryCatalogStore } from '../../src/adapters/memory/catalog.js';
import { MemoryMatchStore } from '../../src/adapters/memory/match-store.js';
import { createWorld } from '../../src/core/world.js';
import { createApp } from '../../src/server/app.js';
import { Matchmaker } from '../../src/services/matchmaker.js';
import { ADMIN, harness, ORIGIN, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

const G = '6f1d2b8e-0d5f-4f0b-9a57-1f2a3b4c5d6e';

describe('routing', () => {
  it('answers an unknown route with 404 API_NOT_FOUND and the §1.5 body', async () => {
    h = harness();
    const r = await h.call('GET', '/cloud/nothing');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ code: 'API_NOT_FOUND', message: 'No route matches GET /cloud/nothing.' });
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('answers a UUID-typed segment that does not parse with 404', async () => {
    h = harness();
    expect((await h.call('GET', '/cloud/games/123', { token: ADMIN })).body['code']).toBe('API_NOT_FOUND');
  });

  it('answers a known path with the wrong method with 400 API_METHOD_NOT_ALLOWED', async () => {
    h = harness();
    const r = await h.call('DELETE', `/cloud/games/${G}`, { token: ADMIN });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('API_METHOD_NOT_ALLOWED');
  });

  it('puts a fresh rvt-ray-id on every response', async () => {
    h = harness();
    const a = await h.call('GET', '/health');
    const b = await h.call('GET', '/nothing');
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ status: 'ok' });
    expect(a.headers.get('rvt-ray-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.headers.get('rvt-ray-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers.get('rvt-ray-id')).not.toBe(b.headers.get('rvt-ray-id'));
  });

  it('accepts the deprecated host-per-service form (matchmaker.api.<domain>/v1/...)', async () => {
    h = harness();
    const r = await h.call('POST', 'http://matchmaker.api.tavern.test/v1/lobbies/find', { body: { game_modes: ['x'] } });
    expect(r.status).toBe(401);
    expect(r.body['code']).toBe('CLAIMS_MISSING_ENTITLEMENT');
    const cloud = await h.call('GET', 'http://cloud.api.tavern.test/v1/bootstrap');
    expect(cloud.body).toEqual({ cluster: 'oss', captcha: {} });
  });
});

describe('bodies', () => {
  it('treats an empty body as {} (and tolerates Content-Type on bodiless calls)', async () => {
    h = harness();
    const r = await h.call('POST', '/cloud/games', { token: ADMIN, raw: '' });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('VALIDATION_ERROR');
    expect(r.body['metadata']?.['errors']).toEqual([
      { path: ['name-id', 'missing'] }, { path: ['display-name', 'missing'] }, { path: ['developer_group_id', 'missing'] },
    ]);
  });

  it('answers malformed JSON with 400 API_BAD_BODY', async () => {
    h = harness();
    const r = await h.call('POST', '/cloud/games', { token: ADMIN, raw: '{"name_id":' });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('API_BAD_BODY');
    const bad = await h.call('POST', '/cloud/games', { token: ADMIN, raw: new Uint8Array([0x7b, 0xff, 0x7d]) });
    expect(bad.body['code']).toBe('API_BAD_BODY');
  });

  it('answers a non-object body with VALIDATION_ERROR', async () => {
    h = harness();
    const r = await h.call('POST', '/cloud/games', { token: ADMIN, body: [1, 2] });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('VALIDATION_ERROR');
  });

  it('caps JSON bodies at 1 MiB with 413 API_BODY_TOO_LARGE', async () => {
    h = harness();
    const big = JSON.stringify({ name_id: 'x'.repeat(1024 * 1024) });
    const r = await h.call('POST', '/cloud/games', { token: ADMIN, raw: big });
    expect(r.status).toBe(413);
    expect(r.body['code']).toBe('API_BODY_TOO_LARGE');
    // Without a Content-Length (a stream), the cap still holds.
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 20; i++) c.enqueue(new Uint8Array(100_000).fill(0x20));
        c.close();
      },
    });
    const res = await h.app.handle(new Request(`${ORIGIN}/cloud/games`, { method: 'POST', body: stream, headers: { authorization: `Bearer ${ADMIN}` }, duplex: 'half' }));
    expect(res.status).toBe(413);
  });

  it('ignores unknown keys and treats null optionals as absent', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup();
    const r = await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'], regions: null, tags: null, unknown: { deep: true } } });
    expect(r.status).toBe(200);
  });

  it('lists the path of every bad field', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup();
    const r = await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['a', 3], regions: 'x', max_players: 'many', captcha: { turnstile: {} } } });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('VALIDATION_ERROR');
    expect(r.body['message']).toBe('did not pass validation: game_modes.1.invalid-type, regions.invalid-type, max_players.invalid-type, captcha.turnstile.client_response.missing');
  });
});

describe('CORS (§1.6)', () => {
  it('echoes any Origin on the matchmaker, without credentials (bearer auth only), and exposes the ray id', async () => {
    h = harness();
    const r = await h.call('POST', '/matchmaker/lobbies/find', { headers: { origin: 'https://game.example' }, body: {} });
    expect(r.headers.get('access-control-allow-origin')).toBe('https://game.example');
    expect(r.headers.get('access-control-allow-credentials')).toBeNull();
    expect(r.headers.get('access-control-expose-headers')).toBe('rvt-ray-id');
    const preflight = await h.call('OPTIONS', '/matchmaker/lobbies/find', { headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://evil.example');
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('answers a preflight with the methods of the path', async () => {
    h = harness();
    const r = await h.call('OPTIONS', '/matchmaker/lobbies/closed', { headers: { origin: 'https://game.example' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-methods')).toBe('PUT, OPTIONS');
    expect(r.headers.get('access-control-allow-headers')).toBe('Content-Type, Authorization');
    expect(r.headers.get('access-control-max-age')).toBe('3600');
    expect((await h.call('OPTIONS', '/nothing')).status).toBe(404);
  });

  it('refuses browser origins on /cloud unless they match the hub origins', async () => {
    h = harness({ config: { hubOrigins: /^https:\/\/hub\.example$/ } });
    const denied = await h.call('GET', '/cloud/bootstrap', { headers: { origin: 'https://evil.example' } });
    expect(denied.status).toBe(400);
    expect(denied.body['code']).toBe('API_CORS_ORIGIN_NOT_ALLOWED');
    const allowed = await h.call('GET', '/cloud/bootstrap', { headers: { origin: 'https://hub.example' } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://hub.example');
    expect((await h.call('GET', '/cloud/bootstrap')).status).toBe(200);
  });
});

describe('security headers (outside probe)', () => {
  const SECURITY = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };
  const securityOf = (headers: Headers) => Object.fromEntries(Object.keys(SECURITY).map((name) => [name, headers.get(name)]));

  it('every answer says nosniff, no-store and no-referrer: successes, refusals, preflights, and those carrying tokens', async () => {
    h = harness({ readyAfterMs: 0 });
    const { gameId, nsId, pub } = await h.setup();
    const answers = [
      await h.call('GET', '/health'),
      await h.call('GET', '/nothing'),
      await h.call('OPTIONS', '/matchmaker/lobbies/find', { headers: { origin: 'https://game.example' } }),
      await h.call('DELETE', `/cloud/games/${G}`, { token: ADMIN }),
      await h.call('GET', `/cloud/games/${gameId}`),
      await h.call('POST', '/cloud/games', { token: ADMIN, raw: '{' }),
      // Answers carrying a token or a secret: a public token, a player token, a device link.
      await h.call('POST', `/cloud/games/${gameId}/namespaces/${nsId}/tokens/public`, { token: ADMIN }),
      await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } }),
      await h.call('POST', '/cloud/devices/links'),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 404, 200, 400, 401, 400, 200, 200, 200]);
    for (const a of answers) expect(securityOf(a.headers)).toEqual(SECURITY);
  });

  it('the 500 answer too', async () => {
    h = harness();
    h.catalog.listGames = () => Promise.reject(new Error('disk on fire'));
    const r = await h.call('GET', '/cloud/games', { token: ADMIN });
    expect(r.status).toBe(500);
    expect(securityOf(r.headers)).toEqual(SECURITY);
  });
});

describe('unexpected failures', () => {
  it('answers 500 ERROR with the ray id, and logs it', async () => {
    const catalog = new MemoryCatalogStore();
    catalog.getGame = () => Promise.reject(new Error('disk on fire'));
    const clock = { now: () => 0 };
    const random = { uuid: () => crypto.randomUUID(), u32: () => 1 };
    const store = new MemoryMatchStore(createWorld());
    const matchmaker = new Matchmaker({
      store, clock, random, verifier: { verify: () => Promise.resolve({ kind: 'status', status: 200 }) },
      captcha: { verify: () => Promise.resolve({ success: true }) },
      routes: { bind: () => Promise.resolve(), unbind: () => Promise.resolve() }, logs: { append: () => Promise.resolve() },
    });
    const logged: object[] = [];
    const app = createApp({
      catalog, matchmaker, clock, random, timers: { after: () => () => undefined }, regions: createWorld().regions,
      config: { publicOrigin: ORIGIN, adminToken: ADMIN },
      logger: { info: () => undefined, warn: () => undefined, error: (o) => logged.push(o) },
    });
    const res = await app.handle(new Request(`${ORIGIN}/cloud/games/${G}`, { headers: { authorization: `Bearer ${ADMIN}` } }));
    expect(res.status).toBe(500);
    const ray = res.headers.get('rvt-ray-id');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body['code']).toBe('ERROR');
    expect(body['message']).toBe(`An internal error has occurred (ray_id ${ray}).`);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ rayId: ray });
    h = harness();
  });
});
