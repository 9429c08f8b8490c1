/**
 * Seeded random streams and distributions described as JSON-friendly data. Every draw comes from
 * the core's `createRng`; {@link split} derives child streams from the parent's seed and a label
 * only, so adding draws to one component never shifts another's.
 */
import { createRng, type Rng } from './rng.js';

/** A seeded random stream: the core's {@link Rng} plus the seed it was built from. */
export interface Stream extends Rng {
  readonly seed: number;
}

/**
 * A stream seeded with `seed` (taken as a u32).
 *
 * @example
 * createStream(7).float() === createStream(7).float(); // true
 */
export const createStream = (seed: number): Stream => Object.freeze({ ...createRng(seed >>> 0), seed: seed >>> 0 });

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

const fnvByte = (hash: number, byte: number): number => Math.imul(hash ^ (byte & 0xff), FNV_PRIME) >>> 0;

/**
 * 32-bit FNV-1a over the seed's four bytes then the label's UTF-16 code units (two bytes each).
 *
 * @example
 * childSeed(1, 'arrivals') === childSeed(1, 'arrivals'); // true
 */
export const childSeed = (seed: number, label: string): number => {
  let hash = FNV_OFFSET;
  for (let shift = 0; shift < 32; shift += 8) hash = fnvByte(hash, seed >>> shift);
  for (let i = 0; i < label.length; i += 1) {
    const unit = label.charCodeAt(i);
    hash = fnvByte(fnvByte(hash, unit), unit >>> 8);
  }
  return hash;
};

/**
 * An independent child stream that depends only on the parent's seed and `label`, never on how
 * many draws the parent or its siblings have made.
 *
 * @example
 * const root = createStream(1);
 * const a = split(root, 'arrivals');
 * root.float(); // does not change what `a` draws
 */
export const split = (stream: Stream, label: string): Stream => createStream(childSeed(stream.seed, label));

/** A random quantity described as data (times in ms where it is a duration). */
export type NumericDistribution =
  | { readonly kind: 'constant'; readonly value: number }
  | { readonly kind: 'uniform'; readonly min: number; readonly max: number }
  | { readonly kind: 'exponential'; readonly mean: number }
  | { readonly kind: 'lognormal'; readonly median: number; readonly p95: number };

/** A weighted pick of one key. */
export interface ChoiceDistribution {
  readonly kind: 'choice';
  readonly weights: Readonly<Record<string, number>>;
}

export type Distribution = NumericDistribution | ChoiceDistribution;

/** The standard normal quantile at 0.95. */
export const Z95 = 1.6448536269514722;

/**
 * A standard normal draw by Box–Muller (two uniform draws, the cosine branch).
 *
 * @example
 * standardNormal(createStream(3)); // a number, mean 0 and sd 1 over many draws
 */
export const standardNormal = (stream: Stream): number => {
  const u1 = 1 - stream.float(); // (0, 1]
  const u2 = stream.float();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
};

const pick = (weights: Readonly<Record<string, number>>, stream: Stream): string => {
  const keys = Object.keys(weights);
  let total = 0;
  for (const key of keys) total += weights[key] ?? 0;
  if (!(total > 0)) throw new RangeError('choice weights must have a positive total');
  // Compare the draw with cumulative fractions rather than scaling it by the total: with tiny
  // (subnormal) weights `u * total` rounds to a handful of values and skews the pick.
  const u = stream.float();
  let cumulative = 0;
  let last = '';
  for (const key of keys) {
    const weight = weights[key] ?? 0;
    if (weight <= 0) continue;
    last = key;
    cumulative += weight;
    if (u < cumulative / total) return key;
  }
  return last; // rounding left a sliver past the end
};

/**
 * One draw from `dist`: a number, or a key for a choice.
 *
 * @example
 * sample({ kind: 'lognormal', median: 1000, p95: 3000 }, createStream(1)); // ~1000 typically
 * sample({ kind: 'choice', weights: { eu: 3, us: 1 } }, createStream(1)); // 'eu' or 'us'
 */
export function sample(dist: NumericDistribution, stream: Stream): number;
export function sample(dist: ChoiceDistribution, stream: Stream): string;
export function sample(dist: Distribution, stream: Stream): number | string;
export function sample(dist: Distribution, stream: Stream): number | string {
  switch (dist.kind) {
    case 'constant':
      return dist.value;
    case 'uniform':
      return dist.min + (dist.max - dist.min) * stream.float();
    case 'exponential':
      return -dist.mean * Math.log(1 - stream.float());
    case 'lognormal': {
      const sigma = (Math.log(dist.p95) - Math.log(dist.median)) / Z95;
      return Math.exp(Math.log(dist.median) + sigma * standardNormal(stream));
    }
    case 'choice':
      return pick(dist.weights, stream);
  }
}
