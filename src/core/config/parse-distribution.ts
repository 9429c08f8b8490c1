/**
 * Parsers of distributions described as data (`core/distribution.ts`): the continuous ones
 * (`constant`, `uniform`, `exponential`, `lognormal`) and `choice`. Scenarios and the server's
 * settings (`TAVERN_FAKE_READY_DELAY`) read them alike.
 */
import type { ChoiceDistribution, NumericDistribution } from '../distribution.js';
import { named, problem, type Path } from './path.js';
import { isObject, num, strictObject, type Parser } from './strict-reader.js';
import type { Problem } from './types.js';

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

/** The continuous distributions by kind. */
export const CONTINUOUS: Readonly<Record<string, Parser<NumericDistribution>>> = Object.freeze({ constant, uniform, exponential, lognormal });

/** A parser that reads `kind` and hands the value to that kind's parser (`kind.missing|invalid`). */
export function dispatch<T>(table: Readonly<Record<string, Parser<T>>>): Parser<T> {
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
