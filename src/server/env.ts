/**
 * The server's environment variables, parsed (pure: `main` passes `process.env`).
 */
import { DEFAULT_MAX_EXPANDED_BYTES, MAX_EXPANDED_SETTING } from '../adapters/docker/archive-bytes.js';
import type { RegistryTarget } from '../adapters/docker/registry-images.js';
import type { S3Options } from '../adapters/s3/blobs.js';
import { isHumanText } from '../core/config/validate-text.js';
import { parseDuration } from '../core/duration.js';
import { LOCAL_REGION, type RegionInfo } from '../core/world.js';
import type { Problem } from '../core/config/types.js';
import { distribution } from '../core/config/parse-distribution.js';
import { tierResources } from '../core/config/tiers.js';
import type { NumericDistribution } from '../core/distribution.js';
import { parseDockerEnv, type DockerEnv } from './docker-env.js';
import { parseCdn, type CdnListenEnv } from './cdn/listen-env.js';
import { parseProxyEnv, type ProxyEnv } from './game-proxy.js';
import { HTTP_DEFAULTS, type HttpOptions } from './http.js';
import { parseRateLimits, type RateLimitTable } from './rate-limit.js';
import { parseRegistryEnv } from './registry-env.js';

export interface ServerEnv extends DockerEnv {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly databaseUrl?: string;
  /** `TAVERN_PG_SCHEMA`: the PostgreSQL schema holding Tavern's tables (default `public`); several deployments can share one database. */
  readonly postgresSchema?: string;
  readonly regions: readonly RegionInfo[];
  readonly adminToken?: string;
  /** `TAVERN_METRICS_TOKEN`: a bearer token that reads `/metrics` only (a Prometheus scraper's); the admin token reads it too. */
  readonly metricsToken?: string;
  /** Where clients reach the API; default `http://<host>:<port>`. */
  readonly publicOrigin?: string;
  /** `TAVERN_CDN_DOMAIN`, default `cdn.localhost` (browsers and curl resolve `*.localhost` to this machine). */
  readonly cdnDomain?: string;
  /** `TAVERN_JOB_DOMAIN`, default `localhost`: lobbies answer at `<lobby>-<label>.lobby.<region>.localhost`. */
  readonly jobDomain?: string;
  /** Hosts and CIDRs verification URLs may reach besides public addresses (local development). */
  readonly egressAllow: readonly string[];
  /**
   * `docker`: lobbies run as Docker containers; `swarm`: as Docker Swarm services across the nodes
   * of a swarm (`TAVERN_SWARM_HOST`); `fake`: lobbies "start" without running anything and report
   * ready at once (demos and tests); `none`: no lobby starts. Absent: Docker when its socket
   * answers, and until then no lobby starts.
   */
  readonly runtime?: 'docker' | 'swarm' | 'fake' | 'none';
  /**
   * The fake runtime's behaviour: each lobby is ready after a delay drawn from `readyDelayMs`
   * (`TAVERN_FAKE_READY_DELAY`, a scenario distribution as JSON; default at once) with a seeded
   * stream (`TAVERN_FAKE_SEED`, default 1); `lobbyDir` (`TAVERN_FAKE_LOBBY_DIR`) receives each
   * started lobby's environment as `<lobby id>.json`, as a container would get it, so a test
   * standing in for the game server can call the lobby endpoints with its token.
   */
  readonly fake: { readonly readyDelayMs?: NumericDistribution; readonly seed: number; readonly lobbyDir?: string };
  /** `DOCKER_HOST`: the engine (`unix:///path` or `tcp://host:port`); default the local socket. */
  readonly dockerHost?: string;
  /** `TAVERN_SWARM_HOST`: a Swarm manager's engine (`unix:///path` or `tcp://host:port`); default `DOCKER_HOST`. */
  readonly swarmHost?: string;
  /** Where lobby ports are published (`TAVERN_PUBLISH_HOST`, default 127.0.0.1). */
  readonly publishHost: string;
  /** This instance's id (`TAVERN_INSTANCE_ID`); default one kept in the data dir. */
  readonly instanceId?: string;
  /** The API origin lobby containers are given (`TAVERN_LOBBY_API_ORIGIN`); default derived per network mode. */
  readonly lobbyApiOrigin?: string;
  /** Bytes of output kept per lobby (`TAVERN_LOBBY_LOG_MAX_BYTES`, default 8 MiB). */
  readonly lobbyLogMaxBytes: number;
  /**
   * The most bytes a build's archive may expand to once decompressed, as it is loaded into the
   * engine (`TAVERN_BUILD_MAX_EXPANDED_BYTES`, default 32 000 000 000: 4 × the build upload limit).
   */
  readonly buildMaxExpandedBytes: number;
  /**
   * `TAVERN_REGISTRY` (with `TAVERN_REGISTRY_INSECURE`, `TAVERN_REGISTRY_USERNAME`/`_PASSWORD`,
   * `registry-env.ts`): builds are pushed there once loaded, and lobbies run them by digest.
   */
  readonly registry?: RegistryTarget;
  /** How often the runtime reconciler runs (`TAVERN_RECONCILE_MS`, default 30 s). */
  readonly reconcileMs: number;
  /** Take the client address from `cf-connecting-ip` / `x-forwarded-for` (only behind a proxy that sets them). */
  readonly trustProxyHeaders: boolean;
  /** SQLite durability: `normal` survives a process crash, `full` a power loss too (an fsync per commit). */
  readonly sqliteSync: 'normal' | 'full';
  /** The captcha providers' verify endpoints (defaults: hCaptcha's and Turnstile's). */
  readonly hcaptchaVerifyUrl?: string;
  readonly turnstileVerifyUrl?: string;
  /** `TAVERN_RATE_LIMITS`: the request rate limits (`rate-limit.ts`); undefined when `off`. */
  readonly rateLimits?: RateLimitTable;
  /** `TAVERN_MAX_CONNECTIONS`, `TAVERN_HEADERS_TIMEOUT_MS`, `TAVERN_KEEP_ALIVE_TIMEOUT_MS` (`http.ts`). */
  readonly http: Required<Omit<HttpOptions, 'refuse'>>;
  /** `TAVERN_SHUTDOWN_GRACE_MS`: how long a shutdown waits for requests in flight before cutting them. */
  readonly shutdownGraceMs: number;
  /** The CDN listener (`TAVERN_CDN_PORT`, `TAVERN_CDN_HOST`, `TAVERN_CDN_TLS_DIR`, `TAVERN_CDN_TLS_PORT`); absent with `TAVERN_CDN_PORT=off`. */
  readonly cdn?: CdnListenEnv;
  /** S3-compatible blob storage (`TAVERN_S3_*`); absent: blobs on the local disk under the data dir. */
  readonly s3?: S3Env;
  /** The game proxy (`TAVERN_PROXY*`, `game-proxy.ts`). */
  readonly proxy: ProxyEnv;
  /**
   * `TAVERN_DEMAND_RETENTION`: how long recorded demand is kept (`7d` by default, e.g. `24h`,
   * `30d`); `off`: nothing is recorded.
   */
  readonly demandRetentionMs?: number;
  /** `TAVERN_ANALYTICS_RETENTION`: how long the dashboard's per-minute history is kept (`7d` by default). */
  readonly analyticsRetentionMs: number;
  /** `TAVERN_TIER_PRICES`: the price of a lobby-hour per tier, for the deploy preview's cost (absent: no cost). */
  readonly tierPrices?: Readonly<Record<string, number>>;
}

/** `TAVERN_S3_*`: the S3 adapter's options (its request timeout left at its default). */
export type S3Env = Omit<S3Options, 'requestTimeoutMs'>;

const ID = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const regionOf = (raw: unknown, i: number): RegionInfo => {
  if (typeof raw === 'string') raw = { id: raw };
  if (typeof raw !== 'object' || raw === null) throw new Error(`TAVERN_REGIONS[${i}] is not a region`);
  const r = raw as Record<string, unknown>;
  const id = r['id'] ?? r['region_id'];
  if (typeof id !== 'string' || !ID.test(id) || id.length > 16) throw new Error(`TAVERN_REGIONS[${i}].id must be a lowercase a-z0-9- name of at most 16 characters`);
  const display = r['displayName'] ?? r['display_name'];
  if (typeof display === 'string' && !isHumanText(display)) throw new Error(`TAVERN_REGIONS[${i}].display_name has a control, bidi or lone surrogate character`);
  const provider = r['provider'];
  const lat = r['latitude'] ?? (r['coords'] as Record<string, unknown> | undefined)?.['latitude'];
  const long = r['longitude'] ?? (r['coords'] as Record<string, unknown> | undefined)?.['longitude'];
  return {
    id,
    displayName: typeof display === 'string' ? display : id,
    provider: typeof provider === 'string' ? provider : 'Tavern',
    ...(typeof lat === 'number' && typeof long === 'number' ? { coords: { latitude: lat, longitude: long } } : {}),
  };
};

/**
 * `TAVERN_REGIONS`: a JSON array (of ids or `{id, display_name?, provider?, latitude?, longitude?}`)
 * or a comma-separated list of ids; default one region, `local`.
 *
 * @example
 * parseRegions('local,lnd-atl').map((r) => r.id); // ['local', 'lnd-atl']
 */
export function parseRegions(value: string | undefined): readonly RegionInfo[] {
  if (value === undefined || value.trim() === '') return [LOCAL_REGION];
  const trimmed = value.trim();
  const list: unknown = trimmed.startsWith('[') ? JSON.parse(trimmed) : trimmed.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (!Array.isArray(list) || list.length === 0) throw new Error('TAVERN_REGIONS must list at least one region');
  const regions = list.map(regionOf);
  if (new Set(regions.map((r) => r.id)).size !== regions.length) throw new Error('TAVERN_REGIONS lists a region twice');
  return regions;
}

const opt = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());

/** An integer variable of at least `min`, or `fallback` when unset. */
const count = (env: Readonly<Record<string, string | undefined>>, name: string, fallback: number, min: number): number => {
  const raw = opt(env[name]);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min) throw new Error(`${name} must be an integer of at least ${min}`);
  return n;
};

const flag = (env: Readonly<Record<string, string | undefined>>, name: string, fallback: boolean): boolean => {
  const raw = opt(env[name]);
  if (raw === undefined) return fallback;
  if (raw !== 'true' && raw !== 'false') throw new Error(`${name} must be "true" or "false"`);
  return raw === 'true';
};

/** `TAVERN_S3_*`: S3-compatible blobs, when `TAVERN_S3_BUCKET` is set. */
function parseS3(env: Readonly<Record<string, string | undefined>>): S3Env | undefined {
  const bucket = opt(env['TAVERN_S3_BUCKET']);
  const names = ['TAVERN_S3_ENDPOINT', 'TAVERN_S3_REGION', 'TAVERN_S3_ACCESS_KEY_ID', 'TAVERN_S3_SECRET_ACCESS_KEY', 'TAVERN_S3_PATH_STYLE'];
  if (bucket === undefined) {
    const stray = names.find((n) => opt(env[n]) !== undefined);
    if (stray !== undefined) throw new Error(`${stray} needs TAVERN_S3_BUCKET`);
    return undefined;
  }
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new Error('TAVERN_S3_BUCKET must be a bucket name (3-63 characters of a-z 0-9 . -)');
  const endpoint = opt(env['TAVERN_S3_ENDPOINT']);
  if (endpoint !== undefined && !/^https?:\/\/[^/]+\/?$/.test(endpoint)) throw new Error('TAVERN_S3_ENDPOINT must be an http(s) origin, e.g. http://127.0.0.1:4569');
  const accessKeyId = opt(env['TAVERN_S3_ACCESS_KEY_ID']);
  const secretAccessKey = opt(env['TAVERN_S3_SECRET_ACCESS_KEY']);
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) throw new Error('TAVERN_S3_ACCESS_KEY_ID and TAVERN_S3_SECRET_ACCESS_KEY go together');
  return {
    bucket,
    region: opt(env['TAVERN_S3_REGION']) ?? 'us-east-1',
    forcePathStyle: flag(env, 'TAVERN_S3_PATH_STYLE', endpoint !== undefined),
    ...(endpoint === undefined ? {} : { endpoint: endpoint.replace(/\/$/, '') }),
    ...(accessKeyId === undefined || secretAccessKey === undefined ? {} : { accessKeyId, secretAccessKey }),
  };
}

/** The smallest bound on a build's expanded size: a tar of a game server is never smaller. */
const MIN_EXPANDED_BYTES = 1024 * 1024;

/** `TAVERN_BUILD_MAX_EXPANDED_BYTES`: a whole number of bytes, at least {@link MIN_EXPANDED_BYTES}. */
function parseMaxExpanded(raw: string | undefined): number {
  const text = opt(raw);
  if (text === undefined) return DEFAULT_MAX_EXPANDED_BYTES;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < MIN_EXPANDED_BYTES) {
    throw new Error(`${MAX_EXPANDED_SETTING} must be a whole number of bytes, at least ${MIN_EXPANDED_BYTES} (1 MiB); the default is ${DEFAULT_MAX_EXPANDED_BYTES}; got ${text}`);
  }
  return n;
}

/** `TAVERN_DEMAND_RETENTION`: a duration (default 7 days), or undefined for `off`. */
function parseRetention(raw: string | undefined): number | undefined {
  const text = opt(raw) ?? '7d';
  if (text === 'off') return undefined;
  const ms = parseDuration(text);
  if (ms === undefined || ms < 3_600_000) throw new Error('TAVERN_DEMAND_RETENTION must be a duration of at least an hour (e.g. 24h, 7d) or "off"');
  return ms;
}

/** `TAVERN_ANALYTICS_RETENTION`: a duration of at least an hour (default 7 days). */
function parseAnalyticsRetention(raw: string | undefined): number {
  const text = opt(raw) ?? '7d';
  const ms = parseDuration(text);
  if (ms === undefined || ms < 3_600_000) throw new Error(`TAVERN_ANALYTICS_RETENTION must be a duration of at least an hour (e.g. 24h, 7d, 30d); got ${text}`);
  return ms;
}

/**
 * `TAVERN_TIER_PRICES`: a JSON object of tier → price of one lobby-hour (a number ≥ 0, in the
 * operator's currency), e.g. `{"basic-1d1": 0.12, "basic-1d4": 0.03}`; undefined when unset.
 */
export function parseTierPrices(raw: string | undefined): Readonly<Record<string, number>> | undefined {
  const text = opt(raw);
  if (text === undefined) return undefined;
  const fail = (why: string): never => {
    throw new Error(`TAVERN_TIER_PRICES ${why}; e.g. {"basic-1d1": 0.12, "basic-1d4": 0.03}`);
  };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return fail('is not JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return fail('must be a JSON object of tier → price per lobby-hour');
  const prices: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const [tier, price] of Object.entries(json)) {
    if (tierResources(tier) === undefined) fail(`names ${JSON.stringify(tier.slice(0, 64))}, which is not a tier (basic-<n>d<d>)`);
    if (typeof price !== 'number' || !Number.isFinite(price) || price < 0) fail(`gives ${tier} ${JSON.stringify(price)}: a price is a number ≥ 0`);
    prices[tier] = price as number;
  }
  return Object.freeze(prices);
}

/** `TAVERN_FAKE_READY_DELAY`, `TAVERN_FAKE_SEED`, `TAVERN_FAKE_LOBBY_DIR` (see {@link ServerEnv.fake}). */
function parseFakeEnv(env: Readonly<Record<string, string | undefined>>): ServerEnv['fake'] {
  const text = opt(env['TAVERN_FAKE_READY_DELAY']);
  const lobbyDir = opt(env['TAVERN_FAKE_LOBBY_DIR']);
  const seed = count(env, 'TAVERN_FAKE_SEED', 1, 0);
  if (seed > 0xffffffff) throw new Error('TAVERN_FAKE_SEED must be an integer in 0..4294967295');
  let readyDelayMs: NumericDistribution | undefined;
  if (text !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`TAVERN_FAKE_READY_DELAY must be a distribution in JSON, e.g. {"kind":"lognormal","median":2000,"p95":6000}; got ${text}`);
    }
    const problems: Problem[] = [];
    readyDelayMs = distribution(json, [], problems);
    if (readyDelayMs === undefined || problems.length > 0) {
      throw new Error(`TAVERN_FAKE_READY_DELAY is not a distribution: ${problems.map((p) => p.path.join('.')).join(', ')}`);
    }
  }
  return { seed, ...(readyDelayMs === undefined ? {} : { readyDelayMs }), ...(lobbyDir === undefined ? {} : { lobbyDir }) };
}

/** Reads the environment; throws with a clear message on a bad value. */
export function parseEnv(env: Readonly<Record<string, string | undefined>>): ServerEnv {
  const port = Number(env['TAVERN_PORT'] ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error('TAVERN_PORT must be a port number');
  const runtime = opt(env['TAVERN_RUNTIME']);
  if (runtime !== undefined && runtime !== 'docker' && runtime !== 'swarm' && runtime !== 'fake' && runtime !== 'none') throw new Error('TAVERN_RUNTIME must be "docker", "swarm", "fake" or "none"');
  const lobbyLogMaxBytes = Number(opt(env['TAVERN_LOBBY_LOG_MAX_BYTES']) ?? 8 * 1024 * 1024);
  if (!Number.isInteger(lobbyLogMaxBytes) || lobbyLogMaxBytes < 1024) throw new Error('TAVERN_LOBBY_LOG_MAX_BYTES must be a whole number of bytes, at least 1024');
  const reconcileMs = Number(opt(env['TAVERN_RECONCILE_MS']) ?? 30_000);
  if (!Number.isInteger(reconcileMs) || reconcileMs < 100) throw new Error('TAVERN_RECONCILE_MS must be a whole number of milliseconds, at least 100');
  const instanceId = opt(env['TAVERN_INSTANCE_ID']);
  if (instanceId !== undefined && !/^[A-Za-z0-9_.-]{1,64}$/.test(instanceId)) throw new Error('TAVERN_INSTANCE_ID must be 1-64 characters of A-Z a-z 0-9 _ . -');
  const sqliteSync = opt(env['TAVERN_SQLITE_SYNC']) ?? 'normal';
  if (sqliteSync !== 'normal' && sqliteSync !== 'full') throw new Error('TAVERN_SQLITE_SYNC must be "normal" or "full"');
  const rateLimits = parseRateLimits(env['TAVERN_RATE_LIMITS']);
  const http = {
    maxConnections: count(env, 'TAVERN_MAX_CONNECTIONS', HTTP_DEFAULTS.maxConnections, 1),
    headersTimeoutMs: count(env, 'TAVERN_HEADERS_TIMEOUT_MS', HTTP_DEFAULTS.headersTimeoutMs, 1_000),
    keepAliveTimeoutMs: count(env, 'TAVERN_KEEP_ALIVE_TIMEOUT_MS', HTTP_DEFAULTS.keepAliveTimeoutMs, 0),
  };
  const metricsToken = opt(env['TAVERN_METRICS_TOKEN']);
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,512}$/.test(metricsToken)) throw new Error('TAVERN_METRICS_TOKEN must be 16 to 512 visible ASCII characters (no spaces)');
  const host = opt(env['TAVERN_HOST']) ?? '127.0.0.1';
  const dataDir = opt(env['TAVERN_DATA_DIR']) ?? './.tavern';
  const cdnDomain = opt(env['TAVERN_CDN_DOMAIN']) ?? 'cdn.localhost';
  const values = {
    metricsToken,
    databaseUrl: opt(env['DATABASE_URL']),
    postgresSchema: opt(env['TAVERN_PG_SCHEMA']),
    adminToken: opt(env['TAVERN_ADMIN_TOKEN']),
    publicOrigin: opt(env['TAVERN_PUBLIC_ORIGIN']),
    cdnDomain,
    jobDomain: opt(env['TAVERN_JOB_DOMAIN']) ?? 'localhost',
    hcaptchaVerifyUrl: opt(env['TAVERN_HCAPTCHA_VERIFY_URL']),
    turnstileVerifyUrl: opt(env['TAVERN_TURNSTILE_VERIFY_URL']),
    dockerHost: opt(env['DOCKER_HOST']),
    swarmHost: opt(env['TAVERN_SWARM_HOST']),
    instanceId,
    lobbyApiOrigin: opt(env['TAVERN_LOBBY_API_ORIGIN']),
  };
  const cdn = parseCdn(env, host, cdnDomain, dataDir);
  const s3 = parseS3(env);
  const demandRetentionMs = parseRetention(env['TAVERN_DEMAND_RETENTION']);
  const analyticsRetentionMs = parseAnalyticsRetention(env['TAVERN_ANALYTICS_RETENTION']);
  const tierPrices = parseTierPrices(env['TAVERN_TIER_PRICES']);
  const fake = parseFakeEnv(env);
  const registry = parseRegistryEnv(env);
  if (registry !== undefined && (runtime === 'fake' || runtime === 'none')) {
    throw new Error(`TAVERN_REGISTRY needs a runtime that runs containers: builds are pushed through its engine (TAVERN_RUNTIME is ${runtime})`);
  }
  return {
    host,
    port,
    dataDir,
    regions: parseRegions(env['TAVERN_REGIONS']),
    egressAllow: (opt(env['TAVERN_EGRESS_ALLOW']) ?? '').split(',').map((s) => s.trim()).filter((s) => s !== ''),
    // Off by default: a client talking to Tavern directly could otherwise pick its own address and
    // dodge max_players_per_client. Turn it on behind a proxy that sets these headers.
    trustProxyHeaders: env['TAVERN_TRUST_PROXY'] === 'true',
    sqliteSync,
    publishHost: opt(env['TAVERN_PUBLISH_HOST']) ?? '127.0.0.1',
    lobbyLogMaxBytes,
    buildMaxExpandedBytes: parseMaxExpanded(env[MAX_EXPANDED_SETTING]),
    reconcileMs,
    ...parseDockerEnv(env),
    http,
    shutdownGraceMs: count(env, 'TAVERN_SHUTDOWN_GRACE_MS', 10_000, 0),
    proxy: parseProxyEnv(env, host),
    fake,
    ...(runtime === undefined ? {} : { runtime }),
    ...(rateLimits === undefined ? {} : { rateLimits }),
    ...(cdn === undefined ? {} : { cdn }),
    ...(s3 === undefined ? {} : { s3 }),
    ...(registry === undefined ? {} : { registry }),
    ...(demandRetentionMs === undefined ? {} : { demandRetentionMs }),
    analyticsRetentionMs,
    ...(tierPrices === undefined ? {} : { tierPrices }),
    ...Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)),
  };
}
