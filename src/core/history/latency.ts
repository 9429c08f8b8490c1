/**
 * Start latencies as a histogram that merges across instances and minutes: bucket 0 holds up to
 * 100 ms, bucket i up to 100 ms × 1.25^i (each a quarter wider than the one before), the last one
 * everything longer. A percentile is the upper bound of its bucket, so it is at most a quarter
 * above the true value.
 */

const FIRST_MS = 100;
const GROWTH = 1.25;
/** The last bucket (100 ms × 1.25^48 ≈ 73 minutes, and beyond). */
export const LAST_LATENCY_BUCKET = 48;

/**
 * The bucket of a latency in ms.
 *
 * @example
 * latencyBucket(100); // 0
 * latencyBucket(101); // 1
 */
export function latencyBucket(ms: number): number {
  if (!(ms > FIRST_MS)) return 0;
  const i = Math.ceil(Math.log(ms / FIRST_MS) / Math.log(GROWTH) - 1e-9);
  return Math.min(LAST_LATENCY_BUCKET, Math.max(0, i));
}

/**
 * The upper bound of a bucket in ms (rounded to a whole ms).
 *
 * @example
 * bucketUpperMs(0); // 100
 */
export const bucketUpperMs = (bucket: number): number => Math.round(FIRST_MS * GROWTH ** bucket);

/**
 * The `q` quantile (0 < q ≤ 1, nearest rank) of a histogram as the upper bound of its bucket;
 * undefined for an empty histogram.
 *
 * @example
 * latencyQuantile({ '0': 1, '10': 1 }, 0.5); // 100
 */
export function latencyQuantile(histogram: Readonly<Record<string, number>>, q: number): number | undefined {
  const buckets = Object.entries(histogram).map(([b, n]) => [Number(b), n] as const).filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((s, [, n]) => s + n, 0);
  if (total === 0) return undefined;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [b, n] of buckets) {
    seen += n;
    if (seen >= rank) return bucketUpperMs(b);
  }
  return bucketUpperMs(LAST_LATENCY_BUCKET);
}
