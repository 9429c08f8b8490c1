/**
 * CDN basic auth cannot pin the server's core: in the real server process, the API's `/health`
 * p99 under 50 concurrent wrong-password CDN requests (waves of 50, every request from its own
 * client address, a cost-10 hash) stays within twice its idle p99, both measured here, in this
 * run, in alternating phases (the bound issue 36 asks for: a ratio, not a wall time). The password checks run on a
 * worker thread at the lowest CPU priority, behind a bounded queue (503 past it).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, field, getWithHost, ok, startServer, type Server } from './process.js';

const ADMIN = 'cdn-auth-process-admin';
const HOST = 'locked.cdn.test';
const PROBES = 300;
const ROUNDS = 4;
let server: Server;
let dir: string;
// Idle sockets closed after 2 s, before the server's keep-alive timeout (5 s) can close one under a request.
const agent = new Agent({ keepAlive: true, timeout: 2_000, maxSockets: 64 });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tavern-cdn-auth-'));
  server = await startServer('cdn-auth', {
    TAVERN_PORT: '0', TAVERN_DATA_DIR: dir, TAVERN_ADMIN_TOKEN: ADMIN, TAVERN_RUNTIME: 'fake', TAVERN_TRUST_PROXY: 'true',
    TAVERN_CDN_PORT: '0', TAVERN_CDN_DOMAIN: 'cdn.test',
  });
}, 90_000);

afterAll(async () => {
  agent.destroy();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

/** A site behind basic auth (alice, a cost-10 hash) on `locked.cdn.test`. */
async function lockedSite(o: string): Promise<void> {
  const gameId = field(ok('game', await api(o, 'POST', '/cloud/games', { token: ADMIN, body: { name_id: 'locked', display_name: 'Locked', developer_group_id: randomUUID() } })), 'game_id');
  const site = ok('site', await api(o, 'POST', `/cloud/games/${gameId}/cdn/sites`, { token: ADMIN, body: { display_name: 'Site', files: [{ path: 'index.html', content_length: 5 }] } }));
  const [put] = site['presigned_requests'] as { url: string }[];
  expect((await fetch(put?.url ?? '', { method: 'PUT', body: 'hello' })).status).toBe(200);
  ok('complete', await api(o, 'POST', `/cloud/uploads/${field(site, 'upload_id')}/complete`, { token: ADMIN }));
  const versionId = field(ok('version', await api(o, 'POST', `/cloud/games/${gameId}/versions`, { token: ADMIN, body: { display_name: 'v1', config: { cdn: { site_id: field(site, 'site_id') } } } })), 'version_id');
  const game = ok('get game', await api(o, 'GET', `/cloud/games/${gameId}`, { token: ADMIN }))['game'] as { namespaces: { name_id: string; namespace_id: string }[] };
  const ns = `/cloud/games/${gameId}/namespaces/${game.namespaces.find((n) => n.name_id === 'prod')?.namespace_id ?? ''}`;
  ok('publish', await api(o, 'PUT', `${ns}/version`, { token: ADMIN, body: { version_id: versionId } }));
  ok('user', await api(o, 'POST', `${ns}/auth-user`, { token: ADMIN, body: { user: 'alice', password: await bcrypt.hash('right', 10) } }));
  ok('auth', await api(o, 'PUT', `${ns}/cdn-auth`, { token: ADMIN, body: { auth_type: 'basic' } }));
}

/** One GET of `url` with `headers`; its status once the body was read. */
const get = (url: string, headers: Record<string, string>): Promise<number> =>
  new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject).end();
  });
const cdnGet = (origin: string, headers: Record<string, string>): Promise<number> => get(`${origin}/`, { host: HOST, ...headers });

/**
 * `count` sequential `/health` calls (fewer if they take more than `budgetMs` in all): their
 * latencies (ms; a failed call counts as infinitely slow), sorted.
 */
async function probe(origin: string, count: number, budgetMs = 30_000): Promise<number[]> {
  const times: number[] = [];
  const end = performance.now() + budgetMs;
  for (let i = 0; i < count && performance.now() < end; i++) {
    const start = performance.now();
    const status = await get(`${origin}/health`, {}).catch(() => 0);
    times.push(status === 200 ? performance.now() - start : Number.POSITIVE_INFINITY);
  }
  return times.sort((a, b) => a - b);
}
const p99 = (sorted: readonly number[]): number => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? NaN;

describe('CDN basic auth under wrong-password load', () => {
  it("keeps /health's p99 within 2x of its idle p99 under 50 concurrent wrong-password requests", async () => {
    const cdn = String(server.listening['cdnOrigin']);
    await lockedSite(server.origin);
    const right = `Basic ${Buffer.from('alice:right').toString('base64')}`;
    expect(await cdnGet(cdn, { authorization: right })).toBe(200);

    const statuses = new Map<number, number>();
    let client = 0;
    const wave = (): Promise<unknown> => Promise.all(Array.from({ length: 50 }, async () => {
      client += 1;
      const headers = { authorization: `Basic ${Buffer.from(`alice:wrong-${client}`).toString('base64')}`, 'x-forwarded-for': `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client & 255}` };
      const status = await cdnGet(cdn, headers).catch(() => 0);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }));
    /** Probes while waves of 50 wrong-password requests follow one another; returns once the last wave ended. */
    const answered = (): number => [...statuses.values()].reduce((a, b) => a + b, 0);
    const underLoad = async (): Promise<number[]> => {
      const before = answered();
      let stop = false;
      const load = (async () => {
        for (let i = 0; i < 1_000 && !stop; i++) await wave();
      })();
      // The load is on once the wave's first answers came back (503 at once, 401 as checks end).
      for (let i = 0; i < 1_000 && answered() === before; i++) await probe(server.origin, 1);
      const times = await probe(server.origin, PROBES, 10_000);
      stop = true;
      await load;
      return times;
    };

    // Idle and loaded phases alternate, so the machine's own drift falls on both alike.
    await probe(server.origin, 50);
    const idle: number[] = [];
    const loaded: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      idle.push(...(await probe(server.origin, PROBES)));
      loaded.push(...(await underLoad()));
    }
    idle.sort((a, b) => a - b);
    loaded.sort((a, b) => a - b);

    const summary = `idle p99 ${p99(idle).toFixed(2)} ms, loaded p99 ${p99(loaded).toFixed(2)} ms (${ROUNDS} rounds of ${PROBES}), answers ${JSON.stringify([...statuses])}`;
    expect(statuses.get(401) ?? 0, summary).toBeGreaterThan(0);
    expect([...statuses.keys()].every((s) => s === 401 || s === 503), summary).toBe(true);
    expect(p99(loaded), summary).toBeLessThanOrEqual(2 * p99(idle));
    // The right password still gets in (memoized: no check).
    expect(await getWithHost(cdn, HOST, '/').then((r) => r.status)).toBe(401);
    expect(await cdnGet(cdn, { authorization: right })).toBe(200);
  }, 120_000);
});
