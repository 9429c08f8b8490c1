/**
 * Whatever a client sends, the edge never answers 5xx (but the runtime/port 503s of the catalog),
 * always answers JSON with a ray id, and error bodies have the §1.5 shape.
 */
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/core/errors.js';
import { ADMIN, harness, settle, str, type Harness } from './harness.js';

let h: Harness;
let ids: { gameId: string; nsId: string; versionId: string; lobbyId: string; buildId: string };
let tokens: string[];

beforeAll(async () => {
  h = harness({ readyAfterMs: 0, demand: true });
  const s = await h.setup();
  const found = await h.call('POST', '/matchmaker/lobbies/find', { token: s.pub, body: { game_modes: ['default'] } });
  const lobbyId = str(found.body['lobby']?.['lobby_id']);
  const dev = str((await h.call('POST', `/cloud/games/${s.gameId}/namespaces/${s.nsId}/tokens/development`, { token: s.cloud, body: { hostname: 'h', ports: { p: { port: 1, protocol: 'tcp' } } } })).body['token']);
  ids = { gameId: s.gameId, nsId: s.nsId, versionId: s.versionId, lobbyId, buildId: s.buildId };
  tokens = [ADMIN, s.cloud, s.pub, dev, h.runtime.startOf(lobbyId)?.env['RIVET_TOKEN'] ?? '', str(found.body['player']?.['token']), 'garbage', 'a.b.c', 'x.a.b.c', ''];
});
afterAll(() => h.cleanup());

const PATHS = [
  '/cloud/games', '/cloud/games/validate', '/cloud/games/{g}', '/cloud/games/{g}/tokens/cloud', '/cloud/auth/inspect', '/cloud/bootstrap',
  '/cloud/games/{g}/namespaces', '/cloud/games/{g}/namespaces/validate', '/cloud/games/{g}/namespaces/{n}', '/cloud/games/{g}/namespaces/{n}/version',
  '/cloud/games/{g}/namespaces/{n}/version-history', '/cloud/games/{g}/namespaces/{n}/mm-config', '/cloud/games/{g}/namespaces/{n}/mm-config/validate',
  '/cloud/games/{g}/namespaces/{n}/domain-public-auth', '/cloud/games/{g}/namespaces/{n}/cdn-auth', '/cloud/games/{g}/namespaces/{n}/domains',
  '/cloud/games/{g}/namespaces/{n}/domains/{s}', '/cloud/games/{g}/namespaces/{n}/tokens/public', '/cloud/games/{g}/namespaces/{n}/tokens/development',
  '/cloud/games/{g}/namespaces/{n}/tokens/development/validate', '/cloud/games/{g}/namespaces/{n}/analytics/matchmaker/live',
  '/cloud/games/{g}/namespaces/{n}/analytics/matchmaker/demand?start={s}&end={s}', '/cloud/games/{g}/namespaces/{n}/analytics/matchmaker/demand/observed?start={s}',
  '/cloud/games/{g}/versions', '/cloud/games/{g}/versions/validate', '/cloud/games/{g}/versions/{v}',
  '/cloud/games/{g}/matchmaker/lobbies/{l}/logs?stream={s}', '/cloud/games/{g}/matchmaker/lobbies/{l}/logs?stream=std_out&watch_index={s}',
  '/cloud/games/{g}/builds', '/cloud/games/{g}/cdn/sites', '/cloud/uploads/{u}/complete', '/uploads/{u}/{s}?part=1&offset=0&length=1&expires=1&signature={s}',
  '/matchmaker/lobbies/find', '/matchmaker/lobbies/join', '/matchmaker/lobbies/create', '/matchmaker/lobbies/ready', '/matchmaker/lobbies/closed',
  '/matchmaker/lobbies/state', '/matchmaker/lobbies/{l}/state', '/matchmaker/lobbies/list?include_state={s}', '/matchmaker/regions',
  '/matchmaker/players/connected', '/matchmaker/players/disconnected', '/matchmaker/players/statistics', '/health', '/{s}', '/cloud/{s}/{s}',
  '/cloud/devices/links', '/cloud/devices/links?device_link_token={s}&watch_index={s}', '/cloud/devices/links/complete',
  '/cloud/games/{g}/matchmaker/lobbies/{l}', '/cloud/games/{g}/matchmaker/lobbies/{u}', '/cloud/games/{g}/matchmaker/lobbies/{l}/closed',
  '/cloud/games/{g}/tokens/revoke', '/cloud/games/{g}/tokens?limit={s}', '/cloud/games/{g}/namespaces/{n}/analytics/matchmaker/history?range={s}',
];

const KEYS = [
  'name_id', 'display_name', 'developer_group_id', 'version_id', 'config', 'matchmaker', 'game_modes', 'regions', 'docker', 'container', 'ports',
  'port', 'protocol', 'proxy', 'port_range', 'min', 'max', 'image_id', 'cdn', 'site_id', 'routes', 'captcha', 'turnstile', 'hcaptcha',
  'client_response', 'verification_data', 'tags', 'max_players', 'game_mode', 'region', 'publicity', 'lobby_config', 'lobby_id', 'is_closed',
  'player_token', 'hostname', 'lobby_ports', 'label', 'target_port', 'proxy_protocol', 'domain', 'enabled', 'auth_type', 'image_tag',
  'image_file', 'path', 'content_length', 'content_type', 'files', 'multipart_upload', 'kind', 'compression', 'lobby_count_max', 'token', 'token_id', '__proto__',
];

const value = fc.letrec((tie) => ({
  json: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 1 }), tie('obj'), fc.array(tie('json'), { maxLength: 3 })),
  obj: fc.dictionary(fc.constantFrom(...KEYS), tie('json'), { maxKeys: 5 }),
})).json;

const segment = fc.oneof(fc.constantFrom('default', 'std_err', 'true', '0', '-1', '%', '%zz', '..', 'ünï', 'a'.repeat(300)), fc.string({ maxLength: 12 }));

const body = fc.oneof(
  value.map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 40 }),
  fc.constantFrom('', '{', 'null', '[]', '"x"', '{"game_modes":["default"]}', '\u0000'),
);

const request = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
  path: fc.constantFrom(...PATHS),
  fills: fc.array(fc.oneof(segment, fc.constant('@id')), { minLength: 8, maxLength: 8 }),
  token: fc.option(fc.nat({ max: 9 }), { nil: undefined }),
  body: fc.option(body, { nil: undefined }),
  headers: fc.dictionary(
    fc.constantFrom('origin', 'x-forwarded-for', 'cf-connecting-ip', 'x-coords', 'content-length', 'host', 'content-type', 'user-agent'),
    fc.oneof(fc.constantFrom('https://play.example.com', '1.2.3.4', '::1', '10,20', 'matchmaker.api.x.y', 'cloud.api.x.y', 'nope'), fc.string({ maxLength: 10 })),
    { maxKeys: 3 },
  ),
});

/** Runs a request to completion, moving the manual clock past long polls and seat waits. */
async function drive(promise: Promise<Response>): Promise<Response> {
  let done: Response | undefined;
  void promise.then((r) => (done = r));
  for (let i = 0; i < 20 && done === undefined; i++) {
    await settle(2);
    if (done === undefined) h.timers.advance(60_000);
  }
  return promise;
}

/** Checks the answer's envelope; fails on a 5xx other than the catalog's runtime/port 503s. */
async function checkResponse(res: Response, what: string): Promise<number> {
  const text = await res.text();
  expect(res.headers.get('rvt-ray-id')).toMatch(/^[0-9a-f-]{36}$/);
  // The demand export answers JSON lines (an empty body for an empty window).
  if (res.status === 200 && res.headers.get('content-type') === 'application/x-ndjson') {
    for (const line of text.split('\n')) if (line !== '') JSON.parse(line);
    return res.status;
  }
  const parsed = JSON.parse(text) as Record<string, unknown> | null;
  if (res.status !== 200) {
    expect(typeof parsed?.['code']).toBe('string');
    expect(typeof parsed?.['message']).toBe('string');
  }
  if (res.status >= 500) expect(ALLOWED_5XX.has(String(parsed?.['code'])), `${what}: ${text}`).toBe(true);
  return res.status;
}

const ALLOWED_5XX = new Set(Object.entries(ERRORS).filter(([code, e]) => e.status >= 500 && code !== 'ERROR').map(([code]) => code));

describe('fuzz', () => {
  it('never answers 5xx for anything a client can send', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        let i = 0;
        const fill = (): string => {
          const f = r.fills[i++ % r.fills.length] ?? '';
          return f === '@id' ? randomUUID() : encodeURIComponent(f);
        };
        const path = r.path
          .replaceAll('{g}', ids.gameId).replaceAll('{n}', ids.nsId).replaceAll('{v}', ids.versionId).replaceAll('{l}', ids.lobbyId)
          .replaceAll('{u}', () => randomUUID()).replaceAll('{s}', fill);
        const headers = new Headers();
        for (const [k, v] of Object.entries(r.headers)) {
          try {
            headers.set(k, v);
          } catch {
            // not a valid header value: a client could not send it either
          }
        }
        if (r.token !== undefined) headers.set('authorization', `Bearer ${tokens[r.token] ?? ''}`);
        const hasBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'OPTIONS';
        let req: Request;
        try {
          req = new Request(`http://tavern.test${path}`, { method: r.method, headers, ...(hasBody && r.body !== undefined ? { body: r.body } : {}) });
        } catch {
          return; // not a request a client could send
        }
        await checkResponse(await drive(h.app.handle(req, { remoteAddress: '192.0.2.9' })), `${r.method} ${path}`);
      }),
      { numRuns: Number(process.env['FC_NUM_RUNS'] ?? 300) },
    );
  }, 120_000);
});

/** Token indexes in `tokens`. */
const T = { admin: 0, cloud: 1, pub: 2, dev: 3, lobby: 4 } as const;

/** Every body-taking route with a valid body to mutate. */
const routes = (): [string, string, number, unknown][] => {
  const g = `/cloud/games/${ids.gameId}`;
  const n = `${g}/namespaces/${ids.nsId}`;
  return [
    ['POST', '/cloud/games', T.admin, { name_id: 'fuzz', display_name: 'Fuzz', developer_group_id: randomUUID() }],
    ['POST', `${g}/versions`, T.cloud, {
      display_name: 'fuzz', config: {
        cdn: { site_id: randomUUID(), routes: [{ glob: '*', priority: 1, middlewares: [{ kind: { custom_headers: { headers: [{ name: 'a', value: 'b' }] } } }] }] },
        matchmaker: {
          regions: { local: { idle_lobbies: { min: 0, max: 1 } } }, captcha: { requests_before_reverify: 1, verification_ttl: 1, turnstile: { site_key: 'a', secret_key: 'b' } },
          docker: { image_id: ids.buildId, env: { A: 'b' }, args: ['x'], ports: { p: { port: 1, protocol: 'udp' }, r: { port_range: { min: 26000, max: 26001 }, protocol: 'tcp', proxy: 'none' } } },
          game_modes: { default: { actions: { find: { enabled: true, verification: { url: 'https://v.example.com', headers: {} } } } } },
        },
      },
    }],
    ['POST', `${g}/versions/validate`, T.cloud, { display_name: 'x', config: { matchmaker: { game_modes: { a: {} } } } }],
    ['POST', `${g}/namespaces`, T.cloud, { display_name: 'N', name_id: 'fuzz', version_id: ids.versionId }],
    ['PUT', `${n}/version`, T.cloud, { version_id: ids.versionId }],
    ['POST', `${n}/mm-config`, T.cloud, { lobby_count_max: 10, max_players: 8 }],
    ['POST', `${n}/domains`, T.cloud, { domain: 'fuzz.example.com' }],
    ['POST', `${n}/tokens/development`, T.cloud, { hostname: 'h', ports: { a: { port: 1, protocol: 'udp' } } }],
    ['POST', `${n}/tokens/development/validate`, T.cloud, { hostname: 'h', lobby_ports: [{ label: 'a', target_port: 1, proxy_protocol: 'udp' }] }],
    ['POST', `${g}/builds`, T.cloud, { display_name: 'b', image_tag: 'a:b', image_file: { path: 'x', content_length: 1 }, multipart_upload: false }],
    ['POST', `${g}/cdn/sites`, T.cloud, { display_name: 'b', files: [{ path: 'index.html', content_length: 1, content_type: 'text/html' }] }],
    ['POST', '/cloud/devices/links/complete', T.cloud, { device_link_token: 'device_link.x', game_id: ids.gameId }],
    ['POST', '/matchmaker/lobbies/find', T.pub, { game_modes: ['default'], regions: ['local'], tags: {}, max_players: 2, captcha: { turnstile: { client_response: 'x' } }, verification_data: null }],
    ['POST', '/matchmaker/lobbies/join', T.pub, { lobby_id: ids.lobbyId }],
    ['POST', '/matchmaker/lobbies/create', T.pub, { game_mode: 'custom', region: 'local', publicity: 'private', tags: { a: 'b' }, lobby_config: {} }],
    ['PUT', '/matchmaker/lobbies/closed', T.lobby, { is_closed: true }],
    ['PUT', '/matchmaker/lobbies/state', T.lobby, { any: 1 }],
    ['POST', '/matchmaker/players/connected', T.lobby, { player_token: tokens[5] }],
    ['POST', '/matchmaker/players/disconnected', T.lobby, { player_token: tokens[5] }],
  ];
};

type Edit = { readonly path: readonly number[]; readonly value: unknown };

/** Replaces (or, with `undefined`, deletes) the member found by walking `path` (indexes modulo the keys). */
function mutate(base: unknown, edit: Edit): unknown {
  const copy = structuredClone<unknown>(base);
  let node = copy;
  for (let i = 0; i < edit.path.length; i++) {
    if (typeof node !== 'object' || node === null) return copy;
    const keys = Object.keys(node);
    if (keys.length === 0) return copy;
    const key = keys[(edit.path[i] ?? 0) % keys.length] as string;
    const record = node as Record<string, unknown>;
    if (i === edit.path.length - 1) {
      if (edit.value === undefined) delete record[key];
      else record[key] = edit.value;
      return copy;
    }
    node = record[key];
  }
  return copy;
}

const edit = fc.record({
  path: fc.array(fc.nat({ max: 12 }), { minLength: 1, maxLength: 7 }),
  value: fc.option(value, { nil: undefined }),
});

describe('fuzz (mutated valid bodies)', () => {
  it('never answers 5xx for mutations of valid requests', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 1000 }), fc.array(edit, { minLength: 1, maxLength: 3 }), fc.boolean(), async (which, edits, asDev) => {
        const list = routes();
        const [method, path, tokenIndex, base] = list[which % list.length] as [string, string, number, unknown];
        const bodyValue = edits.reduce(mutate, base);
        const token = asDev && path.startsWith('/matchmaker') ? tokens[T.dev] : tokens[tokenIndex];
        const req = h.request(method, path, { ...(token === undefined ? {} : { token }), body: bodyValue });
        const status = await checkResponse(await drive(h.app.handle(req)), `${method} ${path} ${JSON.stringify(bodyValue)}`);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }),
      { numRuns: Number(process.env['FC_NUM_RUNS'] ?? 300) },
    );
    // The mutations reach the services, not only the validators.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(10);
  }, 120_000);
});
