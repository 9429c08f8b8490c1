/**
 * The game proxy's data plane (a real HAProxy) against upstream processes: routing by Host and by
 * the path form, WebSocket pass-through, unknown hosts, route removal, restart after a crash, and
 * 1,000 binds/unbinds while traffic flows to one lobby.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HaproxyGameProxy } from '../../src/adapters/haproxy/proxy.js';
import type { ProxyRoute } from '../../src/core/effects.js';
import { describeNeeding } from '../needs.js';
import { eventually } from '../wait.js';
import { echo, freePort, get, HAPROXY, haproxyProblem, NEED, OPEN_LIMITS, openWebSocket, QUIET, startUpstream } from './helpers.js';

const DOMAIN = 'example.test';
const route = (lobbyId: string, hostPort: number, label = 'default', protocol: ProxyRoute['protocol'] = 'http'): ProxyRoute =>
  ({ lobbyId, region: 'local', label, protocol, publicPort: 80, hostPort });

describeNeeding(NEED, 'game proxy routing (HAProxy)', haproxyProblem(), () => {
  let dir: string;
  let proxy: HaproxyGameProxy;
  let upstream: ChildProcess;
  let port: number;
  let up: number[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tavern-proxy-'));
    port = await freePort();
    up = [await freePort(), await freePort(), await freePort()];
    upstream = await startUpstream(up);
    proxy = await HaproxyGameProxy.start({ binary: HAPROXY, dir, host: '127.0.0.1', httpPort: port, jobDomain: DOMAIN, upstreamHost: '127.0.0.1', limits: OPEN_LIMITS, log: QUIET });
  });

  afterAll(async () => {
    await proxy?.close();
    upstream?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('routes by Host to the bound lobby (case and port in Host ignored), and by the path form with the prefix stripped', async () => {
    await proxy.bind(route('lobby-a', up[0]!));
    await proxy.bind(route('lobby-b', up[1]!));
    const a = await get(port, 'lobby-a-default.lobby.local.example.test', '/hello?x=1');
    expect(a.status).toBe(200);
    expect(a.body).toMatch(new RegExp(`^up-${up[0]} GET /hello\\?x=1 host=lobby-a-default.lobby.local.example.test xff=127.0.0.1`));
    expect((await get(port, 'LOBBY-B-default.lobby.local.example.test:80', '/')).body).toMatch(new RegExp(`^up-${up[1]} GET / `));
    expect((await get(port, 'lobby.example.test', '/local/lobby-b-default/x/y?z=2')).body).toMatch(new RegExp(`^up-${up[1]} GET /x/y\\?z=2 `));
    expect((await get(port, 'lobby.example.test', '/local/lobby-a-default')).body).toMatch(new RegExp(`^up-${up[0]} GET / `));
  });

  it('answers 404 with a short body for an unknown host, another label, another region or a bare path, never another lobby', async () => {
    await proxy.bind(route('lobby-a', up[0]!));
    for (const [host, path] of [
      ['nobody-default.lobby.local.example.test', '/'],
      ['lobby-a-other.lobby.local.example.test', '/'],
      ['lobby-a-default.lobby.elsewhere.example.test', '/'],
      ['lobby-a-default.lobby.local.example.test.evil.test', '/'],
      ['lobby.example.test', '/'],
      ['lobby.example.test', '/elsewhere/lobby-a-default/'],
      ['127.0.0.1', '/'],
    ] as const) {
      const answer = await get(port, host, path);
      expect({ host, path, status: answer.status, body: answer.body }).toEqual({ host, path, status: 404, body: 'no lobby at this address' });
    }
  });

  it('refuses a path-form request with a dot segment (raw or escaped) with 400; the lobby never sees it', async () => {
    await proxy.bind(route('lobby-a', up[0]!));
    for (const path of [
      '/local/lobby-a-default/../x', '/local/lobby-a-default/..', '/local/lobby-a-default/.', '/local/lobby-a-default/a/./b',
      '/local/lobby-a-default/%2e%2e/x', '/local/lobby-a-default/%2E./x', '/local/lobby-a-default/.%2e', '/local/lobby-a-default/%2e',
      '/local/lobby-a-default/..%2fx', '/local/lobby-a-default/x%5C..%5cy', '/local/lobby-a-default/x\\..\\y',
      '/local/../local/lobby-a-default/', '/../local/lobby-a-default/x?y=1',
    ]) {
      const answer = await get(port, 'lobby.example.test', path);
      expect({ path, status: answer.status, body: answer.body }).toEqual({ path, status: 400, body: 'a lobby path may not have a . or .. segment' });
    }
    // Dots inside a segment are a name, and the host form hands any path on as sent.
    expect((await get(port, 'lobby.example.test', '/local/lobby-a-default/.well-known/a..b/c.')).body).toMatch(new RegExp(`^up-${up[0]} GET /.well-known/a..b/c. `));
    expect((await get(port, 'lobby-a-default.lobby.local.example.test', '/x/../y')).body).toMatch(new RegExp(`^up-${up[0]} GET /x/../y `));
  });

  it('passes a WebSocket upgrade through and keeps it open while other routes change', async () => {
    await proxy.bind(route('lobby-ws', up[2]!));
    const { socket, head } = await openWebSocket(port, 'lobby-ws-default.lobby.local.example.test');
    expect(head).toMatch(/^HTTP\/1\.1 101/);
    expect(await echo(socket, 'hello')).toBe('hello');
    for (let i = 0; i < 50; i++) await proxy.bind(route(`other-${i}`, up[0]!));
    for (let i = 0; i < 50; i++) await proxy.unbind(route(`other-${i}`, up[0]!));
    expect(await echo(socket, 'still here')).toBe('still here');
    socket.destroy();
  });

  it('removes a route: the next request is 404 and the same hostname can be bound to another port', async () => {
    const r = route('lobby-gone', up[0]!);
    await proxy.bind(r);
    expect((await get(port, 'lobby-gone-default.lobby.local.example.test')).status).toBe(200);
    await proxy.unbind(r);
    expect((await get(port, 'lobby-gone-default.lobby.local.example.test')).status).toBe(404);
    await proxy.bind(route('lobby-gone', up[1]!));
    expect((await get(port, 'lobby-gone-default.lobby.local.example.test')).body).toMatch(new RegExp(`^up-${up[1]} `));
  });

  it('logs a route removed on purpose (a lobby stopping) as no error: HAProxy\'s "no server available" alert for its slot is Tavern\'s own doing', async () => {
    const said: { level: string; line: string }[] = [];
    const record = (level: string) => (obj: object): void => void said.push({ level, line: (obj as { haproxy?: string }).haproxy ?? '' });
    const own = await HaproxyGameProxy.start({
      binary: HAPROXY, dir: mkdtempSync(join(dir, 'own-')), host: '127.0.0.1', httpPort: await freePort(), jobDomain: DOMAIN, upstreamHost: '127.0.0.1',
      limits: OPEN_LIMITS, log: { info: record('info'), warn: record('warn'), error: record('error') },
    });
    try {
      const r = route('lobby-stopping', up[0]!);
      await own.bind(r);
      await own.unbind(r);
      const deadline = Date.now() + 10_000;
      while (!said.some((s) => s.line.includes('has no server available')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(said.filter((s) => s.line.includes('has no server available')).map((s) => s.level)).toContain('info');
      expect(said.filter((s) => s.level === 'error' || s.level === 'warn')).toEqual([]);
    } finally {
      await own.close();
    }
  });

  it('serves an https route only on HTTPS: without TLS its hostname is 404 on HTTP', async () => {
    await proxy.bind(route('lobby-tls', up[0]!, 'secure', 'https'));
    expect((await get(port, 'lobby-tls-secure.lobby.local.example.test')).status).toBe(404);
  });

  it('1,000 binds and unbinds of other lobbies while traffic flows to one lobby: 0 failed requests', async () => {
    await proxy.bind(route('lobby-steady', up[0]!));
    let stop = false;
    let ok = 0;
    const failures: string[] = [];
    const client = async (): Promise<void> => {
      while (!stop) {
        try {
          const a = await get(port, 'lobby-steady-default.lobby.local.example.test', '/steady', undefined);
          if (a.status === 200 && a.body.startsWith(`up-${up[0]} `)) ok += 1;
          else failures.push(`${a.status} ${a.body}`);
        } catch (error) {
          failures.push(String(error));
        }
      }
    };
    const clients = Array.from({ length: 4 }, client);
    const churn = async (): Promise<void> => {
      for (let i = 0; i < 500; i++) {
        const r = route(`churn-${i}`, up[1]!);
        await proxy.bind(r);
        await proxy.unbind(r);
      }
    };
    await Promise.all([churn(), churn().then(() => undefined)]);
    stop = true;
    await Promise.all(clients);
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(100);
  });

  it('keeps connections to each lobby alive: 400 requests over 4 client connections to two lobbies open a handful of lobby connections', async () => {
    await proxy.bind(route('lobby-keep-1', up[1]!));
    await proxy.bind(route('lobby-keep-2', up[2]!));
    const before = await Promise.all([1, 2].map(async (i) => Number((await get(up[i]!, 'x', '/connections')).body)));
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    const hit = (host: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/', headers: { host }, agent }, (res) => res.resume().on('end', () => resolve(res.statusCode ?? 0)));
        req.on('error', reject).end();
      });
    for (let i = 0; i < 100; i++) {
      const statuses = await Promise.all([hit('lobby-keep-1-default.lobby.local.example.test'), hit('lobby-keep-2-default.lobby.local.example.test'), hit('lobby-keep-1-default.lobby.local.example.test'), hit('lobby-keep-2-default.lobby.local.example.test')]);
      expect(statuses).toEqual([200, 200, 200, 200]);
    }
    agent.destroy();
    const after = await Promise.all([1, 2].map(async (i) => Number((await get(up[i]!, 'x', '/connections')).body)));
    // Each lobby saw 200 requests; a new connection per request would be 200 (the one /connections call adds 1).
    for (const i of [0, 1]) expect(after[i]! - before[i]! - 1).toBeLessThanOrEqual(8);
  });

  it('restarts HAProxy when it dies, with every route it held', async () => {
    await proxy.bind(route('lobby-survivor', up[2]!));
    const before = proxy.status();
    process.kill(before.pid!, 'SIGKILL');
    await eventually('HAProxy to run again', () => proxy.status().running && proxy.status().pid !== before.pid, { timeoutMs: 15_000 });
    expect(proxy.status()).toMatchObject({ running: true, restarts: before.restarts + 1 });
    expect((await get(port, 'lobby-survivor-default.lobby.local.example.test')).body).toMatch(new RegExp(`^up-${up[2]} `));
  }, 20_000);

  it('counts requests, bytes and errors per route', async () => {
    await proxy.bind(route('lobby-count', up[0]!));
    for (let i = 0; i < 3; i++) await get(port, 'lobby-count-default.lobby.local.example.test', '/');
    await get(port, 'lobby-count-default.lobby.local.example.test', '/status?code=503');
    await get(port, 'lobby-count-default.lobby.local.example.test', '/status?code=400');
    const stats = (await proxy.routeStats()).find((s) => s.hostname === 'lobby-count-default.lobby.local.example.test');
    expect(stats).toMatchObject({ requests: 5, serverErrors: 1, clientErrors: 1, limited: 0, route: { lobbyId: 'lobby-count' } });
    expect(stats!.bytesOut).toBeGreaterThan(0);
  });
});
