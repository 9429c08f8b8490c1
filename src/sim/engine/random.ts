/**
 * Seeded random streams and distributions described as JSON-friendly data. Every draw comes from
 * the core's `createRng`; {@link split} derives child streams from the parent's seed and a label
 * only, so adding draws to one component never shifts another's.
 */
import { createRng, type Rng } from '../../core/rng.js';
import type { Path, Problem } from '../../core/index.js';
import { problem } from '../../core/config/path.js';

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

/** A camelCase field name as a kebab path segment. */
export const kebabField = (field: string): string => field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Whether `value` is a plain JSON object. */
export const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The checks a numeric field can require. */
export type NumberRule = 'any' | 'non-negative' | 'positive';

/**
 * Problems of one required finite number field: `missing`, `invalid-type`, `not-finite`,
 * `negative` or `not-positive`, under `[...path, kebab(field)]`.
 *
 * @example
 * numberProblems({ mean: 0 }, 'mean', 'positive', ['d']); // [{ path: ['d', 'mean', 'not-positive'] }]
 */
export function numberProblems(obj: Readonly<Record<string, unknown>>, field: string, rule: NumberRule, path: Path): Problem[] {
  const at = [...path, kebabField(field)];
  if (!Object.hasOwn(obj, field)) return [problem(at, 'missing')];
  const value = obj[field];
  if (typeof value !== 'number') return [problem(at, 'invalid-type')];
  if (!Number.isFinite(value)) return [problem(at, 'not-finite')];
  if (rule === 'non-negative' && value < 0) return [problem(at, 'negative')];
  if (rule === 'positive' && !(value > 0)) return [problem(at, 'not-positive')];
  return [];
}

/** Problems for members other than `allowed`: `[...path, kebab(key), 'unknown']`. */
export function unknownKeyProblems(obj: Readonly<Record<string, unknown>>, allowed: readonly string[], path: Path): Problem[] {
  return Object.keys(obj).filter((key) => !allowed.includes(key)).map((key) => problem(path, kebabField(key), 'unknown'));
}

const FIELDS: Readonly<Record<Distribution['kind'], readonly string[]>> = {
  constant: ['kind', 'value'],
  uniform: ['kind', 'min', 'max'],
  exponential: ['kind', 'mean'],
  lognormal: ['kind', 'median', 'p95'],
  choice: ['kind', 'weights'],
};

function weightProblems(obj: Readonly<Record<string, unknown>>, path: Path): Problem[] {
  const at = [...path, 'weights'];
  if (!Object.hasOwn(obj, 'weights')) return [problem(at, 'missing')];
  const weights = obj['weights'];
  if (!isRecord(weights)) return [problem(at, 'invalid-type')];
  const out: Problem[] = [];
  for (const [key, weight] of Object.entries(weights)) {
    const name = `*${key}*`;
    if (typeof weight !== 'number') out.push(problem(at, name, 'invalid-type'));
    else if (!Number.isFinite(weight)) out.push(problem(at, name, 'not-finite'));
    else if (weight < 0) out.push(problem(at, name, 'negative'));
  }
  if (out.length === 0 && !Object.values(weights).some((w) => (w as number) > 0)) out.push(problem(at, 'no-positive-weight'));
  return out;
}

function kindProblems(obj: Readonly<Record<string, unknown>>, kind: Distribution['kind'], path: Path): Problem[] {
  switch (kind) {
    case 'constant':
      return numberProblems(obj, 'value', 'any', path);
    case 'uniform': {
      const out = [...numberProblems(obj, 'min', 'any', path), ...numberProblems(obj, 'max', 'any', path)];
      if (out.length === 0 && (obj['max'] as number) < (obj['min'] as number)) out.push(problem(path, 'max', 'below-min'));
      return out;
    }
    case 'exponential':
      return numberProblems(obj, 'mean', 'positive', path);
    case 'lognormal': {
      const out = [...numberProblems(obj, 'median', 'positive', path), ...numberProblems(obj, 'p95', 'positive', path)];
      if (out.length === 0 && (obj['p95'] as number) < (obj['median'] as number)) out.push(problem(path, 'p95', 'below-median'));
      return out;
    }
    case 'choice':
      return weightProblems(obj, path);
  }
}

/**
 * Everything wrong with an untrusted distribution, as core-style problem paths (kebab segments,
 * the problem last). An empty list means `value` is a valid {@link Distribution}.
 *
 * @example
 * distributionProblems({ kind: 'lognormal', median: 0, p95: 5 }, ['demand', 'session']);
 * // [{ path: ['demand', 'session', 'median', 'not-positive'] }]
 */
export function distributionProblems(value: unknown, path: Path): Problem[] {
  if (!isRecord(value)) return [problem(path, 'invalid-type')];
  const kind = value['kind'];
  if (kind === undefined) return [problem(path, 'kind', 'missing')];
  if (typeof kind !== 'string' || !Object.hasOwn(FIELDS, kind)) return [problem(path, 'kind', 'invalid')];
  const known = kind as Distribution['kind'];
  return [...kindProblems(value, known, path), ...unknownKeyProblems(value, FIELDS[known], path)];
}
