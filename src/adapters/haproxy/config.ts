/**
 * The HAProxy configuration Tavern writes for its game proxy (wire.md §5.2). Routing decisions stay
 * in Tavern: HAProxy only looks the request's route key up in a map Tavern fills through the
 * runtime API (`routes-http.map`, `routes-https.map`: `<lobby>-<label>.lobby.<region>.<job domain>`
 * → a route slot's backend) and sends the request to that slot, whose server Tavern has pointed at
 * the lobby's address and host port (`set server … addr`). A route change never reloads the proxy.
 *
 * Per client address (Game Guard's middlewares), counted on every request:
 * - the rate limit, Traefik's token bucket (`average` per `period`, `burst`) as two sliding windows:
 *   at most `burst + average` requests in any `period` and `burst + 12 × average` in any 12 periods;
 * - at most `inFlight` requests at once (a WebSocket is in flight until it closes);
 * - over either: 429 with a short body, counted on the route (`gpc0`) and in the frontend's denials.
 * A client has `headerTimeoutMs` to send a request's headers (slowloris: 408, then closed).
 */

export interface RateLimit {
  /** Requests per `periodMs` on average (Game Guard: 100 per 5 min). */
  readonly average: number;
  readonly periodMs: number;
  /** Requests allowed at once above the average (Game Guard: 256). */
  readonly burst: number;
}

export interface ProxyLimits {
  /** Absent: no rate limit. */
  readonly rate?: RateLimit;
  /** Requests in flight per client address at most; absent: no limit. */
  readonly inFlight?: number;
  /** How long a client has to send a request's headers (slowloris). */
  readonly headerTimeoutMs: number;
  /** How long a connection (a WebSocket too) may stay silent both ways. */
  readonly idleTimeoutMs: number;
  /** How long connecting to a lobby may take. */
  readonly connectTimeoutMs: number;
  /** Connections at most, over all clients; absent: HAProxy derives it from its file descriptor limit. */
  readonly maxConnections?: number;
}

export interface ProxyConfig {
  /** The runtime API's unix socket. */
  readonly socket: string;
  /** Where the proxy listens (`127.0.0.1`, `0.0.0.0`, `::`). */
  readonly host: string;
  readonly httpPort: number;
  /** HTTPS with this PEM (certificate chain and key in one file); absent: no HTTPS listener. */
  readonly https?: { readonly port: number; readonly pem: string };
  /** Route maps by protocol (files Tavern writes before starting the proxy). */
  readonly maps: { readonly http: string; readonly https: string };
  /** Lobby hostnames end in `.<jobDomain>`; the path form answers at `lobby.<jobDomain>/<region>/<lobby>-<label>`. */
  readonly jobDomain: string;
  readonly limits: ProxyLimits;
  /** Each route slot's lobby address (`<ip>:<port>`), or undefined for a free slot; its length is the most routes at once. */
  readonly slots: ReadonlyArray<string | undefined>;
  /** HAProxy threads (default: one per core). */
  readonly threads?: number;
  /** Started as root: the user (and group of that name) HAProxy runs as once its ports are bound. */
  readonly user?: string;
}

/** Stick tables (one per backend section, HAProxy's way of declaring a table). */
export const TABLES = { ip: 'ip_rate', ipLong: 'ip_rate_long', routes: 'routes' } as const;

/** The backend of route slot `i`. */
export const slotName = (i: number): string => `lobby-slot-${i}`;

const bindAddress = (host: string, port: number): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/** A string HAProxy reads as one word (double quotes, backslash escapes). */
const quoted = (s: string): string => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/**
 * A dot segment, raw or percent-encoded, between separators that are raw or percent-encoded too
 * (`/`, `\`, `%2f`, `%5c`): `/..`, `/%2e%2e/`, `/.%2E`, `/..%2fx`. HAProxy reads it case-blind and
 * single-quoted (no escape processing), so the backslashes reach the regex as written.
 */
const DOT_SEGMENT = String.raw`'(^|[/\\]|%2f|%5c)([.]|%2e){1,2}([/\\]|%2f|%5c|$)'`;

/**
 * The request rules of one frontend: limits, route lookup (host form and path form), 404, destination.
 * The path form strips its `/<region>/<lobby>-<label>` prefix, so a dot segment after it could
 * climb back over what the proxy routed on, in the lobby or anything that resolves the path later:
 * such a request is refused (400). The host form hands the path on untouched, as Game Guard did.
 */
function frontendRules(config: ProxyConfig, map: string): string[] {
  const { limits } = config;
  const pathHost = `lobby.${config.jobDomain}`;
  const isPathForm = `{ var(txn.host) -m str ${pathHost} }`;
  const lines = [
    'option forwardfor',
    `http-request set-var(txn.host) req.hdr(host),field(1,:),lower`,
    `http-request set-var(txn.dotted) bool(true) if ${isPathForm} { path -m reg -i ${DOT_SEGMENT} }`,
    // Path form: lobby.<job domain>/<region>/<lobby>-<label>/rest → key <lobby>-<label>.lobby.<region>.<job domain>, path /rest.
    `http-request set-var(txn.region) path,field(2,/) if ${isPathForm}`,
    `http-request set-var(txn.key) path,field(3,/),lower,concat(.lobby.,txn.region,.${config.jobDomain}) if ${isPathForm}`,
    `http-request set-path %[path,regsub(^/[^/]*/[^/]*/?,/)] if ${isPathForm}`,
    'http-request set-var(txn.key) var(txn.host) unless { var(txn.key) -m found }',
    // The route's slot: a backend whose one server Tavern points at the lobby (`set server … addr`).
    `http-request set-var(txn.addr) var(txn.key),map(${quoted(map)})`,
    `http-request track-sc2 var(txn.key) table ${TABLES.routes} if { var(txn.addr) -m found }`,
  ];
  const over: string[] = [];
  if (limits.rate !== undefined || limits.inFlight !== undefined) lines.push(`http-request track-sc0 src table ${TABLES.ip}`);
  if (limits.rate !== undefined) {
    const { average, burst } = limits.rate;
    lines.push(`http-request track-sc1 src table ${TABLES.ipLong}`);
    over.push(`{ sc0_http_req_rate(${TABLES.ip}) gt ${burst + average} }`, `{ sc1_http_req_rate(${TABLES.ipLong}) gt ${burst + 12 * average} }`);
  }
  if (limits.inFlight !== undefined) over.push(`{ sc0_conn_cur(${TABLES.ip}) gt ${limits.inFlight} }`);
  for (const cond of over) {
    lines.push(
      `http-request sc-inc-gpc0(2) if { var(txn.addr) -m found } ${cond}`,
      `http-request deny deny_status 429 content-type text/plain string "too many requests from this address" if ${cond}`,
    );
  }
  lines.push(
    'http-request return status 400 content-type text/plain string "a lobby path may not have a . or .. segment" if { var(txn.dotted) -m bool }',
    'http-request return status 404 content-type text/plain string "no lobby at this address" unless { var(txn.addr) -m found }',
    'use_backend %[var(txn.addr)]',
  );
  return lines;
}

const seconds = (ms: number): string => `${Math.max(1, Math.ceil(ms / 1000))}s`;

/**
 * The whole configuration file.
 *
 * @example
 * await writeFile(cfgPath, renderConfig({ socket, host: '127.0.0.1', httpPort: 8081, maps, jobDomain: 'example.test', limits }));
 */
export function renderConfig(config: ProxyConfig): string {
  const { limits } = config;
  const period = limits.rate?.periodMs ?? 300_000;
  const ms = (n: number): string => `${n}ms`;
  const out = [
    '# Written by Tavern: edits are lost at its next start. Routes change through the runtime API.',
    'global',
    `  stats socket ${quoted(config.socket)} mode 600 level admin`,
    '  log stderr format raw local0 warning',
    ...(limits.maxConnections === undefined ? [] : [`  maxconn ${limits.maxConnections}`]),
    ...(config.threads === undefined ? [] : [`  nbthread ${config.threads}`]),
    ...(config.user === undefined ? [] : [`  user ${config.user}`, `  group ${config.user}`]),
    '  tune.ssl.default-dh-param 2048',
    '',
    'defaults',
    '  mode http',
    '  log global',
    '  option dontlognull',
    '  option http-keep-alive',
    `  timeout connect ${ms(limits.connectTimeoutMs)}`,
    // A lobby refusing connections is retried once (HAProxy waits up to 1 s before a retry).
    '  retries 1',
    `  timeout client ${ms(limits.idleTimeoutMs)}`,
    `  timeout server ${ms(limits.idleTimeoutMs)}`,
    `  timeout tunnel ${ms(limits.idleTimeoutMs)}`,
    // A side that closed its half: the other has 5 s to finish (it keeps counting as in flight meanwhile).
    '  timeout client-fin 5s',
    '  timeout server-fin 5s',
    `  timeout http-request ${ms(limits.headerTimeoutMs)}`,
    `  timeout http-keep-alive ${ms(limits.headerTimeoutMs)}`,
    '',
    `backend ${TABLES.ip}`,
    `  stick-table type ipv6 size 1m expire ${seconds(period)} store http_req_rate(${seconds(period)}),conn_cur`,
    `backend ${TABLES.ipLong}`,
    `  stick-table type ipv6 size 1m expire ${seconds(12 * period)} store http_req_rate(${seconds(12 * period)})`,
    `backend ${TABLES.routes}`,
    '  stick-table type string len 200 size 200k expire 24h store http_req_cnt,bytes_in_cnt,bytes_out_cnt,http_err_cnt,http_fail_cnt,gpc0',
    '',
    'frontend http',
    `  bind ${bindAddress(config.host, config.httpPort)}`,
    ...frontendRules(config, config.maps.http).map((l) => `  ${l}`),
  ];
  if (config.https !== undefined) {
    out.push(
      '',
      'frontend https',
      `  bind ${bindAddress(config.host, config.https.port)} ssl crt ${quoted(config.https.pem)} alpn http/1.1`,
      '  http-request set-header X-Forwarded-Proto https',
      ...frontendRules(config, config.maps.https).map((l) => `  ${l}`),
    );
  }
  // One backend per route slot (HAProxy 2.6 adds servers at run time but no backends): its server
  // keeps its own pool of kept-alive connections to its lobby. A single backend sending to the
  // address each request sets (`set-dst` to a `0.0.0.0:0` server) reused connections for one lobby
  // only: every request to a second lobby opened a new connection (3-5× slower, measured).
  config.slots.forEach((address, i) => {
    out.push('', `backend ${slotName(i)}`, '  http-reuse safe', `  server lobby ${address ?? '127.0.0.1:1 disabled'}`);
  });
  out.push('');
  return out.join('\n');
}
