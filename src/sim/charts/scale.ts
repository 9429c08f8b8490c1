/**
 * Linear scales and "nice" axis ticks (steps of 1, 2, 2.5 or 5 times a power of ten, or round
 * durations for time axes).
 */

/** Evenly spaced, increasing tick values; the first and last tick are the axis domain. */
export interface Ticks {
  readonly ticks: readonly number[];
  readonly step: number;
}

/** Magnitude beyond which values are clamped so that spans stay finite. */
const LIMIT = 1e300;
const MS_PER_DAY = 86_400_000;
/** Round durations in ms: seconds, minutes and hours that read well on a clock. */
const DURATION_STEPS: readonly number[] = [
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
].map((s) => s * 1000);

/**
 * The smallest and largest finite values, or `undefined` when there are none.
 *
 * @example
 * extent([3, NaN, -1, Infinity]) // [-1, 3]
 */
export function extent(values: Iterable<number>): readonly [number, number] | undefined {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return lo <= hi ? [lo, hi] : undefined;
}

/**
 * A step of 1, 2, 2.5, 5 or 10 times a power of ten that is at least `raw`.
 *
 * @example
 * niceStep(0.37) // 0.5
 */
export function niceStep(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  const f = raw / power;
  const nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
  return nice * power;
}

/** Clamps to a finite range and widens an empty or nearly empty domain around its middle. */
function widen(min: number, max: number): readonly [number, number] {
  const clamp = (v: number): number => (Number.isFinite(v) ? Math.max(-LIMIT, Math.min(LIMIT, v)) : 0);
  const a = clamp(Math.min(min, max));
  const b = clamp(Math.max(min, max));
  const mid = a / 2 + b / 2;
  if (b - a > Math.abs(mid) * 1e-6 && b - a > 1e-100) return [a, b];
  const pad = Math.abs(mid) < 1e-9 ? 1 : Math.abs(mid) * 0.1;
  return [mid - pad, mid + pad];
}

/** Ticks at every multiple of `step` from just below `lo` to just above `hi`. */
function ticksFor(lo: number, hi: number, step: number): Ticks {
  const first = Math.floor(lo / step + 1e-7);
  const last = Math.ceil(hi / step - 1e-7);
  // Unreachable for widened domains; a guard against float corner cases looping forever.
  if (!(step > 0 && Number.isFinite(step) && last - first <= 100)) return { ticks: [lo, hi], step: hi - lo };
  const ticks: number[] = [];
  for (let i = first; i <= Math.max(last, first + 1); i++) ticks.push(Number((i * step).toPrecision(12)));
  return { ticks, step };
}

/**
 * Nice ticks covering `[min, max]`, about `target` of them (always 2 to 10).
 * A zero-width domain is widened; non-finite bounds are treated as 0.
 *
 * @example
 * niceTicks(3, 97).ticks // [0, 25, 50, 75, 100]
 */
export function niceTicks(min: number, max: number, target = 5): Ticks {
  const [lo, hi] = widen(min, max);
  const intervals = Math.max(1, Math.min(8, Math.round(target) - 1));
  return ticksFor(lo, hi, niceStep((hi - lo) / intervals));
}

/**
 * Ticks for a time axis in ms, on round durations (30 s, 15 min, 6 h, whole days…).
 * Spans under 5 s and over 8 days fall back to {@link niceTicks} (in days for long spans).
 *
 * @example
 * durationTicks(0, 86_400_000).ticks // [0, 21600000, 43200000, 64800000, 86400000]
 */
export function durationTicks(min: number, max: number, target = 5): Ticks {
  const [lo, hi] = widen(min, max);
  const limit = Math.max(2, Math.min(8, Math.round(target)));
  if (hi - lo < 5000) return niceTicks(lo, hi, target);
  const step = DURATION_STEPS.find((s) => Math.ceil(hi / s - 1e-7) - Math.floor(lo / s + 1e-7) <= limit);
  if (step !== undefined) return ticksFor(lo, hi, step);
  const days = niceTicks(lo / MS_PER_DAY, hi / MS_PER_DAY, target);
  const dayStep = Math.max(1, days.step);
  return ticksFor(lo, hi, dayStep * MS_PER_DAY);
}

/**
 * Maps `domain` linearly onto `range`; a zero-width domain maps everything to the range's middle.
 * Inputs beyond ±1e300 are clamped.
 *
 * @example
 * linearScale([0, 10], [0, 100])(2.5) // 25
 */
export function linearScale(
  domain: readonly [number, number],
  range: readonly [number, number],
): (v: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0;
  if (!(span !== 0 && Number.isFinite(span))) return () => (r0 + r1) / 2;
  // Values are clamped like domains are, so that `v - d0` cannot overflow to Infinity.
  return (v) => r0 + ((Math.max(-LIMIT, Math.min(LIMIT, v)) - d0) / span) * (r1 - r0);
}
