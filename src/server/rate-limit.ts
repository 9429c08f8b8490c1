/**
 * Request rate limits (wire.md §1.7): fixed windows per client address and endpoint key, as Rivet
 * counted them in Redis. Every request counts against each bucket of its endpoint's key, refused
 * ones too; a request over any bucket is answered 429 `API_RATE_LIMIT` with `Retry-After` and the
 * end of the window (Unix ms) as metadata. Counters live in this process: behind a load balancer,
 * N instances let a client make N times the limit. The CDN counts its failed basic-auth attempts
 * against the `cdn-auth-failures` buckets of the same table (Tavern).
 */
import { matchError } from '../core/errors.js';
import type { Clock } from '../io/index.js';
import { addressOf } from './client.js';
import { errorResponse } from './errors.js';
import type { Incoming, Outgoing } from './incoming.js';

/** At most `hits` requests per fixed window of `windowMs` (windows start at multiples of it since the epoch). */
export interface RateBucket {
  readonly hits: number;
  readonly windowMs: number;
}

/** The endpoint keys with buckets of their own, and the defaults of the other endpoints by method. */
export const RATE_KEYS = [
  'lobby-find', 'lobby-create', 'lobby-list', 'regions', 'lobby-ready', 'lobby-closed', 'lobby-state',
  'players-connected', 'players-disconnected', 'players-statistics', 'get', 'post', 'put', 'delete',
  'cdn-auth-failures',
] as const;

export type RateKey = (typeof RATE_KEYS)[number];

/** Buckets by key; a key with none is not limited. */
export type RateLimitTable = Readonly<Record<RateKey, readonly RateBucket[]>>;

const MINUTE = 60_000;
const QUARTER = 15 * MINUTE;
const HOUR = 60 * MINUTE;

/**
 * Rivet's bucket `{count, duration}` (default duration 15 min): `count` per minute on average,
 * so `count × duration / 1 min` hits per window of `duration`.
 */
const rivet = (count: number, windowMs = QUARTER): RateBucket => ({ hits: (count * windowMs) / MINUTE, windowMs });

/**
 * Rivet 23.2's limits (`svc/api/matchmaker/src/route/mod.rs`, `lib/api-helper/macros`): find and
 * join share `lobby-find` (16 a minute, and 200 a minute averaged over an hour); endpoints
 * without a key of their own get their method's default, counted apart for each endpoint.
 * `cdn-auth-failures` (Tavern): a client address that failed the CDN's basic auth 10 times in a
 * minute, or 60 in an hour, is answered 429 until the window ends, its password not checked.
 */
export const DEFAULT_RATE_LIMITS: RateLimitTable = Object.freeze({
  'lobby-find': [rivet(16, MINUTE), rivet(200, HOUR)],
  'lobby-create': [rivet(3)],
  'lobby-list': [rivet(4)],
  regions: [rivet(32)],
  'lobby-ready': [rivet(512)],
  'lobby-closed': [rivet(1024)],
  'lobby-state': [rivet(1024)],
  'players-connected': [rivet(16_384)],
  'players-disconnected': [rivet(16_384)],
  'players-statistics': [rivet(4)],
  get: [rivet(128)],
  post: [rivet(16)],
  put: [rivet(16)],
  delete: [rivet(16)],
  'cdn-auth-failures': [{ hits: 10, windowMs: MINUTE }, { hits: 60, windowMs: HOUR }],
});

/** The routes with a key of their own (`METHOD pattern`). */
const ROUTE_KEYS: Readonly<Record<string, RateKey>> = {
  'POST /matchmaker/lobbies/find': 'lobby-find',
  'POST /matchmaker/lobbies/join': 'lobby-find',
  'POST /matchmaker/lobbies/create': 'lobby-create',
  'GET /matchmaker/lobbies/list': 'lobby-list',
  'GET /matchmaker/regions': 'regions',
  'POST /matchmaker/lobbies/ready': 'lobby-ready',
  'PUT /matchmaker/lobbies/closed': 'lobby-closed',
  'PUT /matchmaker/lobbies/state': 'lobby-state',
  'POST /matchmaker/players/connected': 'players-connected',
  'POST /matchmaker/players/disconnected': 'players-disconnected',
  'GET /matchmaker/players/statistics': 'players-statistics',
};

/** Never limited: the health check, and presigned PUTs (object storage's in Rivet; their signature is the authorisation). */
const EXEMPT = new Set(['GET /health', 'PUT /uploads/{key*}']);

/**
 * What a route counts against: the counter's name (its key, or the route itself for a default)
 * and the buckets; undefined when it is not limited.
 *
 * @example
 * rateLimitOf(DEFAULT_RATE_LIMITS, 'POST', '/matchmaker/lobbies/join'); // { name: 'lobby-find', buckets: [...] }
 */
export const rateLimitOf = (table: RateLimitTable, method: string, pattern: string): { readonly name: string; readonly buckets: readonly RateBucket[] } | undefined => {
  const route = `${method} ${pattern}`;
  if (EXEMPT.has(route)) return undefined;
  const key = ROUTE_KEYS[route];
  const buckets = key === undefined ? table[method.toLowerCase() as RateKey] : table[key];
  return buckets === undefined || buckets.length === 0 ? undefined : { name: key ?? route, buckets };
};

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: MINUTE, h: HOUR };
const BUCKET = /^(\d{1,9})\/(\d{1,6})(ms|s|m|h)$/;

/**
 * `TAVERN_RATE_LIMITS`: unset, empty or `on` for {@link DEFAULT_RATE_LIMITS}; `off` for none;
 * else `;`-separated overrides of the defaults, `key=off` or `key=<hits>/<window>[+...]` with a
 * window in `ms`, `s`, `m` or `h` (keys: {@link RATE_KEYS}). Throws on anything else.
 *
 * @example
 * parseRateLimits('lobby-find=64/1m+2000/1h;lobby-create=off'); // the defaults, with those two replaced
 */
export function parseRateLimits(value: string | undefined): RateLimitTable | undefined {
  const spec = value?.trim() ?? '';
  if (spec === '' || spec === 'on') return DEFAULT_RATE_LIMITS;
  if (spec === 'off') return undefined;
  const table: Record<string, readonly RateBucket[]> = { ...DEFAULT_RATE_LIMITS };
  for (const entry of spec.split(';').map((e) => e.trim()).filter((e) => e !== '')) {
    const [key = '', limits = ''] = entry.split('=').map((p) => p.trim());
    if (!(RATE_KEYS as readonly string[]).includes(key)) throw new Error(`TAVERN_RATE_LIMITS: unknown key ${JSON.stringify(key)} (keys: ${RATE_KEYS.join(', ')})`);
    table[key] = limits === 'off' ? [] : limits.split('+').map((b) => {
      const m = BUCKET.exec(b.trim());
      const hits = Number(m?.[1]);
      const windowMs = Number(m?.[2]) * (UNITS[m?.[3] ?? ''] ?? NaN);
      if (m === null || hits < 1 || !(windowMs >= 1)) throw new Error(`TAVERN_RATE_LIMITS: ${key} needs off or <hits>/<window>[+...] with a window in ms, s, m or h, got ${JSON.stringify(limits)}`);
      return { hits, windowMs };
    });
  }
  return table as RateLimitTable;
}

/**
 * The address a client is counted under: an IPv4 address as it is, an IPv6 address by its /64
 * (one subscriber's prefix: a host picks any address in it at will).
 *
 * @example
 * rateClient('2001:db8:1:2:aaaa::1'); // '2001:db8:1:2::/64'
 */
export const rateClient = (ip: string): string => {
  // An address already checked (`addressOf`, or the socket's): only IPv6 holds a colon.
  if (!ip.includes(':')) return ip;
  const [head = '', tail] = ip.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
};

/**
 * One client's counters under one name: per bucket the end of its window (ms) and its hits, flat
 * (`[until0, hits0, until1, hits1, ...]`, numbers only, so V8 keeps them unboxed and a hit writes
 * in place); the client's counters under other names follow in `next`.
 */
interface Counters {
  readonly name: string;
  readonly windows: number[];
  next: Counters | undefined;
}

/**
 * Fixed-window counters per client, counter name and bucket, on an injected clock. Counters whose
 * window ended are swept once a minute; past `maxCounters` counter sets (one per client and name)
 * the oldest clients go first (they start a fresh window), so memory stays bounded whatever
 * addresses arrive. They are kept by client address, as it comes: a hit builds no key string, and
 * a client seen before allocates nothing.
 *
 * @example
 * const limiter = new RateLimiter(clock);
 * const retryAt = limiter.hit('lobby-find', DEFAULT_RATE_LIMITS['lobby-find'], '203.0.113.7'); // undefined: allowed
 */
export class RateLimiter {
  readonly #clock: Clock;
  readonly #maxCounters: number;
  readonly #clients = new Map<string, Counters>();
  /** Counter sets held, over every client. */
  #sets = 0;
  #nextSweep = 0;

  constructor(clock: Clock, options: { readonly maxCounters?: number } = {}) {
    this.#clock = clock;
    this.#maxCounters = options.maxCounters ?? 100_000;
  }

  /** Counter sets held (for tests and metrics). */
  get size(): number {
    return this.#sets;
  }

  /**
   * Whether `client` already used up a bucket in its current window, counting nothing: the time
   * (Unix ms) the last such window ends, or undefined when one more {@link hit} is allowed.
   */
  full(name: string, buckets: readonly RateBucket[], client: string): number | undefined {
    const now = this.#clock.now();
    let at = this.#clients.get(client);
    while (at !== undefined && at.name !== name) at = at.next;
    if (at === undefined) return undefined;
    let retryAt: number | undefined;
    for (let i = 0; i < buckets.length; i++) {
      const until = at.windows[2 * i] ?? 0;
      if (now < until && (at.windows[2 * i + 1] ?? 0) >= (buckets[i] as RateBucket).hits) retryAt = Math.max(retryAt ?? 0, until);
    }
    return retryAt;
  }

  /**
   * Counts one request of `client` against every bucket; when it is over any of them, the time
   * (Unix ms) the last of those windows ends, after which it may try again.
   */
  hit(name: string, buckets: readonly RateBucket[], client: string): number | undefined {
    const now = this.#clock.now();
    if (now >= this.#nextSweep) this.#sweep(now);
    const windows = this.#counters(name, buckets.length, client, now);
    let retryAt: number | undefined;
    for (let i = 0; i < buckets.length; i++) {
      const { hits, windowMs } = buckets[i] as RateBucket;
      let until = windows[2 * i] as number;
      if (now >= until) {
        until = (Math.floor(now / windowMs) + 1) * windowMs;
        windows[2 * i] = until;
        windows[2 * i + 1] = 0;
      }
      const n = (windows[2 * i + 1] as number) + 1;
      windows[2 * i + 1] = n;
      if (n > hits) retryAt = Math.max(retryAt ?? 0, until);
    }
    return retryAt;
  }

  /** The client's windows under `name`, made (all ended) if it has none. */
  #counters(name: string, buckets: number, client: string, now: number): number[] {
    const first = this.#clients.get(client);
    let last: Counters | undefined;
    for (let at = first; at !== undefined; at = at.next) {
      if (at.name === name) return at.windows;
      last = at;
    }
    const windows: number[] = [];
    for (let i = 0; i < buckets; i++) windows.push(0, 0);
    const made: Counters = { name, windows, next: undefined };
    if (last === undefined) this.#clients.set(client, made);
    else last.next = made;
    if (++this.#sets > this.#maxCounters) this.#evict(now);
    return windows;
  }

  /** Drops the counter sets whose every window ended, and the clients left with none. */
  #sweep(now: number): void {
    for (const [client, first] of this.#clients) {
      let head: Counters | undefined;
      let tail: Counters | undefined;
      for (let at: Counters | undefined = first; at !== undefined; at = at.next) {
        if (ended(at.windows, now)) {
          this.#sets--;
          continue;
        }
        if (tail === undefined) head = at;
        else tail.next = at;
        tail = at;
      }
      if (tail !== undefined) tail.next = undefined;
      if (head === undefined) this.#clients.delete(client);
      else if (head !== first) this.#clients.set(client, head);
    }
    this.#nextSweep = now + MINUTE;
  }

  /** Sweeps, then drops the oldest clients until a tenth of the room is free. */
  #evict(now: number): void {
    this.#sweep(now);
    const target = Math.floor(this.#maxCounters * 0.9);
    for (const [client, first] of this.#clients) {
      if (this.#sets <= target) break;
      for (let at: Counters | undefined = first; at !== undefined; at = at.next) this.#sets--;
      this.#clients.delete(client);
    }
  }
}

/**
 * The `Retry-After` seconds until `retryAt` (at least 1).
 *
 * @example
 * retryAfter(61_500, 60_000); // 2
 */
export const retryAfter = (retryAt: number, now: number): number => Math.max(1, Math.ceil((retryAt - now) / 1000));

/**
 * The address a request is counted under: its client address ({@link addressOf}: proxy headers
 * when trusted), or the TCP peer when that is missing or malformed; an IPv6 one by its /64.
 *
 * @example
 * rateClientOf(fromNode(req, res), false); // '203.0.113.7'
 */
export const rateClientOf = (request: Pick<Incoming, 'header' | 'remoteAddress'>, trustProxyHeaders: boolean): string => {
  const address = addressOf(request, trustProxyHeaders);
  return rateClient(address.ok ? address.value : (request.remoteAddress ?? 'unknown'));
};

/** Whether every window of a counter set ended by `now`. */
const ended = (windows: readonly number[], now: number): boolean => {
  for (let i = 0; i < windows.length; i += 2) if (now < (windows[i] as number)) return false;
  return true;
};

/** What the gate needs of the app: the settings it reads the client address with, and the admin check. */
export interface GateDeps {
  readonly clock: Clock;
  readonly trustProxyHeaders: boolean;
  readonly isAdmin: (token: string) => Promise<boolean>;
}

/**
 * The app's rate-limit gate for `table`: undefined when a request may go on, else its 429 answer.
 * A request carrying the admin token in `x-bypass-token` (Rivet's bypass header) is not counted.
 * The client is the address the matchmaker sees (proxy headers when trusted), or the TCP peer
 * when that address is missing or malformed (the request fails on it later, if it needs it).
 * Synchronous unless a bypass token must be checked, so that a counted request goes on in the
 * same microtask (a find that waited a turn here could miss its group commit).
 *
 * @example
 * const gate = rateLimitGate(DEFAULT_RATE_LIMITS, { clock, trustProxyHeaders, isAdmin });
 * const refused = gate(request, match.route);
 * if (refused !== undefined) { const answer = await refused; if (answer) return answer; }
 */
export function rateLimitGate(table: RateLimitTable, deps: GateDeps): (request: Incoming, route: { readonly method: string; readonly pattern: string }) => Outgoing | Promise<Outgoing | undefined> | undefined {
  const limiter = new RateLimiter(deps.clock);
  const limits = new Map<object, ReturnType<typeof rateLimitOf>>();
  const count = (request: Incoming, limit: NonNullable<ReturnType<typeof rateLimitOf>>): Outgoing | undefined => {
    const retryAt = limiter.hit(limit.name, limit.buckets, rateClientOf(request, deps.trustProxyHeaders));
    if (retryAt === undefined) return undefined;
    const seconds = retryAfter(retryAt, deps.clock.now());
    return errorResponse(matchError('API_RATE_LIMIT', { key: limit.name, seconds }, { metadata: retryAt }), { 'retry-after': String(seconds) });
  };
  return (request, route) => {
    let limit = limits.get(route);
    if (!limits.has(route)) limits.set(route, (limit = rateLimitOf(table, route.method, route.pattern)));
    if (limit === undefined) return undefined;
    const bypass = request.header('x-bypass-token');
    if (bypass === null) return count(request, limit);
    return deps.isAdmin(bypass).then((admin) => (admin ? undefined : count(request, limit)));
  };
}
