/** Analytics history's pure parts: the latency histogram, the minute rollup, merging and range series. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LobbySummary } from '../../../src/core/analytics.js';
import { bucketUpperMs, LAST_LATENCY_BUCKET, latencyBucket, latencyQuantile } from '../../../src/core/history/latency.js';
import { EMPTY_TALLY, MINUTE_MS, mergeMinutes, minuteOf, rollupMinute, type AnalyticsMinute } from '../../../src/core/history/minute.js';
import { historySeries, rangeWindow } from '../../../src/core/history/series.js';

const T0 = Date.UTC(2024, 0, 1, 12);

const lobby = (over: Partial<LobbySummary>): LobbySummary => ({
  lobbyId: 'l', lobbyGroupId: 'g', lobbyGroupNameId: 'default', regionId: 'local', createTs: 0, isReady: true, isIdle: false, isClosed: false, isOutdated: false,
  maxPlayersNormal: 8, maxPlayersDirect: 8, maxPlayersParty: 8, totalPlayerCount: 0, registeredPlayerCount: 0, ...over,
});

const row = (minute: number, over: Partial<AnalyticsMinute> = {}): AnalyticsMinute => ({
  ...rollupMinute({ namespaceId: 'ns', minute: T0 + minute * MINUTE_MS, instanceId: 'a', tally: EMPTY_TALLY, lobbies: [] }),
  ...over,
});

describe('start latency histogram', () => {
  it('a quantile is the upper bound of its bucket: never below the true value, at most a quarter above (beyond 100 ms)', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 3_000_000 }), { minLength: 1, maxLength: 50 }), fc.constantFrom(0.5, 0.95), (values, q) => {
      const histogram: Record<string, number> = {};
      for (const v of values) histogram[String(latencyBucket(v))] = (histogram[String(latencyBucket(v))] ?? 0) + 1;
      const sorted = [...values].sort((a, b) => a - b);
      const truth = sorted[Math.max(1, Math.ceil(q * values.length)) - 1] as number;
      const got = latencyQuantile(histogram, q) as number;
      expect(got).toBeGreaterThanOrEqual(truth);
      expect(got).toBeLessThanOrEqual(Math.max(100, Math.ceil(truth * 1.25) + 1));
    }));
  });

  it('buckets: 100 ms and less in the first, the longest in the last; an empty histogram has no quantile', () => {
    expect([latencyBucket(0), latencyBucket(100), latencyBucket(101), latencyBucket(125), latencyBucket(126)]).toEqual([0, 0, 1, 1, 2]);
    expect(latencyBucket(1e12)).toBe(LAST_LATENCY_BUCKET);
    expect(bucketUpperMs(0)).toBe(100);
    expect(latencyQuantile({}, 0.5)).toBeUndefined();
    expect(latencyQuantile({ '3': 0 }, 0.5)).toBeUndefined();
  });
});

describe('a minute rolled up', () => {
  it('puts each lobby in one state, adds the players, and keeps the counts, start latencies as a histogram', () => {
    const lobbies = [
      lobby({ isReady: false, totalPlayerCount: 1 }), lobby({ isClosed: true, totalPlayerCount: 3 }), lobby({ isIdle: true }),
      lobby({ totalPlayerCount: 2 }), lobby({ totalPlayerCount: 0, isIdle: false }),
    ];
    const tally = { requests: { find: 5, join: 1, create: 0 }, refusals: { LOBBY_FULL: 2 }, starts: 2, startMs: [90, 3_000, 3_100], failures: { crashed: 1 } };
    expect(rollupMinute({ namespaceId: 'ns', minute: T0 + 59_999, instanceId: 'a', tally, lobbies })).toEqual({
      namespaceId: 'ns', minute: T0, instanceId: 'a', lobbies: { starting: 1, active: 1, idle: 2, closed: 1 }, players: 6,
      requests: { find: 5, join: 1, create: 0 }, refusals: { LOBBY_FULL: 2 }, starts: 2,
      // 3,000 and 3,100 ms share the bucket up to 100 × 1.25^16 ≈ 3,553 ms.
      startLatency: { '0': 1, '16': 2 },
      failures: { crashed: 1 },
    });
    expect(minuteOf(T0 + 61_000)).toBe(T0 + MINUTE_MS);
  });

  it('merges two instances\' rows: counts and histograms add, gauges (the one world\'s) take the larger', () => {
    const a = row(0, { lobbies: { starting: 1, active: 2, idle: 0, closed: 0 }, players: 5, requests: { find: 1, join: 0, create: 1 }, refusals: { X: 1 }, starts: 1, startLatency: { '3': 1 }, failures: { crashed: 1 } });
    const b = row(0, { instanceId: 'b', lobbies: { starting: 0, active: 3, idle: 1, closed: 0 }, players: 4, requests: { find: 2, join: 1, create: 0 }, refusals: { X: 1, Y: 2 }, starts: 2, startLatency: { '3': 1, '5': 1 }, failures: {} });
    expect(mergeMinutes(a, b)).toEqual({
      ...a, lobbies: { starting: 1, active: 3, idle: 1, closed: 0 }, players: 5, requests: { find: 3, join: 1, create: 1 }, refusals: { X: 2, Y: 2 },
      starts: 3, startLatency: { '3': 2, '5': 1 }, failures: { crashed: 1 },
    });
  });
});

describe('a range as series', () => {
  it('windows end with the bucket holding now', () => {
    expect(rangeWindow('1h', T0 + 30 * MINUTE_MS + 15_000)).toEqual({ from: T0 - 29 * MINUTE_MS, to: T0 + 31 * MINUTE_MS, stepMs: MINUTE_MS });
    expect(rangeWindow('24h', T0 + 15 * MINUTE_MS)).toEqual({ from: T0 + 20 * MINUTE_MS - 86_400_000, to: T0 + 20 * MINUTE_MS, stepMs: 10 * MINUTE_MS });
    expect(rangeWindow('7d', T0 + 1)).toEqual({ from: T0 + 3_600_000 - 7 * 86_400_000, to: T0 + 3_600_000, stepMs: 3_600_000 });
  });

  it('merges instances per minute, then buckets: peaks of gauges, totals of counts, percentiles of the merged histogram; empty buckets left out', () => {
    const now = T0 + 25 * MINUTE_MS;
    const rows = [
      row(0, { players: 3, requests: { find: 2, join: 0, create: 0 }, startLatency: { '0': 1 } }),
      row(0, { instanceId: 'b', players: 3, requests: { find: 1, join: 0, create: 0 }, startLatency: { '20': 1 } }),
      row(5, { players: 7, requests: { find: 4, join: 0, create: 0 }, starts: 2 }),
      row(12, { players: 1 }),
      // Outside the day: left out.
      row(-25 * 60, { players: 99 }),
    ];
    const series = historySeries(rows, '24h', now);
    expect(series.points.map((p) => [p.at - T0, p.minutes, p.players, p.requests.find, p.starts, p.startP50Ms, p.startP95Ms])).toEqual([
      [0, 2, 7, 7, 2, 100, bucketUpperMs(20)],
      [10 * MINUTE_MS, 1, 1, 0, 0, undefined, undefined],
    ]);
    expect(series.points[1]).not.toHaveProperty('startP50Ms');
    expect(historySeries([], '1h', now).points).toEqual([]);
  });
});
