/**
 * Request rate limits (wire.md §1.7): fixed windows per client address and endpoint key on the
 * injected clock, 429 `API_RATE_LIMIT` with `Retry-After` and the window's end as metadata.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/server/env.js';
import { DEFAULT_RATE_LIMITS, parseRateLimits, rateClient, rateLimitOf, RateLimiter } from '../../src/server/rate-limit.js';
import { ADMIN, harness, ManualClock, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

const MINUTE = 60_000;
/** A time 10 s into a minute (windows start at multiples of their length since the epoch). */
const T0 = Date.UTC(2024, 0, 1, 12, 0, 10);

describe('RateLimiter (fixed windows on the injected clock)', () => {
  it('allows `hits` per window, refuses the next until the window ends, then starts over', () => {
    const clock = new ManualClock();
    clock.set(T0);
    const limiter = new RateLimiter(clock);
    const bucket = [{ hits: 3, windowMs: MINUTE }];
    expect([1, 2, 3].map(() => limiter.hit('k', bucket, 'a'))).toEqual([undefined, undefined, undefined]);
    const end = Date.UTC(2024, 0, 1, 12, 1, 0);
    expect(limiter.hit('k', bucket, 'a')).toBe(end);
    // Refused requests count too (as in Rivet): still refused later in the window.
    clock.set(end - 1);
    expect(limiter.hit('k', bucket, 'a')).toBe(end);
    // Another client, another counter name: their own counters.
    expect(limiter.hit('k', bucket, 'b')).toBeUndefined();
    expect(limiter.hit('other', bucket, 'a')).toBeUndefined();
    clock.set(end);
    expect(limiter.hit('k', bucket, 'a')).toBeUndefined();
  });

  it('counts every bucket of a key; the answer names the end of the last window exceeded', () => {
    const clock = new ManualClock();
    clock.set(T0);
    const limiter = new RateLimiter(clock);
    const buckets = [{ hits: 2, windowMs: MINUTE }, { hits: 3, windowMs: 60 * MINUTE }];
    expect(limiter.hit('k', buckets, 'a')).toBeUndefined();
    expect(limiter.hit('k', buckets, 'a')).toBeUndefined();
    expect(limiter.hit('k', buckets, 'a')).toBe(Date.UTC(2024, 0, 1, 12, 1, 0));
    clock.set(Date.UTC(2024, 0, 1, 12, 1, 0));
    // The minute started over, the hour did not: 4 hits this hour.
    expect(limiter.hit('k', buckets, 'a')).toBe(Date.UTC(2024, 0, 1, 13, 0, 0));
  });

  it('keeps a bounded number of counters, sweeping ended windows and then the oldest', () => {
    const clock = new ManualClock();
    clock.set(T0);
    const limiter = new RateLimiter(clock, { maxCounters: 100 });
    const bucket = [{ hits: 1, windowMs: MINUTE }];
    for (let i = 0; i < 1_000; i++) limiter.hit('k', bucket, `10.0.${i >> 8}.${i & 255}`);
    expect(limiter.size).toBeLessThanOrEqual(100);
    // The newest clients are still counted.
    expect(limiter.hit('k', bucket, '10.0.3.231')).toBe(Date.UTC(2024, 0, 1, 12, 1, 0));
    clock.set(T0 + 2 * MINUTE);
    limiter.hit('k', bucket, 'fresh');
    expect(limiter.size).toBe(1);
  });

  it('full: whether a bucket is used up in its window, counting nothing (the CDN checks before, counts failures after)', () => {
    const clock = new ManualClock();
    clock.set(T0);
    const limiter = new RateLimiter(clock);
    const buckets = [{ hits: 2, windowMs: MINUTE }, { hits: 3, windowMs: 60 * MINUTE }];
    expect(limiter.full('k', buckets, 'a')).toBeUndefined();
    limiter.hit('k', buckets, 'a');
    expect(limiter.full('k', buckets, 'a')).toBeUndefined();
    limiter.hit('k', buckets, 'a');
    expect(limiter.full('k', buckets, 'a')).toBe(Date.UTC(2024, 0, 1, 12, 1, 0));
    expect(limiter.full('k', buckets, 'a')).toBe(Date.UTC(2024, 0, 1, 12, 1, 0));
    expect(limiter.full('k', buckets, 'b')).toBeUndefined();
    clock.set(Date.UTC(2024, 0, 1, 12, 1, 0));
    expect(limiter.full('k', buckets, 'a')).toBeUndefined();
    limiter.hit('k', buckets, 'a');
    // The hour's bucket is used up now (3 of 3): its end.
    expect(limiter.full('k', buckets, 'a')).toBe(Date.UTC(2024, 0, 1, 13, 0, 0));
  });

  it('keeps a client\'s counters under each name apart; a sweep drops those whose windows all ended, and only those', () => {
    const clock = new ManualClock();
    clock.set(T0);
    const limiter = new RateLimiter(clock);
    const minute = [{ hits: 1, windowMs: MINUTE }];
    const hour = [{ hits: 1, windowMs: 60 * MINUTE }];
    expect(limiter.hit('short', minute, 'a')).toBeUndefined();
    expect(limiter.hit('long', hour, 'a')).toBeUndefined();
    expect(limiter.hit('short', minute, 'b')).toBeUndefined();
    expect(limiter.size).toBe(3);
    expect(limiter.hit('short', minute, 'a')).toBe(Date.UTC(2024, 0, 1, 12, 1, 0));
    expect(limiter.hit('long', hour, 'a')).toBe(Date.UTC(2024, 0, 1, 13, 0, 0));
    // Two minutes on, the sweep keeps only a's hour.
    clock.set(T0 + 2 * MINUTE);
    expect(limiter.hit('long', hour, 'a')).toBe(Date.UTC(2024, 0, 1, 13, 0, 0));
    expect(limiter.size).toBe(1);
    expect(limiter.hit('short', minute, 'a')).toBeUndefined();
    expect(limiter.size).toBe(2);
  });

  it('counts an IPv6 client by its /64, an IPv4 client by its address', () => {
    expect(rateClient('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(rateClient('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(rateClient('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(rateClient('::1')).toBe('0:0:0:0::/64');
    expect(rateClient('203.0.113.7')).toBe('203.0.113.7');
  });
});

describe('the limits and their configuration', () => {
  it('are Rivet 23.2\'s: find and join share lobby-find (16 a minute and 12,000 an hour), other endpoints their method\'s default each', () => {
    const t = DEFAULT_RATE_LIMITS;
    expect(rateLimitOf(t, 'POST', '/matchmaker/lobbies/find')).toEqual({ name: 'lobby-find', buckets: [{ hits: 16, windowMs: MINUTE }, { hits: 12_000, windowMs: 60 * MINUTE }] });
    expect(rateLimitOf(t, 'POST', '/matchmaker/lobbies/join')?.name).toBe('lobby-find');
    expect(rateLimitOf(t, 'POST', '/matchmaker/lobbies/create')).toEqual({ name: 'lobby-create', buckets: [{ hits: 45, windowMs: 15 * MINUTE }] });
    expect(rateLimitOf(t, 'GET', '/matchmaker/lobbies/list')?.buckets).toEqual([{ hits: 60, windowMs: 15 * MINUTE }]);
    expect(rateLimitOf(t, 'POST', '/matchmaker/players/connected')?.buckets).toEqual([{ hits: 245_760, windowMs: 15 * MINUTE }]);
    expect(rateLimitOf(t, 'GET', '/cloud/games')).toEqual({ name: 'GET /cloud/games', buckets: [{ hits: 1920, windowMs: 15 * MINUTE }] });
    expect(rateLimitOf(t, 'POST', '/cloud/games')).toEqual({ name: 'POST /cloud/games', buckets: [{ hits: 240, windowMs: 15 * MINUTE }] });
    expect(rateLimitOf(t, 'GET', '/health')).toBeUndefined();
    expect(rateLimitOf(t, 'PUT', '/uploads/{key*}')).toBeUndefined();
    // Tavern's: failed CDN basic-auth attempts per client address.
    expect(t['cdn-auth-failures']).toEqual([{ hits: 10, windowMs: MINUTE }, { hits: 60, windowMs: 60 * MINUTE }]);
  });

  it('TAVERN_RATE_LIMITS: on by default, off, or overrides per key; a bad value is refused', () => {
    expect(parseEnv({}).rateLimits).toBe(DEFAULT_RATE_LIMITS);
    expect(parseEnv({ TAVERN_RATE_LIMITS: 'on' }).rateLimits).toBe(DEFAULT_RATE_LIMITS);
    expect(parseEnv({ TAVERN_RATE_LIMITS: 'off' }).rateLimits).toBeUndefined();
    const t = parseRateLimits('lobby-find=64/1m+2000/1h; lobby-create=off;get=500/30s');
    expect(t?.['lobby-find']).toEqual([{ hits: 64, windowMs: MINUTE }, { hits: 2000, windowMs: 60 * MINUTE }]);
    expect(t?.['get']).toEqual([{ hits: 500, windowMs: 30_000 }]);
    expect(t?.['lobby-list']).toEqual(DEFAULT_RATE_LIMITS['lobby-list']);
    expect(t === undefined ? 'off' : rateLimitOf(t, 'POST', '/matchmaker/lobbies/create')).toBeUndefined();
    expect(parseRateLimits('cdn-auth-failures=5/1m+20/1h')?.['cdn-auth-failures']).toEqual([{ hits: 5, windowMs: MINUTE }, { hits: 20, windowMs: 60 * MINUTE }]);
    expect(parseRateLimits('cdn-auth-failures=off')?.['cdn-auth-failures']).toEqual([]);
    for (const bad of ['lobby-find=16', 'nope=1/1m', 'lobby-find=0/1m', 'lobby-find=1/0m', 'lobby-find=1/1d', 'post']) {
      expect(() => parseEnv({ TAVERN_RATE_LIMITS: bad }), bad).toThrow(/TAVERN_RATE_LIMITS/);
    }
  });
});

describe('the limits over HTTP', () => {
  const find = (token: string, ip: string, headers: Record<string, string> = {}) =>
    h?.call('POST', '/matchmaker/lobbies/find', { token, headers: { 'x-forwarded-for': ip, ...headers }, body: { game_modes: ['none'] } });

  it('the 17th find or join of a minute from one address is 429 API_RATE_LIMIT, with Retry-After and the window end as metadata', async () => {
    h = harness({ config: { rateLimits: DEFAULT_RATE_LIMITS } });
    h.clock.set(T0);
    const { pub } = await h.setup();
    const codes: unknown[] = [];
    for (let i = 0; i < 16; i++) codes.push((await (i % 2 === 0 ? find(pub, '198.51.100.1') : h.call('POST', '/matchmaker/lobbies/join', { token: pub, headers: { 'x-forwarded-for': '198.51.100.1' }, body: { lobby_id: 'x' } })))?.body['code']);
    // Refused by the matchmaker (no such mode, no such lobby), but counted.
    expect(new Set(codes)).toEqual(new Set(['MATCHMAKER_GAME_MODE_NOT_FOUND', 'MATCHMAKER_LOBBY_NOT_FOUND']));
    const limited = await find(pub, '198.51.100.1');
    expect(limited?.status).toBe(429);
    const end = Date.UTC(2024, 0, 1, 12, 1, 0);
    expect(limited?.body).toEqual({ code: 'API_RATE_LIMIT', message: 'Too many requests (lobby-find): try again in 50 s.', metadata: end });
    expect(limited?.headers.get('retry-after')).toBe('50');
    expect(limited?.headers.get('rvt-ray-id')).toMatch(/^[0-9a-f-]{36}$/);
    // Another address is not affected; the same one is again once the window ends.
    expect((await find(pub, '198.51.100.2'))?.status).toBe(400);
    h.clock.set(end);
    expect((await find(pub, '198.51.100.1'))?.status).toBe(400);
  });

  it('the admin token in x-bypass-token is not counted; the health check and presigned PUTs never are', async () => {
    h = harness({ config: { rateLimits: parseRateLimits('lobby-find=2/1m;get=2/1m;put=1/1m') ?? DEFAULT_RATE_LIMITS } });
    h.clock.set(T0);
    // The set-up's one PUT (the namespace's version) takes the only PUT of the minute from its address.
    const { pub, gameId } = await h.setup();
    for (let i = 0; i < 5; i++) expect((await find(pub, '198.51.100.1', { 'x-bypass-token': ADMIN }))?.status).toBe(400);
    expect((await find(pub, '198.51.100.1', { 'x-bypass-token': 'not-the-admin' }))?.status).toBe(400);
    expect((await find(pub, '198.51.100.1'))?.status).toBe(400);
    expect((await find(pub, '198.51.100.1'))?.status).toBe(429);
    for (let i = 0; i < 5; i++) expect((await h.call('GET', '/health', { headers: { 'x-forwarded-for': '198.51.100.1' } })).status).toBe(200);
    // Presigned PUTs from that address (three builds) are exempt; other PUTs count.
    for (let i = 0; i < 3; i++) await h.completeBuild(gameId, ADMIN);
    expect((await h.call('PUT', `/cloud/games/${gameId}/namespaces/${gameId}/version`, { token: ADMIN, body: {} })).status).toBe(429);
  });

  it('without limits configured (in-process apps, TAVERN_RATE_LIMITS=off), nothing is counted', async () => {
    h = harness();
    const { pub } = await h.setup();
    for (let i = 0; i < 40; i++) expect((await find(pub, '198.51.100.1'))?.status).toBe(400);
  });
});
