/**
 * Arrival-rate curves (arrivals per minute over virtual ms) and arrivals drawn from them as a
 * non-homogeneous Poisson process by thinning (Lewis–Shedler).
 */
import type { Stream } from '../../core/distribution.js';

/** One knot of a piecewise-linear curve: `perMinute` at `at` ms (since start, or of the period). */
export interface RatePoint {
  readonly at: number;
  readonly perMinute: number;
}

/**
 * A rate curve as data. A piecewise curve interpolates linearly between points, holds the first
 * value before the first point and the last after the last; with `period` (e.g. a day in ms) time
 * is taken modulo the period and the last point interpolates towards the first of the next period.
 */
export type RateCurve =
  | { readonly kind: 'constant'; readonly perMinute: number }
  | { readonly kind: 'piecewise'; readonly points: readonly RatePoint[]; readonly period?: number };

const MS_PER_MINUTE = 60_000;

const mod = (t: number, period: number): number => ((t % period) + period) % period;

const lerp = (a: RatePoint, b: RatePoint, t: number, bAt = b.at): number =>
  bAt === a.at ? b.perMinute : a.perMinute + ((b.perMinute - a.perMinute) * (t - a.at)) / (bAt - a.at);

/**
 * The rate (per minute) at virtual time `t` ms.
 *
 * @example
 * rateAt({ kind: 'piecewise', points: [{ at: 0, perMinute: 0 }, { at: 1000, perMinute: 10 }] }, 500); // 5
 */
export function rateAt(curve: RateCurve, t: number): number {
  if (curve.kind === 'constant') return curve.perMinute;
  const { points, period } = curve;
  const first = points[0];
  const last = points[points.length - 1];
  if (first === undefined || last === undefined) return 0;
  const u = period === undefined ? t : mod(t, period);
  if (u < first.at) return period === undefined ? first.perMinute : lerp({ at: last.at - period, perMinute: last.perMinute }, first, u);
  if (u >= last.at) return period === undefined ? last.perMinute : lerp(last, first, u, first.at + period);
  let lo = 0;
  let hi = points.length - 1; // points[lo].at <= u < points[hi].at
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((points[mid] as RatePoint).at <= u) lo = mid;
    else hi = mid;
  }
  return lerp(points[lo] as RatePoint, points[hi] as RatePoint, u);
}

/**
 * The highest rate the curve ever reaches (a piecewise-linear curve peaks at a knot).
 *
 * @example
 * peakRate({ kind: 'constant', perMinute: 3 }); // 3
 */
export function peakRate(curve: RateCurve): number {
  if (curve.kind === 'constant') return curve.perMinute;
  return curve.points.reduce((max, p) => Math.max(max, p.perMinute), 0);
}

/** The time from which the rate stays 0 forever (`Infinity` if never). */
function zeroFrom(curve: RateCurve): number {
  if (curve.kind === 'constant') return curve.perMinute > 0 ? Infinity : -Infinity;
  const { points, period } = curve;
  const lastPositive = points.findLastIndex((p) => p.perMinute > 0);
  if (lastPositive < 0) return -Infinity;
  if (period !== undefined || lastPositive === points.length - 1) return Infinity;
  return (points[lastPositive + 1] as RatePoint).at;
}

/**
 * The next arrival strictly after `t` of a Poisson process with rate `rateAt(curve, ·)`, by thinning
 * against `maxRate` (default {@link peakRate}); `undefined` if the rate is 0 from `t` on forever.
 * Throws if the curve exceeds `maxRate` at a candidate time.
 *
 * @example
 * const s = createStream(1);
 * nextArrival({ kind: 'constant', perMinute: 60 }, 0, s); // ~1000 ms on average
 */
export function nextArrival(curve: RateCurve, t: number, stream: Stream, maxRate = peakRate(curve)): number | undefined {
  const end = zeroFrom(curve);
  if (t >= end || !(maxRate > 0)) return undefined;
  const meanGap = MS_PER_MINUTE / maxRate;
  let time = t;
  for (;;) {
    time += -meanGap * Math.log(1 - stream.float());
    if (time >= end) return undefined;
    const rate = rateAt(curve, time);
    if (rate > maxRate) throw new RangeError(`rate ${rate} at ${time} exceeds maxRate ${maxRate}`);
    if (stream.float() * maxRate < rate && time > t) return time;
  }
}
