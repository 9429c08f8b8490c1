/**
 * Parsers of the scenario's distributions (`constant`, `uniform`, `exponential`, `lognormal`,
 * and `choice` for party sizes) and of arrival rate curves (`constant`, `piecewise`).
 */
import type { Problem } from '../../core/config/types.js';
import type { ChoiceDistribution, NumericDistribution, PartySizeDistribution, RateCurve, RatePoint } from './types.js';
import { named, problem, type Path } from '../../core/config/path.js';
import { isObject, num, safeInt, strictObject, type Parser } from './parse-reader.js';

const kindOf = (value: unknown, path: Path, out: Problem[]): string | undefined => {
  if (!isObject(value)) return undefined;
  const kind = value['kind'];
  if (kind === undefined) out.push(problem(path, 'kind', 'missing'));
  else if (typeof kind !== 'string') out.push(problem(path, 'kind', 'invalid-type'));
  else return kind;
  return undefined;
};

const positive = num({ above: 0 });

const constant: Parser<NumericDistribution> = strictObject(['kind', 'value'], (f) => {
  const value = f.req('value', num());
  return value === undefined ? undefined : { kind: 'constant', value };
});

const uniform: Parser<NumericDistribution> = (input, path, out) =>
  strictObject<NumericDistribution>(['kind', 'min', 'max'], (f) => {
    const min = f.req('min', num());
    const max = f.req('max', num());
    if (min === undefined || max === undefined) return undefined;
    if (min > max) out.push(problem(path, 'min-gt-max'));
    return min > max ? undefined : { kind: 'uniform', min, max };
  })(input, path, out);

const exponential: Parser<NumericDistribution> = strictObject(['kind', 'mean'], (f) => {
  const mean = f.req('mean', positive);
  return mean === undefined ? undefined : { kind: 'exponential', mean };
});

const lognormal: Parser<NumericDistribution> = (input, path, out) =>
  strictObject<NumericDistribution>(['kind', 'median', 'p95'], (f) => {
    const median = f.req('median', positive);
    const p95 = f.req('p95', positive);
    if (median === undefined || p95 === undefined) return undefined;
    if (p95 <= median) out.push(problem(path, 'p95', 'not-above-median'));
    return p95 <= median ? undefined : { kind: 'lognormal', median, p95 };
  })(input, path, out);

const CONTINUOUS: Readonly<Record<string, Parser<NumericDistribution>>> = Object.freeze({ constant, uniform, exponential, lognormal });

function dispatch<T>(table: Readonly<Record<string, Parser<T>>>): Parser<T> {
  return (value, path, out) => {
    if (!isObject(value)) {
      out.push(problem(path, 'invalid-type'));
      return undefined;
    }
    const kind = kindOf(value, path, out);
    if (kind === undefined) return undefined;
    if (!Object.hasOwn(table, kind)) {
      out.push(problem(path, 'kind', 'invalid'));
      return undefined;
    }
    return table[kind]?.(value, path, out);
  };
}

/**
 * A continuous distribution of a non-negative quantity. Problems: `kind.missing|invalid`, each
 * parameter's number problems (`mean`, `median`, `p95` must be positive), `min-gt-max`,
 * `p95.not-above-median`, unknown members.
 *
 * @example
 * distribution({ kind: 'lognormal', median: 40, p95: 30 }, ['d'], out); // out: [['d', 'p95', 'not-above-median']]
 */
export const distribution: Parser<NumericDistribution> = dispatch<NumericDistribution>(CONTINUOUS);

const POSITIVE_INT = /^[1-9][0-9]{0,5}$/;

/**
 * `{kind: 'choice', weights: {"1": 0.7, "2": 0.3}}`: keys positive integers
 * (`weights.*k*.invalid-key`), weights non-negative finite, and at least one positive
 * (`weights.invalid`).
 *
 * @example
 * choice({ kind: 'choice', weights: { '1': 0 } }, ['p'], out); // out: [['p', 'weights', 'invalid']]
 */
export const choice: Parser<ChoiceDistribution> = strictObject(['kind', 'weights'], (f) => f.req('weights', choiceWeights));

const choiceWeights: Parser<ChoiceDistribution> = (value, path, out) => {
  if (!isObject(value)) {
    out.push(problem(path, 'invalid-type'));
    return undefined;
  }
  const weights = Object.create(null) as Record<string, number>;
  let total = 0;
  let failed = false;
  for (const key of Object.keys(value)) {
    if (!POSITIVE_INT.test(key)) out.push(problem(path, named(key), 'invalid-key'));
    const weight = num()(value[key], [...path, named(key)], out);
    if (weight === undefined || !POSITIVE_INT.test(key)) failed = true;
    else {
      weights[key] = weight;
      total += weight;
    }
  }
  if (total <= 0 && !failed) out.push(problem(path, 'invalid'));
  return failed || total <= 0 ? undefined : { kind: 'choice', weights };
};

/** A party size distribution: a {@link distribution} or a {@link choice}. */
export const partySize: Parser<PartySizeDistribution> = dispatch<PartySizeDistribution>({ ...CONTINUOUS, choice });

const point: Parser<RatePoint> = strictObject(['at_ms', 'per_minute'], (f) => {
  const atMs = f.req('at_ms', safeInt);
  const perMinute = f.req('per_minute', num());
  return atMs === undefined || perMinute === undefined ? undefined : { at: atMs, perMinute };
});

const points: Parser<readonly RatePoint[]> = (value, path, out) => {
  if (!Array.isArray(value)) {
    out.push(problem(path, 'invalid-type'));
    return undefined;
  }
  if (value.length === 0) out.push(problem(path, 'empty'));
  const parsed = value.map((item: unknown, i) => point(item, [...path, String(i)], out));
  parsed.forEach((p, i) => {
    const before = parsed[i - 1];
    if (p !== undefined && before !== undefined && p.at <= before.at) out.push(problem(path, String(i), 'at-ms', 'not-increasing'));
  });
  const kept = parsed.filter((p) => p !== undefined);
  return kept.length === value.length && kept.length > 0 ? kept : undefined;
};

const piecewise: Parser<RateCurve> = (input, path, out) =>
  strictObject<RateCurve>(['kind', 'period_ms', 'points'], (f) => {
    const periodMs = f.opt('period_ms', safeInt);
    const list = f.req('points', points);
    if (periodMs === 0) out.push(problem(path, 'period-ms', 'not-positive'));
    const lastIndex = (list?.length ?? 0) - 1;
    const outside = periodMs !== undefined && periodMs > 0 && list !== undefined && (list[lastIndex]?.at ?? 0) >= periodMs;
    if (outside) out.push(problem(path, 'points', String(lastIndex), 'at-ms', 'not-in-period'));
    if (list === undefined || periodMs === 0 || outside) return undefined;
    return periodMs === undefined ? { kind: 'piecewise', points: list } : { kind: 'piecewise', period: periodMs, points: list };
  })(input, path, out);

const constantRate: Parser<RateCurve> = strictObject(['kind', 'per_minute'], (f) => {
  const perMinute = f.req('per_minute', num());
  return perMinute === undefined ? undefined : { kind: 'constant', perMinute };
});

/**
 * Arrivals per minute: `{kind: 'constant', per_minute}` or `{kind: 'piecewise', period_ms?,
 * points: [{at_ms, per_minute}]}` with at least one point (`points.empty`), strictly increasing
 * times (`points.<i>.at-ms.not-increasing`), all inside the period (`...not-in-period`).
 *
 * @example
 * rateCurve({ kind: 'constant', per_minute: -1 }, ['a'], out); // out: [['a', 'per-minute', 'negative']]
 */
export const rateCurve: Parser<RateCurve> = dispatch<RateCurve>({ constant: constantRate, piecewise });
