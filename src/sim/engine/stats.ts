/**
 * Pure, deterministic statistics for simulation results: nearest-rank percentiles, fixed-bin
 * histograms, fixed-interval time series of a step function (CCU, lobbies active/idle) and a
 * streaming summary.
 */

/**
 * Exact nearest-rank percentiles of `values` (sorted on a copy): the value at rank
 * `max(1, ceil(p / 100 * n))`. Each `p` must lie in [0, 100]; an empty input gives `NaN`s.
 *
 * @example
 * percentiles([5, 1, 4, 2, 3], [50, 95, 99]); // [3, 5, 5]
 */
export function percentiles(values: readonly number[], ps: readonly number[]): readonly number[] {
  for (const p of ps) if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be in [0, 100], got ${p}`);
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  return ps.map((p) => (n === 0 ? NaN : (sorted[Math.max(1, Math.ceil((p / 100) * n)) - 1] as number)));
}

/**
 * Values counted by value, for exact nearest-rank percentiles of a long run in bounded memory: its
 * size is the number of distinct values (waits in whole virtual milliseconds), not of values added.
 *
 * @example
 * const c = new ValueCounts();
 * c.add(5); c.add(1, 3);
 * c.percentiles([50, 99]); // [1, 5], as percentiles([5, 1, 1, 1], [50, 99])
 */
export class ValueCounts {
  readonly #counts = new Map<number, number>();
  #total = 0;

  /** Adds `value` `times` times. */
  add(value: number, times = 1): void {
    if (times <= 0) return;
    this.#counts.set(value, (this.#counts.get(value) ?? 0) + times);
    this.#total += times;
  }

  /** Values added (with repeats). */
  get count(): number {
    return this.#total;
  }

  /** Distinct values held. */
  get distinct(): number {
    return this.#counts.size;
  }

  /** The same as {@link percentiles} of every value added. */
  percentiles(ps: readonly number[]): readonly number[] {
    for (const p of ps) if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be in [0, 100], got ${p}`);
    const values = Float64Array.from(this.#counts.keys()).sort();
    const ranks = ps.map((p) => Math.max(1, Math.ceil((p / 100) * this.#total)));
    const out = ps.map(() => NaN);
    let seen = 0;
    let next = 0;
    const order = ranks.map((_, i) => i).sort((a, b) => (ranks[a] as number) - (ranks[b] as number));
    for (const value of values) {
      seen += this.#counts.get(value) as number;
      while (next < order.length && (ranks[order[next] as number] as number) <= seen) out[order[next++] as number] = value;
      if (next === order.length) break;
    }
    return out;
  }
}

/** Equal-width bins over [min, max). */
export interface HistogramSpec {
  readonly min: number;
  readonly max: number;
  readonly bins: number;
}

/** Counts per bin, plus values below `min` (`under`) and at or above `max` (`over`). */
export interface Histogram {
  readonly spec: HistogramSpec;
  readonly counts: readonly number[];
  readonly under: number;
  readonly over: number;
}

const checkSpec = (spec: HistogramSpec): void => {
  if (!(Number.isInteger(spec.bins) && spec.bins > 0)) throw new RangeError(`bins must be a positive integer, got ${spec.bins}`);
  if (!(Number.isFinite(spec.min) && Number.isFinite(spec.max) && spec.max > spec.min)) {
    throw new RangeError(`need finite min < max, got [${spec.min}, ${spec.max})`);
  }
};

/**
 * The bin index of `value` (-1 below `min`, `bins` at or above `max`).
 *
 * @example
 * binOf({ min: 0, max: 10, bins: 5 }, 3); // 1
 */
export const binOf = (spec: HistogramSpec, value: number): number => {
  if (value < spec.min) return -1;
  if (value >= spec.max) return spec.bins;
  return Math.min(spec.bins - 1, Math.floor(((value - spec.min) / (spec.max - spec.min)) * spec.bins));
};

/**
 * An empty histogram (throws on a bad spec: bugs throw).
 *
 * @example
 * emptyHistogram({ min: 0, max: 1000, bins: 10 }).counts.length; // 10
 */
export function emptyHistogram(spec: HistogramSpec): Histogram {
  checkSpec(spec);
  return { spec, counts: new Array<number>(spec.bins).fill(0), under: 0, over: 0 };
}

/**
 * A histogram of `values` in one pass.
 *
 * @example
 * histogramOf({ min: 0, max: 10, bins: 2 }, [1, 6, 7, 12]); // counts [1, 2], under 0, over 1
 */
export function histogramOf(spec: HistogramSpec, values: Iterable<number>): Histogram {
  checkSpec(spec);
  const counts = new Array<number>(spec.bins).fill(0);
  let under = 0;
  let over = 0;
  for (const value of values) {
    const bin = binOf(spec, value);
    if (bin < 0) under += 1;
    else if (bin >= spec.bins) over += 1;
    else counts[bin] = (counts[bin] ?? 0) + 1;
  }
  return { spec, counts, under, over };
}

/**
 * A new histogram with `value` added (copies the counts; use {@link histogramOf} for many values).
 *
 * @example
 * addToHistogram(emptyHistogram({ min: 0, max: 10, bins: 2 }), 3).counts; // [1, 0]
 */
export function addToHistogram(h: Histogram, value: number): Histogram {
  const bin = binOf(h.spec, value);
  if (bin < 0) return { ...h, under: h.under + 1 };
  if (bin >= h.spec.bins) return { ...h, over: h.over + 1 };
  const counts = h.counts.slice();
  counts[bin] = (counts[bin] ?? 0) + 1;
  return { ...h, counts };
}

/** A change of a step function: from `time` on, the value is `value`. */
export interface Change {
  readonly time: number;
  readonly value: number;
}

/** Samples at `start`, `start + interval`, … up to and including `end`. */
export interface TimeSeries {
  readonly start: number;
  readonly interval: number;
  readonly values: readonly number[];
}

/**
 * Samples a step function at fixed intervals: each sample is the value of the last change at or
 * before the sample time (`initial` before any change). `changes` must be sorted by time.
 *
 * @example
 * sampleSeries([{ time: 15, value: 3 }], { start: 0, interval: 10, end: 30, initial: 1 }).values; // [1, 1, 3, 3]
 */
export function sampleSeries(
  changes: readonly Change[],
  window: { readonly start: number; readonly interval: number; readonly end: number; readonly initial: number },
): TimeSeries {
  const { start, interval, end } = window;
  if (!(interval > 0)) throw new RangeError(`interval must be > 0, got ${interval}`);
  const values: number[] = [];
  let current = window.initial;
  let i = 0;
  for (let k = 0; start + k * interval <= end; k += 1) {
    const at = start + k * interval;
    for (let next = changes[i]; next !== undefined && next.time <= at; next = changes[++i]) current = next.value;
    values.push(current);
  }
  return { start, interval, values };
}

/** Count, extremes and mean of the values seen so far (min/max are ±Infinity and mean NaN when empty). */
export interface Summary {
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
}

/** The summary of no values. */
export const EMPTY_SUMMARY: Summary = Object.freeze({ count: 0, min: Infinity, max: -Infinity, mean: NaN });

/**
 * The summary with `value` added (incremental mean).
 *
 * @example
 * addToSummary(addToSummary(EMPTY_SUMMARY, 2), 4); // { count: 2, min: 2, max: 4, mean: 3 }
 */
export function addToSummary(s: Summary, value: number): Summary {
  const count = s.count + 1;
  const mean = s.count === 0 ? value : s.mean + (value - s.mean) / count;
  return { count, min: Math.min(s.min, value), max: Math.max(s.max, value), mean };
}

/**
 * The summary of `values`.
 *
 * @example
 * summaryOf([1, 2, 3]).mean; // 2
 */
export const summaryOf = (values: Iterable<number>): Summary => {
  let s = EMPTY_SUMMARY;
  for (const value of values) s = addToSummary(s, value);
  return s;
};
