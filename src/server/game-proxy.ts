/**
 * The server's game proxy (wire.md §5): its settings (`TAVERN_PROXY_*`), and starting it. HAProxy
 * is the data plane (measured fastest here, see the `proxy` benchmark); Tavern decides the routes.
 * It runs by default when HAProxy is installed, on 80/443, or 8880/8444 when this user may not bind
 * those (or they are taken). Without HAProxy (not installed, `TAVERN_PROXY=off`, or it cannot start)
 * the server still runs: versions with http, https or tcp_tls ports are refused at publish with the
 * reason, and the log and `/health` say so.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProxyLimits, RateLimit } from '../adapters/haproxy/config.js';
import { HaproxyGameProxy, type ProxyStatus } from '../adapters/haproxy/proxy.js';
import type { RouteStats } from '../adapters/haproxy/stats.js';
import { TlsPorts } from '../adapters/tls-ports.js';
import type { PortProtocol } from '../core/config/types.js';
import type { ProxyRoute } from '../core/effects.js';
import { isActive } from '../core/lobby/flags.js';
import { proxyRoutes, routeHostname } from '../core/lobby/routes.js';
import type { World } from '../core/world.js';
import type { ProxyRoutes } from '../io/index.js';
import type { Logger } from '../io/log.js';
import { portOr } from './ports.js';
import { servedByProxy, servedWithoutProxy, type ProxyOff, type Served } from './proxy-refusals.js';

export interface ProxyEnv {
  /** `auto`: HAProxy when it is installed; `haproxy`: required; `off`. */
  readonly mode: 'auto' | 'haproxy' | 'off';
  /** `TAVERN_HAPROXY_BIN`; default `haproxy` on the PATH, else /usr/sbin/haproxy. */
  readonly binary?: string;
  readonly host: string;
  readonly httpPort: number;
  readonly httpsPort: number;
  /** The ports used instead of the default ones when this user may not bind those or they are taken (absent for ports set explicitly). */
  readonly fallback?: { readonly http?: number; readonly https?: number };
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
  readonly limits: ProxyLimits;
  /** Routes at once at most (`TAVERN_PROXY_MAX_ROUTES`, default 1024). */
  readonly maxRoutes: number;
}

type Env = Readonly<Record<string, string | undefined>>;

const opt = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());

const whole = (env: Env, name: string, fallback: number, min: number, max: number): number => {
  const raw = opt(env[name]);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return n;
};

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * `TAVERN_PROXY_RATE_LIMIT`: `<average>/<period>+<burst>` (Game Guard's `100/5m+256`, the default) or `off`.
 *
 * @example
 * parseProxyRate('100/5m+256') // { average: 100, periodMs: 300000, burst: 256 }
 */
export function parseProxyRate(raw: string | undefined): RateLimit | undefined {
  const value = opt(raw) ?? '100/5m+256';
  if (value === 'off') return undefined;
  const m = /^(\d+)\/(\d+)(ms|s|m|h)\+(\d+)$/.exec(value);
  const periodMs = m === null ? 0 : Number(m[2]) * (UNIT_MS[m[3] ?? ''] ?? 0);
  if (m === null || Number(m[1]) < 1 || periodMs < 1_000) throw new Error('TAVERN_PROXY_RATE_LIMIT must be "off" or <average>/<period>+<burst> with a period of at least 1s, e.g. 100/5m+256');
  return { average: Number(m[1]), periodMs, burst: Number(m[4]) };
}

/** Reads `TAVERN_PROXY*`; `host` is the API's listen address (the proxy's default). */
export function parseProxyEnv(env: Env, host: string): ProxyEnv {
  const mode = opt(env['TAVERN_PROXY']) ?? 'auto';
  if (mode !== 'auto' && mode !== 'haproxy' && mode !== 'off') throw new Error('TAVERN_PROXY must be "auto", "haproxy" or "off"');
  const certFile = opt(env['TAVERN_PROXY_TLS_CERT']);
  const keyFile = opt(env['TAVERN_PROXY_TLS_KEY']);
  if ((certFile === undefined) !== (keyFile === undefined)) throw new Error('TAVERN_PROXY_TLS_CERT and TAVERN_PROXY_TLS_KEY go together');
  const inFlightRaw = opt(env['TAVERN_PROXY_MAX_IN_FLIGHT']);
  const rate = parseProxyRate(env['TAVERN_PROXY_RATE_LIMIT']);
  const inFlight = inFlightRaw === 'off' ? undefined : whole(env, 'TAVERN_PROXY_MAX_IN_FLIGHT', 4, 1, 1_000_000);
  const binary = opt(env['TAVERN_HAPROXY_BIN']);
  const maxConnections = opt(env['TAVERN_PROXY_MAX_CONNECTIONS']) === undefined ? undefined : whole(env, 'TAVERN_PROXY_MAX_CONNECTIONS', 0, 1, 1_000_000);
  const fallback = {
    ...(opt(env['TAVERN_PROXY_HTTP_PORT']) === undefined ? { http: 8880 } : {}),
    ...(opt(env['TAVERN_PROXY_HTTPS_PORT']) === undefined ? { https: 8444 } : {}),
  };
  return {
    mode,
    host: opt(env['TAVERN_PROXY_HOST']) ?? host,
    httpPort: whole(env, 'TAVERN_PROXY_HTTP_PORT', 80, 1, 65_535),
    httpsPort: whole(env, 'TAVERN_PROXY_HTTPS_PORT', 443, 1, 65_535),
    maxRoutes: whole(env, 'TAVERN_PROXY_MAX_ROUTES', 1_024, 1, 100_000),
    ...(Object.keys(fallback).length === 0 ? {} : { fallback }),
    ...(binary === undefined ? {} : { binary }),
    ...(certFile === undefined || keyFile === undefined ? {} : { tls: { certFile, keyFile } }),
    limits: {
      ...(rate === undefined ? {} : { rate }),
      ...(inFlight === undefined ? {} : { inFlight }),
      headerTimeoutMs: whole(env, 'TAVERN_PROXY_HEADERS_TIMEOUT_MS', 10_000, 100, 3_600_000),
      idleTimeoutMs: whole(env, 'TAVERN_PROXY_IDLE_TIMEOUT_MS', 30_000, 1_000, 43_200_000),
      connectTimeoutMs: 5_000,
      ...(maxConnections === undefined ? {} : { maxConnections }),
    },
  };
}

/** `env` with each default port this user may not bind, or another program holds, replaced by its fallback (and a warning saying so). */
async function withFreePorts(env: ProxyEnv, log: Logger): Promise<ProxyEnv> {
  const say = (what: string, port: number, instead: number | undefined) => (why: string): void =>
    log.warn({ port, instead, why }, `game proxy: ${what} port ${port} is ${why}: ${what} on ${instead} instead (find returns it)`);
  const httpPort = await portOr(env.host, env.httpPort, env.fallback?.http, say('http', env.httpPort, env.fallback?.http));
  const httpsPort = env.tls === undefined ? env.httpsPort : await portOr(env.host, env.httpsPort, env.fallback?.https, say('https', env.httpsPort, env.fallback?.https));
  return { ...env, httpPort, httpsPort };
}

/** The `haproxy` binary to run, or undefined when none is installed. */
const findHaproxy = (configured: string | undefined): string | undefined => {
  const candidates = configured === undefined ? ['haproxy', '/usr/sbin/haproxy', '/usr/local/sbin/haproxy'] : [configured];
  return candidates.find((bin) => (bin.includes('/') ? existsSync(bin) : true) && spawnSync(bin, ['-v']).status === 0);
};

const hasUser = (name: string): boolean => {
  try {
    return new RegExp(`^${name}:`, 'm').test(readFileSync('/etc/passwd', 'utf8'));
  } catch {
    return false;
  }
};


export interface ServerProxy {
  readonly routes: ProxyRoutes;
  /** For the app: the ports find returns (absent when off), the protocols a version may ask for, and why each other one is refused. */
  readonly settings: {
    readonly proxyPorts?: { readonly http: number; readonly https?: number };
    readonly proxyProtocols: ReadonlySet<PortProtocol>;
    readonly protocolRefusals: Readonly<Partial<Record<PortProtocol, string>>>;
  };
  /** For `/health`: what runs (or why not), and the protocols refused at publish. */
  status(): (ProxyStatus & { readonly ports: { readonly http: number; readonly https?: number }; readonly refused: readonly PortProtocol[] }) | { readonly running: false; readonly off: string; readonly refused: readonly PortProtocol[] };
  routeStats(): Promise<RouteStats[]>;
  listenerStats(): ReturnType<HaproxyGameProxy['listenerStats']>;
  /** Binds the routes of every active lobby (after a restart of Tavern). */
  restore(world: World): Promise<void>;
  /** Points every route at its lobby's address as the runtime knows it now (lobbies on several hosts: placed, adopted). */
  readdress(): Promise<void>;
  close(): Promise<void>;
}

const logged = (log: Logger): ProxyRoutes => ({
  bind: (route) => Promise.resolve(log.debug?.({ route }, 'proxy route not served (no game proxy)')),
  unbind: (route) => Promise.resolve(log.debug?.({ route }, 'proxy route unbound')),
});

const refusedOf = (served: Served): PortProtocol[] => (Object.keys(served.refusals) as PortProtocol[]).sort();

const off = (log: Logger, why: string, kind: ProxyOff, jobDomain: string): ServerProxy => {
  const served = servedWithoutProxy(kind, jobDomain);
  log.warn({ why }, 'game proxy off: ports with protocol http, https and tcp_tls are not served (tcp and udp are): versions asking for them are refused at publish');
  return {
    routes: logged(log),
    settings: { proxyProtocols: served.protocols, protocolRefusals: served.refusals },
    status: () => ({ running: false, off: why, refused: refusedOf(served) }),
    routeStats: () => Promise.resolve([]),
    listenerStats: () => Promise.resolve([]),
    restore: () => Promise.resolve(),
    readdress: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
};

/**
 * Starts the game proxy the environment asks for. `TAVERN_PROXY=haproxy` that cannot start is an
 * error; `auto` falls back to no proxy and says why.
 *
 * @example
 * const proxy = await startGameProxy({ env: env.proxy, jobDomain, dataDir, upstreamHost: env.publishHost, log: logger });
 */
export async function startGameProxy(deps: {
  env: ProxyEnv;
  jobDomain: string | undefined;
  dataDir: string;
  upstreamHost: string;
  /** Where a lobby's host ports are reached when the runtime places lobbies on several hosts (Swarm: its node's public address; undefined until placed). */
  upstreamOf?: (lobbyId: string) => string | undefined;
  log: Logger;
}): Promise<ServerProxy> {
  const { log } = deps;
  const jobDomain = deps.jobDomain ?? '127.0.0.1';
  if (deps.env.mode === 'off') return off(log, 'TAVERN_PROXY=off', 'off', jobDomain);
  const binary = findHaproxy(deps.env.binary);
  if (binary === undefined) {
    if (deps.env.mode === 'haproxy') throw new Error(`TAVERN_PROXY=haproxy but ${deps.env.binary ?? 'haproxy'} is not installed (apt-get install haproxy)`);
    return off(log, 'HAProxy is not installed (apt-get install haproxy)', 'not-installed', jobDomain);
  }
  const env = await withFreePorts(deps.env, log);
  // As root (to bind 80/443), HAProxy drops to Debian's `haproxy` user once its ports are bound.
  const user = process.getuid?.() === 0 && hasUser('haproxy') ? 'haproxy' : undefined;
  let proxy: HaproxyGameProxy;
  let tlsPorts: TlsPorts | undefined;
  try {
    proxy = await HaproxyGameProxy.start({
      binary, dir: join(deps.dataDir, 'proxy'), host: env.host, httpPort: env.httpPort, jobDomain, upstreamHost: deps.upstreamHost, limits: env.limits, log, maxRoutes: env.maxRoutes,
      ...(deps.upstreamOf === undefined ? {} : { upstreamOf: deps.upstreamOf }),
      ...(user === undefined ? {} : { user }),
      ...(env.tls === undefined ? {} : { tls: { port: env.httpsPort, ...env.tls } }),
    });
  } catch (error) {
    if (env.mode === 'haproxy') throw error;
    return off(log, `HAProxy could not start: ${error instanceof Error ? error.message : String(error)}`, 'failed', jobDomain);
  }
  if (env.tls !== undefined) {
    // tcp_tls ports: a TLS listener per route on its own public port (see src/adapters/tls-ports.ts).
    const { connectTimeoutMs, idleTimeoutMs, maxConnections } = env.limits;
    tlsPorts = await TlsPorts.start({
      host: env.host, upstreamHost: deps.upstreamHost, ...env.tls, idleTimeoutMs, connectTimeoutMs, log,
      ...(deps.upstreamOf === undefined ? {} : { upstreamOf: deps.upstreamOf }),
      ...(maxConnections === undefined ? {} : { maxConnections }),
    }).catch(async (error: unknown) => {
      await proxy.close();
      throw error;
    });
  }
  if (env.tls === undefined) log.warn({}, 'game proxy: no certificate (TAVERN_PROXY_TLS_CERT/KEY), so HTTPS is off and versions with https or tcp_tls ports are refused');
  const served = servedByProxy(env.tls !== undefined, jobDomain);
  const ports = { http: env.httpPort, ...(env.tls === undefined ? {} : { https: env.httpsPort }) };
  const tls = tlsPorts;
  const forRoute = (route: ProxyRoute) => (route.protocol === 'tcp_tls' && tls !== undefined ? tls : proxy);
  return {
    routes: { bind: (route) => forRoute(route).bind(route), unbind: (route) => forRoute(route).unbind(route) },
    settings: { proxyPorts: ports, proxyProtocols: served.protocols, protocolRefusals: served.refusals },
    status: () => {
      const s = proxy.status();
      return { ...s, routes: s.routes + (tls?.size ?? 0), ports, refused: refusedOf(served) };
    },
    routeStats: async () => [
      ...(await proxy.routeStats()),
      ...(tls?.stats() ?? []).map((t): RouteStats => ({
        route: t.route, hostname: routeHostname(t.route, jobDomain),
        requests: t.connections, bytesIn: t.bytesIn, bytesOut: t.bytesOut, clientErrors: t.handshakeErrors, serverErrors: 0, limited: 0, connectErrors: t.connectErrors,
      })),
    ],
    listenerStats: () => proxy.listenerStats(),
    readdress: () => proxy.readdress(),
    restore: async (world) => {
      const routes: ProxyRoute[] = [];
      for (const ns of world.namespaces.values()) for (const lobby of ns.lobbies.values()) if (isActive(lobby)) routes.push(...proxyRoutes(lobby));
      await Promise.all(routes.map((r) => forRoute(r).bind(r)));
      if (routes.length > 0) log.info({ routes: routes.length }, 'game proxy routes restored');
    },
    close: async () => {
      await tls?.close();
      await proxy.close();
    },
  };
}
