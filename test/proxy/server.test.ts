/**
 * The game proxy end to end through the server's services (fake runtime, real HAProxy): a find's
 * `bind-route` puts the lobby's http port behind the hostname:port find returns; a client reaches
 * the lobby there (Host header to 127.0.0.1, no DNS) by both hostname forms and holds a WebSocket;
 * a 5xx reaches the lobby's log and /metrics; the lobby's stop removes the route; a version asking
 * for https without a certificate is refused with the port's path.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HaproxyGameProxy } from '../../src/adapters/haproxy/proxy.js';
import { proxyMetrics, watchRouteErrors } from '../../src/server/proxy-metrics.js';
import { describeNeeding } from '../needs.js';
import { harness, str, type Harness } from '../server/harness.js';
import { eventually } from '../wait.js';
import { echo, freePort, get, HAPROXY, haproxyProblem, NEED, OPEN_LIMITS, openWebSocket, QUIET, startUpstream } from './helpers.js';

const DOMAIN = 'example.test';

const webConfig = (protocol: string) => (buildId: string): unknown => ({
  matchmaker: {
    regions: { local: {} },
    max_players: 4,
    docker: { image_id: buildId, ports: { web: { port: 8080, protocol } } },
    game_modes: { default: {} },
  },
});

describeNeeding(NEED, 'game proxy end to end through the services (HAProxy, fake runtime)', haproxyProblem(), () => {
  let dir: string;
  let proxy: HaproxyGameProxy;
  let port: number;
  let h: Harness;
  const upstreams: ChildProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tavern-proxy-e2e-'));
    port = await freePort();
    proxy = await HaproxyGameProxy.start({ binary: HAPROXY, dir, host: '127.0.0.1', httpPort: port, jobDomain: DOMAIN, upstreamHost: '127.0.0.1', limits: OPEN_LIMITS, log: QUIET });
    h = harness({
      readyAfterMs: 0,
      routes: proxy,
      config: { jobDomain: DOMAIN, proxyPorts: { http: port }, proxyProtocols: new Set(['http', 'tcp', 'udp'] as const) },
    });
  });

  afterAll(async () => {
    h?.cleanup();
    await proxy?.close();
    for (const u of upstreams) u.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a version asking for https (or tcp_tls) when the proxy has no certificate, naming the port', async () => {
    for (const protocol of ['https', 'tcp_tls']) {
      await expect(h.setup(webConfig(protocol), `tls-${protocol.replace('_', '-')}`)).rejects.toThrow(/VALIDATION_ERROR.*config\.matchmaker\.ports\.\*web\*\.protocol-not-served/);
    }
  });

  it('find returns the proxy hostname and port; the lobby answers there by Host and by path, holds a WebSocket; its stop removes the route', async () => {
    const { pub } = await h.setup(webConfig('http'), 'web-game');
    const found = await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
    expect(found.status).toBe(200);
    const lobbyId = str(found.body['lobby']?.['lobby_id']);
    const web = found.body['ports']?.['web'] as unknown as { host: string; hostname: string; port: number; is_tls: boolean };
    expect(web).toEqual({ hostname: `${lobbyId}-web.lobby.local.${DOMAIN}`, port, host: `${lobbyId}-web.lobby.local.${DOMAIN}:${port}`, is_tls: false });

    // The route is bound before anything listens on the lobby's host port: 503, in the lobby's log
    // and /metrics; then a 5xx of the game server itself.
    const lines: string[] = [];
    const stopWatch = watchRouteErrors(proxy, (id, line) => id === lobbyId && lines.push(line), 100);
    expect((await get(port, web.hostname, '/')).status).toBe(503);
    const hostPort = h.runtime.startOf(lobbyId)?.ports.find((p) => p.label === 'web')?.hostPort;
    expect(hostPort).toBeGreaterThanOrEqual(20_000);
    upstreams.push(await startUpstream([hostPort!]));
    expect((await get(port, web.host, '/game?x=1')).body).toMatch(new RegExp(`^up-${hostPort} GET /game\\?x=1 host=${web.host}`));
    expect((await get(port, `lobby.${DOMAIN}`, `/local/${lobbyId}-web/game`)).body).toMatch(new RegExp(`^up-${hostPort} GET /game `));
    expect((await get(port, web.hostname, '/status?code=500')).status).toBe(500);
    // The watch looks every 100 ms: both failures reach the lobby's log (in one look or two).
    await eventually('the route errors in the lobby log', () => lines.length >= 2, { timeoutMs: 10_000 });
    stopWatch();
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^game proxy: 1 request\\(s\\) \\(503\\) to ${web.hostname} \\(port web\\) could not reach the lobby; is the game server listening`)),
      expect.stringMatching(new RegExp(`^game proxy: 1 request\\(s\\) to ${web.hostname} \\(port web\\) answered 5xx by the game server`)),
    ]);

    const { socket } = await openWebSocket(port, web.hostname);
    expect(await echo(socket, 'ping')).toBe('ping');

    const metrics = await proxyMetrics({ status: () => proxy.status(), routeStats: () => proxy.routeStats(), listenerStats: () => proxy.listenerStats() });
    const labels = `lobby_id="${lobbyId}",region="local",label="web",protocol="http"`;
    expect(metrics).toContain(`tavern_proxy_route_requests_total{${labels}} 5`);
    expect(metrics).toContain(`tavern_proxy_route_server_errors_total{${labels}} 1`);
    expect(metrics).toContain(`tavern_proxy_route_connect_errors_total{${labels}} 1`);
    expect(metrics).toContain('tavern_proxy_lobby_connect_errors_total 1');
    expect(metrics).toContain('tavern_proxy_up 1');

    h.runtime.exit(lobbyId, 'exited');
    // A request caught by the removal (its sessions are cut) is no answer either: asked again.
    await eventually('the route to be removed', () => get(port, web.hostname, '/').then((a) => a.status === 404, () => false), { timeoutMs: 5_000, everyMs: 20 });
    expect(await get(port, web.hostname, '/')).toMatchObject({ status: 404, body: 'no lobby at this address' });
    socket.destroy();
  });
});
