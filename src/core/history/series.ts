/**
 * An analytics history range as chart series: the minute rows of a namespace merged into buckets
 * of a fixed step (a minute over an hour, ten minutes over a day, an hour over a week). Gauges
 * (lobbies, players) are the peak of the bucket, counts its total, start latency percentiles from
 * its merged histogram. A bucket without rows (the server was not running) is left out: a chart
 * shows the gap.
 */
import { latencyQuantile } from './latency.js';
import { MINUTE_MS, mergeMinutes, type AnalyticsMinute, type LobbiesByState, type RequestCounts } from './minute.js';

export const HISTORY_RANGES = ['1h', '24h', '7d'] as const;
export type HistoryRange = (typeof HISTORY_RANGES)[number];

/** Each range's length and bucket step (ms). */
export const RANGE_SPANS: Readonly<Record<HistoryRange, { readonly spanMs: number; readonly stepMs: number }>> = Object.freeze({
  '1h': { spanMs: 60 * MINUTE_MS, stepMs: MINUTE_MS },
  '24h': { spanMs: 24 * 60 * MINUTE_MS, stepMs: 10 * MINUTE_MS },
  '7d': { spanMs: 7 * 24 * 60 * MINUTE_MS, stepMs: 60 * MINUTE_MS },
});

/** One bucket of a range. */
export interface HistoryPoint {
  /** The bucket's start (epoch ms). */
  readonly at: number;
  /** Minutes with a row in the bucket. */
  readonly minutes: number;
  readonly lobbies: LobbiesByState;
  readonly players: number;
  readonly requests: RequestCounts;
  readonly refusals: Readonly<Record<string, number>>;
  readonly starts: number;
  readonly startP50Ms?: number;
  readonly startP95Ms?: number;
  readonly failures: Readonly<Record<string, number>>;
}

export interface HistorySeries {
  readonly range: HistoryRange;
  /** The first bucket's start and the end of the last (epoch ms): `to` is the end of the current minute. */
  readonly from: number;
  readonly to: number;
  readonly stepMs: number;
  readonly points: readonly HistoryPoint[];
}

/**
 * Where a range starts and ends at `now`, aligned to its step: the current (partial) bucket last.
 *
 * @example
 * rangeWindow('1h', Date.UTC(2024, 0, 1, 12, 30, 15)) // { from: 11:31, to: 12:31 }
 */
export function rangeWindow(range: HistoryRange, now: number): { readonly from: number; readonly to: number; readonly stepMs: number } {
  const { spanMs, stepMs } = RANGE_SPANS[range];
  const to = Math.floor(now / stepMs) * stepMs + stepMs;
  return { from: to - spanMs, to, stepMs };
}

/**
 * The series of a range from the minute rows of one namespace (any order, any instance).
 *
 * @example
 * historySeries(rows, '24h', now).points.map((p) => p.players)
 */
export function historySeries(rows: readonly AnalyticsMinute[], range: HistoryRange, now: number): HistorySeries {
  const { from, to, stepMs } = rangeWindow(range, now);
  // One row per minute first (instances merged: gauges are the world's, so they do not add).
  const byMinute = new Map<number, AnalyticsMinute>();
  for (const r of rows) {
    if (r.minute < from || r.minute >= to) continue;
    const seen = byMinute.get(r.minute);
    byMinute.set(r.minute, seen === undefined ? r : mergeMinutes(seen, r));
  }
  const buckets = new Map<number, { row: AnalyticsMinute; minutes: number }>();
  for (const [minute, row] of [...byMinute].sort((a, b) => a[0] - b[0])) {
    const at = from + Math.floor((minute - from) / stepMs) * stepMs;
    const seen = buckets.get(at);
    buckets.set(at, seen === undefined ? { row, minutes: 1 } : { row: mergeMinutes(seen.row, row), minutes: seen.minutes + 1 });
  }
  const points = [...buckets].sort((a, b) => a[0] - b[0]).map(([at, { row, minutes }]): HistoryPoint => {
    const p50 = latencyQuantile(row.startLatency, 0.5);
    const p95 = latencyQuantile(row.startLatency, 0.95);
    return {
      at, minutes, lobbies: row.lobbies, players: row.players, requests: row.requests, refusals: row.refusals, starts: row.starts,
      ...(p50 === undefined ? {} : { startP50Ms: p50 }), ...(p95 === undefined ? {} : { startP95Ms: p95 }), failures: row.failures,
    };
  });
  return { range, from, to, stepMs, points };
}
