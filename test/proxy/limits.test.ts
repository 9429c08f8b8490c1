/**
 * Game Guard's per-address limits on the real data plane: the rate limit (burst + average per
 * period, then 429), at most N requests in flight (a held WebSocket counts), and a slowloris
 * client cut at the header timeout. Limit hits are counted on the route.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ProxyLimits } from '../../src/adapters/haproxy/config.js';
import { HaproxyGameProxy } from '../../src/adapters/haproxy/proxy.js';
import type { ProxyRoute } from '../../src/core/effects.js';
import { describeNeeding } from '../needs.js';
import { eventually } from '../wait.js';
import { freePort, get, HAPROXY, haproxyProblem, NEED, OPEN_LIMITS, openWebSocket, QUIET, startUpstream } from './helpers.js';

const HOST = 'lobby-l-default.lobby.local.example.test';

describeNeeding(NEED, 'game proxy limits (HAProxy)', haproxyProblem(), () => {
  const dirs: string[] = [];
  const proxies: HaproxyGameProxy[] = [];
  let upstream: ChildProcess;
  let up: number;

  const start = async (limits: ProxyLimits): Promise<{ proxy: HaproxyGameProxy; port: number }> => {
    const dir = mkdtempSync(join(tmpdir(), 'tavern-proxy-limits-'));
    dirs.push(dir);
    const port = await freePort();
    const proxy = await HaproxyGameProxy.start({ binary: HAPROXY, dir, host: '127.0.0.1', httpPort: port, jobDomain: 'example.test', upstreamHost: '127.0.0.1', limits, log: QUIET });
    proxies.push(proxy);
    const route: ProxyRoute = { lobbyId: 'lobby-l', region: 'local', label: 'default', protocol: 'http', publicPort: 80, hostPort: up };
    await proxy.bind(route);
    return { proxy, port };
  };

  beforeAll(async () => {
    up = await freePort();
    upstream = await startUpstream([up]);
  });

  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.close()));
    upstream?.kill();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('rate limit: burst + average requests in a period pass, the next is 429 with a short body, counted on the route', async () => {
    const { proxy, port } = await start({ ...OPEN_LIMITS, rate: { average: 4, periodMs: 60_000, burst: 6 } });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await get(port, HOST, '/')).status);
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429, 429]);
    const refused = await get(port, HOST, '/');
    expect(refused).toMatchObject({ status: 429, body: 'too many requests from this address' });
    const stats = (await proxy.routeStats()).find((s) => s.hostname === HOST);
    expect(stats).toMatchObject({ requests: 13, limited: 3 });
    expect((await proxy.listenerStats()).find((l) => l.listener === 'http')?.denied).toBe(3);
  });

  it('in-flight limit: 4 requests at once pass, a 5th is 429; a held WebSocket counts until it closes', async () => {
    const { port } = await start({ ...OPEN_LIMITS, inFlight: 4 });
    // Four requests the lobby holds until told (asked of it directly, not through the proxy).
    const held = Array.from({ length: 4 }, () => get(port, HOST, '/hold'));
    await eventually('the lobby to hold 4 requests', async () => (await get(up, 'x', '/held')).body.trim() === '4');
    const fifth = await get(port, HOST, '/');
    expect((await get(up, 'x', '/release')).body).toBe('released\n');
    const answers = await Promise.all(held);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(fifth.status).toBe(429);
    expect((await get(port, HOST, '/')).status).toBe(200);

    const sockets = await Promise.all(Array.from({ length: 4 }, () => openWebSocket(port, HOST)));
    expect((await get(port, HOST, '/')).status).toBe(429);
    sockets[0]!.socket.destroy();
    // Once HAProxy has seen that connection close, a request passes again.
    await eventually('a request to pass once a WebSocket closed', async () => (await get(port, HOST, '/')).status === 200, { timeoutMs: 5_000, everyMs: 20 });
    for (const s of sockets) s.socket.destroy();
  });

  it('slowloris: a client dripping header lines is answered 408 and cut at the header timeout', async () => {
    const { port } = await start({ ...OPEN_LIMITS, headerTimeoutMs: 1_000 });
    const socket = connect(port, '127.0.0.1');
    let said = '';
    socket.on('data', (c: Buffer) => (said += c.toString()));
    const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
    socket.write(`GET / HTTP/1.1\r\nHost: ${HOST}\r\n`);
    let drips = 0;
    const drip = setInterval(() => {
      drips += 1;
      if (!socket.destroyed) socket.write(`X-Drip-${drips}: 1\r\n`);
    }, 200);
    // Dripping forever would keep a connection without a header timeout open: give up after 10 s.
    const cut = await Promise.race([closed, new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
    clearInterval(drip);
    socket.destroy();
    expect(cut).toBe(true);
    expect(said).toMatch(/^HTTP\/1\.1 408/);
    expect(drips).toBeLessThan(20);
  }, 15_000);
});
