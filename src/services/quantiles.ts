/**
 * A bounded quantile sketch for the calibration's summaries: values counted in fixed log buckets
 * (HDR-histogram style), so a week of waits and sessions costs the same memory as an hour of them.
 * Below {@link EXACT_BELOW} a bucket is one whole number wide; above, each power of two is cut into
 * {@link SUB_BUCKETS} buckets, so a bucket spans at most 1/2,048 of its values. Each bucket keeps
 * the smallest and largest value it saw and reports their midpoint: a quantile is exact when its
 * bucket saw one value (every whole number below 4,096 ms, and any bucket of equal values), and
 * otherwise within 1/4,096 (0.025 %) of the exact nearest-rank value, plus rounding to a whole
 * number. At most 2,048 buckets per power of two a value reaches: about 35,000 for values up to a
 * day in ms, whatever the number of values.
 */

/** Whole numbers below this are counted exactly (one bucket each). */
export const EXACT_BELOW = 4_096;
/** Buckets per power of two above {@link EXACT_BELOW}. */
export const SUB_BUCKETS = 2_048;
const SUB_BITS = 11;

/** How many values a summary came from, and their median and 95th percentile (nearest rank). */
export interface Summary {
  readonly samples: number;
  readonly median?: number;
  readonly p95?: number;
}

interface Bucket {
  count: number;
  min: number;
  max: number;
}

/** The bucket of a value: its floor below {@link EXACT_BELOW}, else an index per power of two; negative values mirror positive ones. */
function bucketOf(value: number): number {
  const a = Math.abs(value);
  if (a < EXACT_BELOW) return value < 0 ? -Math.floor(a) - 1 : Math.floor(a);
  let e = Math.floor(Math.log2(a));
  // log2 can land one off near a power of two.
  if (2 ** e > a) e -= 1;
  else if (2 ** (e + 1) <= a) e += 1;
  const index = EXACT_BELOW + (e - SUB_BITS - 1) * SUB_BUCKETS + Math.floor(a / 2 ** (e - SUB_BITS)) - SUB_BUCKETS;
  return value < 0 ? -index - 1 : index;
}

/**
 * @example
 * const s = new QuantileSketch();
 * [1, 2, 3, 4].forEach((v) => s.add(v));
 * s.summary(); // { samples: 4, median: 2, p95: 4 }
 */
export class QuantileSketch {
  readonly #buckets = new Map<number, Bucket>();
  #samples = 0;

  add(value: number): void {
    const key = bucketOf(value);
    const b = this.#buckets.get(key);
    if (b === undefined) this.#buckets.set(key, { count: 1, min: value, max: value });
    else {
      b.count += 1;
      if (value < b.min) b.min = value;
      else if (value > b.max) b.max = value;
    }
    this.#samples += 1;
  }

  /** Buckets held (bounded by the values' range, not their number). */
  get buckets(): number {
    return this.#buckets.size;
  }

  /** The nearest-rank median and 95th percentile, as {@link QuantileSketch} states their error. */
  summary(): Summary {
    const n = this.#samples;
    if (n === 0) return { samples: 0 };
    const ranks = [0.5, 0.95].map((q) => Math.max(1, Math.ceil(q * n)));
    const found: number[] = [];
    let seen = 0;
    for (const key of [...this.#buckets.keys()].sort((a, b) => a - b)) {
      const b = this.#buckets.get(key) as Bucket;
      seen += b.count;
      while (found.length < ranks.length && (ranks[found.length] as number) <= seen) found.push(b.min === b.max ? b.min : Math.round((b.min + b.max) / 2));
      if (found.length === ranks.length) break;
    }
    return { samples: n, median: found[0] as number, p95: found[1] as number };
  }
}
