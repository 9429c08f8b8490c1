/**
 * `npm start` with the game proxy: the server process starts HAProxy on the configured port,
 * reports it in /health and /metrics (read with the scraper's token), stops it on SIGTERM, and after a `kill -9` of Tavern (HAProxy
 * left running) the next start replaces the orphan. A relative TAVERN_DATA_DIR works (HAProxy reads
 * a relative socket path as an address). Without HAProxy the server starts anyway and says what is off.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeNeeding } from '../needs.js';
import { api, exited, getWithHost, startServer, type Server } from '../server/process.js';
import { freePort, HAPROXY, haproxyProblem, NEED } from './helpers.js';

const METRICS_TOKEN = 'scraper-token-for-proxy-test';

/** Whether `pid` runs (a zombie waiting for its reaper does not: its command line is empty). */
const running = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== '';
  } catch {
    return false;
  }
};

describeNeeding(NEED, 'the server process with its game proxy', haproxyProblem(), () => {
  let dir: string;
  const servers: Server[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tavern-proxy-process-'));
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  const health = async (origin: string): Promise<{ proxy: { running: boolean; pid?: number; off?: string } }> =>
    (await (await fetch(`${origin}/health`)).json()) as { proxy: { running: boolean; pid?: number; off?: string } };

  it('runs HAProxy on TAVERN_PROXY_HTTP_PORT, reports it, replaces an orphan after kill -9, stops it on SIGTERM', async () => {
    const proxyPort = await freePort();
    const env = {
      TAVERN_RUNTIME: 'fake', TAVERN_PORT: '0', TAVERN_DATA_DIR: join(dir, 'data'), TAVERN_ADMIN_TOKEN: 'admin-token-for-proxy-test',
      TAVERN_JOB_DOMAIN: 'example.test', TAVERN_PROXY_HTTP_PORT: String(proxyPort), TAVERN_HAPROXY_BIN: HAPROXY,
      TAVERN_METRICS_TOKEN: METRICS_TOKEN,
    };
    const first = await startServer('tavern (proxy)', env);
    servers.push(first);
    expect(first.listening['proxy']).toEqual({ http: proxyPort });
    const { proxy } = await health(first.origin);
    expect(proxy).toMatchObject({ running: true, https: false, restarts: 0 });
    expect(await getWithHost(`http://127.0.0.1:${proxyPort}`, 'nobody-web.lobby.local.example.test', '/')).toEqual({ status: 404, body: 'no lobby at this address' });
    // A scraper's token (TAVERN_METRICS_TOKEN) reads /metrics; without a token it is 401.
    expect((await fetch(`${first.origin}/metrics`)).status).toBe(401);
    const metrics = await (await fetch(`${first.origin}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(metrics).toMatch(/^tavern_proxy_up 1$/m);
    expect(metrics).toMatch(/^tavern_proxy_listener_requests_total\{listener="http"\} 1$/m);

    // kill -9: HAProxy outlives Tavern, holding the port; the next start stops it and runs its own.
    first.child.kill('SIGKILL');
    await exited(first.child);
    expect(running(proxy.pid!)).toBe(true);
    const second = await startServer('tavern (proxy, restarted)', env);
    servers.push(second);
    const after = (await health(second.origin)).proxy;
    expect(after.running).toBe(true);
    expect(after.pid).not.toBe(proxy.pid);
    expect(running(proxy.pid!)).toBe(false);
    await second.stop();
    expect(running(after.pid!)).toBe(false);
  }, 90_000);

  it('starts HAProxy with a relative TAVERN_DATA_DIR (its socket, maps and certificate paths made absolute)', async () => {
    const proxyPort = await freePort();
    // The server runs in the repository's root: the data dir is given relative to it.
    const dataDir = relative(new URL('../../', import.meta.url).pathname, join(dir, 'relative-data'));
    expect(dataDir.startsWith('/')).toBe(false);
    const server = await startServer('tavern (relative data dir)', {
      TAVERN_RUNTIME: 'fake', TAVERN_PORT: '0', TAVERN_DATA_DIR: dataDir, TAVERN_ADMIN_TOKEN: 'admin-token-for-proxy-test',
      TAVERN_PROXY: 'haproxy', TAVERN_PROXY_HTTP_PORT: String(proxyPort), TAVERN_HAPROXY_BIN: HAPROXY,
    });
    servers.push(server);
    expect((await health(server.origin)).proxy).toMatchObject({ running: true });
    expect(await getWithHost(`http://127.0.0.1:${proxyPort}`, 'nobody-web.lobby.local.example.test', '/')).toEqual({ status: 404, body: 'no lobby at this address' });
    await server.stop();
  }, 60_000);

  it('starts without HAProxy, says the game proxy is off and why, and refuses at publish what it cannot serve, in words', async () => {
    const admin = 'admin-token-for-proxy-test';
    const server = await startServer('tavern (no haproxy)', {
      TAVERN_RUNTIME: 'fake', TAVERN_PORT: '0', TAVERN_DATA_DIR: join(dir, 'data-off'), TAVERN_ADMIN_TOKEN: admin,
      TAVERN_HAPROXY_BIN: join(dir, 'no-such-haproxy'),
    });
    servers.push(server);
    expect(server.listening['proxy']).toBe('off');
    expect(server.tail()).toMatch(/game proxy off: ports with protocol http, https and tcp_tls are not served \(tcp and udp are\): versions asking for them are refused at publish/);
    expect((await health(server.origin)).proxy).toEqual({ running: false, off: 'HAProxy is not installed (apt-get install haproxy)', refused: ['http', 'https', 'tcp_tls'] });
    expect(await (await fetch(`${server.origin}/metrics`, { headers: { authorization: 'Bearer admin-token-for-proxy-test' } })).text()).toMatch(/^tavern_proxy_up 0$/m);

    // README's sample port (no protocol: https) is refused with the reason and the fix; a udp port is published.
    const game = await api(server.origin, 'POST', '/cloud/games', { token: admin, body: { name_id: 'no-proxy', display_name: 'No proxy', developer_group_id: randomUUID() } });
    const gameId = String(game.body['game_id']);
    const config = (ports: unknown): unknown => ({ matchmaker: { regions: { local: {} }, docker: { image_id: randomUUID(), ports }, game_modes: { default: {} } } });
    const refused = await api(server.origin, 'POST', `/cloud/games/${gameId}/versions`, { token: admin, body: { display_name: 'v1', config: config({ default: { port: 3000 }, web: { port: 8080, protocol: 'http' } }) } });
    expect(refused.status).toBe(400);
    const errors = (refused.body['metadata'] as { errors: { path: string[]; message?: string }[] }).errors;
    expect(errors).toContainEqual({
      path: ['config', 'matchmaker', 'ports', '*default*', 'protocol-not-served'],
      message: "https needs the game proxy with a certificate: install HAProxy (apt-get install haproxy) and restart Tavern; this port names no protocol, so it is https (Rivet's default)",
    });
    expect(errors).toContainEqual({ path: ['config', 'matchmaker', 'ports', '*web*', 'protocol-not-served'], message: 'http needs the game proxy: install HAProxy (apt-get install haproxy) and restart Tavern' });
    expect(String(refused.body['message'])).toContain('install HAProxy (apt-get install haproxy)');
    const udp = await api(server.origin, 'POST', `/cloud/games/${gameId}/versions`, { token: admin, body: { display_name: 'v2', config: config({ game: { port: 7777, protocol: 'udp' } }) } });
    expect((udp.body['metadata'] as { errors: { path: string[] }[] }).errors.map((e) => e.path.at(-1))).not.toContain('protocol-not-served');
  }, 90_000);
});
