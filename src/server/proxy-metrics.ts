/**
 * `GET /metrics` (Prometheus text format 0.0.4): the game proxy's counters per route (requests,
 * bytes, 4xx, 5xx, limit hits) and per listener (requests refused by the limits, bad or slow
 * requests), read from HAProxy's runtime API at each scrape; and the lobby-log lines of routes
 * whose requests fail.
 */
import type { ProxyStatus } from '../adapters/haproxy/proxy.js';
import type { ServerProxy } from './game-proxy.js';

const escape = (v: string): string => v.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));

type Counter = 'requests' | 'bytesIn' | 'bytesOut' | 'clientErrors' | 'serverErrors' | 'limited' | 'connectErrors';

const ROUTE_COUNTERS: ReadonlyArray<readonly [Counter, string, string]> = [
  ['requests', 'tavern_proxy_route_requests_total', 'Requests through the game proxy to this route (tcp_tls: connections).'],
  ['bytesIn', 'tavern_proxy_route_received_bytes_total', 'Bytes received from clients for this route.'],
  ['bytesOut', 'tavern_proxy_route_sent_bytes_total', 'Bytes sent to clients from this route.'],
  ['clientErrors', 'tavern_proxy_route_client_errors_total', 'Requests HAProxy counted as client errors (4xx, invalid requests; tcp_tls: failed handshakes).'],
  ['serverErrors', 'tavern_proxy_route_server_errors_total', '5xx answers of the game server (the proxy\'s own 503: tavern_proxy_route_connect_errors_total).'],
  ['connectErrors', 'tavern_proxy_route_connect_errors_total', 'Connections to the lobby that failed (nothing listening on its port: 503, or a closed tcp_tls connection).'],
  ['limited', 'tavern_proxy_route_limited_total', 'Requests refused by a per-address limit (429).'],
];

/**
 * @example
 * const text = await proxyMetrics(proxy); // '# HELP tavern_proxy_up ...'
 */
export async function proxyMetrics(proxy: Pick<ServerProxy, 'routeStats' | 'listenerStats'> & { status(): ProxyStatus | { readonly running: false } }): Promise<string> {
  const status = proxy.status();
  const out: string[] = [
    '# HELP tavern_proxy_up Whether the game proxy (HAProxy) runs and answers.',
    '# TYPE tavern_proxy_up gauge',
    `tavern_proxy_up ${status.running ? 1 : 0}`,
  ];
  if ('restarts' in status) {
    out.push(
      '# HELP tavern_proxy_restarts_total Times Tavern restarted a dead game proxy.', '# TYPE tavern_proxy_restarts_total counter', `tavern_proxy_restarts_total ${status.restarts}`,
      '# HELP tavern_proxy_routes Routes bound now.', '# TYPE tavern_proxy_routes gauge', `tavern_proxy_routes ${status.routes}`,
    );
  }
  const [routes, listeners] = await Promise.all([proxy.routeStats(), proxy.listenerStats()]);
  for (const [field, name, help] of ROUTE_COUNTERS) {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
    for (const s of routes) {
      const labels = `lobby_id="${escape(s.route.lobbyId)}",region="${escape(s.route.region)}",label="${escape(s.route.label)}",protocol="${s.route.protocol}"`;
      out.push(`${name}{${labels}} ${s[field]}`);
    }
  }
  const lobbies = listeners.find((l) => l.listener === 'lobbies');
  if (lobbies !== undefined) {
    out.push('# HELP tavern_proxy_lobby_connect_errors_total Connections to a lobby\'s port that failed (503: nothing listening), all routes.', '# TYPE tavern_proxy_lobby_connect_errors_total counter', `tavern_proxy_lobby_connect_errors_total ${lobbies.connectErrors}`);
  }
  const fronts = listeners.filter((l) => l.listener !== 'lobbies');
  out.push('# HELP tavern_proxy_listener_requests_total Requests per game proxy listener.', '# TYPE tavern_proxy_listener_requests_total counter');
  for (const l of fronts) out.push(`tavern_proxy_listener_requests_total{listener="${escape(l.listener)}"} ${l.requests}`);
  out.push('# HELP tavern_proxy_listener_limited_total Requests refused by a per-address limit (429), unknown hosts included.', '# TYPE tavern_proxy_listener_limited_total counter');
  for (const l of fronts) out.push(`tavern_proxy_listener_limited_total{listener="${escape(l.listener)}"} ${l.denied}`);
  out.push('# HELP tavern_proxy_listener_bad_requests_total Requests that were invalid or too slow to arrive (slowloris: 408).', '# TYPE tavern_proxy_listener_bad_requests_total counter');
  for (const l of fronts) out.push(`tavern_proxy_listener_bad_requests_total{listener="${escape(l.listener)}"} ${l.invalid}`);
  return `${out.join('\n')}\n`;
}

/**
 * Every `everyMs`, a line in the log (its `tavern` stream) of each lobby whose route failed since
 * the last look: requests that could not reach the lobby (nothing listens on its port), and 5xx
 * answers of the game server.
 * Returns a stop function.
 *
 * @example
 * const stop = watchRouteErrors(proxy, (lobbyId, line) => logs.append({ type: 'append-log', lobbyId, at: Date.now(), line }), 10_000);
 */
export function watchRouteErrors(proxy: Pick<ServerProxy, 'routeStats'>, write: (lobbyId: string, line: string) => void, everyMs: number): () => void {
  const seen = new Map<string, { server: number; connect: number }>();
  const look = async (): Promise<void> => {
    const stats = await proxy.routeStats();
    for (const s of stats) {
      const before = seen.get(s.hostname) ?? { server: 0, connect: 0 };
      seen.set(s.hostname, { server: s.serverErrors, connect: s.connectErrors });
      const failed = s.connectErrors - before.connect;
      const answered = s.serverErrors - before.server;
      const what = s.route.protocol === 'tcp_tls' ? 'TLS connection(s) (closed)' : 'request(s) (503)';
      if (failed > 0) write(s.route.lobbyId, `game proxy: ${failed} ${what} to ${s.hostname} (port ${s.route.label}) could not reach the lobby; is the game server listening on that port?`);
      if (answered > 0) write(s.route.lobbyId, `game proxy: ${answered} request(s) to ${s.hostname} (port ${s.route.label}) answered 5xx by the game server`);
    }
  };
  const timer = setInterval(() => void look().catch(() => undefined), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
