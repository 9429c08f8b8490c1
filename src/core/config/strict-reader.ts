/**
 * Strict parsing primitives on top of the core's readers (scenarios and their distributions): objects whose unknown members are
 * problems (a typo in a scenario must not silently fall back to a default) and real numbers with
 * bounds. Every parser pushes its problems and returns the value or `undefined`; none throws.
 */
import type { Fields, Parser } from './parse-reader.js';
import { kebab, problem } from './path.js';
import { unknownKey } from './stray-keys.js';

export type { Fields, Parser };
export { mapOf, oneOf, safeInt, str, u32, bool, int } from './parse-reader.js';

type JsonObject = Readonly<Record<string, unknown>>;

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A JSON object with a closed set of snake_case members, read by `build`. A member not in `keys`
 * is `[..., '*key*', 'unknown-key']` (its message names the nearest of `keys`, as in a version
 * config); a non-object is `invalid-type`.
 *
 * @example
 * const point = strictObject(['x'], (f) => f.req('x', num()));
 * point({ x: 1, y: 2 }, ['p'], out); // 1, out: [['p', '*y*', 'unknown-key'] ("did you mean `x`?")]
 */
export function strictObject<T>(keys: readonly string[], build: (fields: Fields) => T | undefined): Parser<T> {
  return (value, path, out) => {
    if (!isObject(value)) {
      out.push(problem(path, 'invalid-type'));
      return undefined;
    }
    for (const key of Object.keys(value)) if (!keys.includes(key)) out.push(unknownKey(path, key, keys));
    const has = (key: string): boolean => Object.hasOwn(value, key);
    const opt = <U>(key: string, parse: Parser<U>): U | undefined => (has(key) ? parse(value[key], [...path, kebab(key)], out) : undefined);
    const req = <U>(key: string, parse: Parser<U>): U | undefined => {
      if (!has(key)) out.push(problem(path, kebab(key), 'missing'));
      return opt(key, parse);
    };
    const either = <U>(primary: string, alias: string, parse: Parser<U>): U | undefined => opt(primary, parse) ?? opt(alias, parse);
    return build({ opt, req, either });
  };
}

/** Bounds of {@link num}; `above` is exclusive, `min`/`max` inclusive. */
export interface NumberBounds {
  readonly min?: number;
  readonly above?: number;
  readonly max?: number;
  readonly integer?: boolean;
}

/**
 * A finite number, by default non-negative. Problems: `invalid-type`, `not-finite`,
 * `not-an-integer`, `negative` (below a zero `min`), `not-positive` (`above: 0`), `too-low`,
 * `too-high`.
 *
 * @example
 * num({ max: 1 })(1.5, ['share'], out); // undefined, out: [['share', 'too-high']]
 */
export function num(bounds: NumberBounds = {}): Parser<number> {
  const { min = 0, above, max, integer = false } = bounds;
  return (value, path, out) => {
    const name = numberProblem(value, min, above, max, integer);
    if (name === undefined) return (value as number) + 0;
    out.push(problem(path, name));
    return undefined;
  };
}

function numberProblem(value: unknown, min: number, above: number | undefined, max: number | undefined, integer: boolean): string | undefined {
  if (typeof value !== 'number') return 'invalid-type';
  if (!Number.isFinite(value)) return 'not-finite';
  if (integer && !Number.isInteger(value)) return 'not-an-integer';
  if (above !== undefined && value <= above) return above === 0 ? 'not-positive' : 'too-low';
  if (value < min) return min === 0 ? 'negative' : 'too-low';
  if (max !== undefined && value > max) return 'too-high';
  return undefined;
}
