/**
 * The deploy preview over time, for charts: each run's per-minute samples folded into at most
 * {@link SERIES_POINTS} buckets of whole minutes (a bucket holds its peak), so the answer is as
 * large for a week as for an hour. Players, lobbies running (idle ones included), ports in use, and the worst minute's time to a ready
 * seat (p95), live and new side by side on one time axis.
 */
import type { Sample } from '../world/metrics.js';

/** The most buckets a series holds. */
export const SERIES_POINTS = 120;
const MINUTE_MS = 60_000;

/** One run's values per bucket (`null`: no player got a ready seat in it). */
export interface RunSeries {
  readonly players: readonly number[];
  readonly lobbies: readonly number[];
  readonly ports: readonly number[];
  readonly waitP95Ms: readonly (number | null)[];
}

export interface PreviewSeries {
  /** Where the first bucket starts (epoch ms) and how wide each is. */
  readonly from: number;
  readonly stepMs: number;
  readonly live: RunSeries;
  readonly next: RunSeries;
}

/**
 * The bucket width for a window: whole minutes, at most {@link SERIES_POINTS} buckets.
 *
 * @example
 * seriesStep(7 * 86_400_000); // 5_040_000 (84 minutes)
 */
export const seriesStep = (durationMs: number): number => Math.max(1, Math.ceil(durationMs / SERIES_POINTS / MINUTE_MS)) * MINUTE_MS;

const peak = (a: number | null, b: number): number | null => (Number.isNaN(b) ? a : a === null ? b : Math.max(a, b));

/** One run's samples (virtual ms since the window's start) in `n` buckets of `stepMs`. */
function bucketed(samples: readonly Sample[], stepMs: number, n: number): RunSeries {
  const players = new Array<number>(n).fill(0);
  const lobbies = new Array<number>(n).fill(0);
  const ports = new Array<number>(n).fill(0);
  const waits = new Array<number | null>(n).fill(null);
  for (const s of samples) {
    // A sample closes the minute before it: at t it counts in the bucket holding t − 1.
    const i = Math.min(n - 1, Math.max(0, Math.floor((s.t - 1) / stepMs)));
    players[i] = Math.max(players[i] ?? 0, s.ccu);
    lobbies[i] = Math.max(lobbies[i] ?? 0, s.lobbiesActive);
    ports[i] = Math.max(ports[i] ?? 0, s.portsInUse);
    waits[i] = peak(waits[i] ?? null, s.waitP95);
  }
  return { players, lobbies, ports, waitP95Ms: waits };
}

/**
 * Both runs' series over the window `from`..`to` (epoch ms).
 *
 * @example
 * const s = previewSeries(from, to, live.samples, next.samples);
 * s.next.lobbies.length <= SERIES_POINTS; // true
 */
export function previewSeries(from: number, to: number, live: readonly Sample[], next: readonly Sample[]): PreviewSeries {
  const stepMs = seriesStep(Math.max(1, to - from));
  const n = Math.max(1, Math.ceil((to - from) / stepMs));
  return { from, stepMs, live: bucketed(live, stepMs, n), next: bucketed(next, stepMs, n) };
}
