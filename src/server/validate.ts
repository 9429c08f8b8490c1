/**
 * Small request validators: each reports every bad field with its wire path (`['game_modes', '0',
 * 'invalid-type']`), unknown keys are ignored (wire.md §1.3) and `null` counts as absent for
 * optional fields (the 23.2 client's types allow it). A failed parse is one `VALIDATION_ERROR`.
 */
import { validationError } from '../core/errors.js';
import { failWith } from './errors.js';

export interface Problem {
  readonly path: readonly string[];
}

/** Reads `value` at `path`; pushes problems to `out`; undefined when it does not fit. */
export type Check<T> = (value: unknown, path: readonly string[], out: Problem[]) => T | undefined;

const bad = (out: Problem[], path: readonly string[], what: string): undefined => {
  out.push({ path: [...path, what] });
  return undefined;
};

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const str: Check<string> = (v, p, out) => (typeof v === 'string' ? v : bad(out, p, 'invalid-type'));

/** A string of 1..max characters. */
export const text = (max: number): Check<string> => (v, p, out) => {
  const s = str(v, p, out);
  if (s === undefined) return undefined;
  if (s.length === 0) return bad(out, p, 'too-short');
  return s.length > max ? bad(out, p, 'too-long') : s;
};

export const bool: Check<boolean> = (v, p, out) => (typeof v === 'boolean' ? v : bad(out, p, 'invalid-type'));

/** An integer within [min, max]. */
export const int = (min: number, max: number): Check<number> => (v, p, out) => {
  if (typeof v !== 'number' || !Number.isInteger(v)) return bad(out, p, 'invalid-type');
  return v < min || v > max ? bad(out, p, 'out-of-range') : v;
};

export const U32_MAX = 4_294_967_295;
export const u32 = int(0, U32_MAX);
/** u64 as far as a JSON number is exact. */
export const u64 = int(0, Number.MAX_SAFE_INTEGER);

/** Any JSON value, kept as is. */
export const anyJson: Check<unknown> = (v) => v;

export const oneOf = <const T extends string>(values: readonly T[]): Check<T> => (v, p, out) =>
  typeof v === 'string' && (values as readonly string[]).includes(v) ? (v as T) : bad(out, p, 'invalid');

export const uuid: Check<string> = (v, p, out) => {
  const s = str(v, p, out);
  if (s === undefined) return undefined;
  return isUuid(s) ? s.toLowerCase() : bad(out, p, 'invalid');
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID.test(s);

export const arrayOf = <T>(item: Check<T>, max = 1024): Check<T[]> => (v, p, out) => {
  if (!Array.isArray(v)) return bad(out, p, 'invalid-type');
  if (v.length > max) return bad(out, p, 'too-many');
  const before = out.length;
  const items = v.map((x: unknown, i) => item(x, [...p, String(i)], out));
  return out.length === before ? (items as T[]) : undefined;
};

/** A JSON object used as a map (null-prototype result, no `__proto__` surprises). */
export const mapOf = <T>(value: Check<T>, max = 1024): Check<Record<string, T>> => (v, p, out) => {
  if (!isRecord(v)) return bad(out, p, 'invalid-type');
  const keys = Object.keys(v);
  if (keys.length > max) return bad(out, p, 'too-many');
  const result = Object.create(null) as Record<string, T>;
  const before = out.length;
  for (const k of keys) {
    const x = value(v[k], [...p, k], out);
    if (x !== undefined) result[k] = x;
  }
  return out.length === before ? result : undefined;
};

interface Field<T, R extends boolean> {
  readonly check: Check<T>;
  readonly required: R;
}

export const req = <T>(check: Check<T>): Field<T, true> => ({ check, required: true });
export const opt = <T>(check: Check<T>): Field<T, false> => ({ check, required: false });

type Shape = Record<string, Field<unknown, boolean>>;
type Value<F> = F extends Field<infer T, boolean> ? T : never;
type Parsed<S extends Shape> = { -readonly [K in keyof S as S[K]['required'] extends true ? K : never]: Value<S[K]> } & {
  -readonly [K in keyof S as S[K]['required'] extends true ? never : K]?: Value<S[K]>;
};

/**
 * An object with the given fields; every problem is reported, unknown keys ignored.
 *
 * @example
 * const findBody = object({ game_modes: req(arrayOf(str)), regions: opt(arrayOf(str)) });
 */
export const object = <S extends Shape>(shape: S): Check<Parsed<S>> => {
  // Listed once, not on every request.
  const fields = Object.entries(shape);
  return (v, p, out) => {
    if (!isRecord(v)) return bad(out, p, 'invalid-type');
    const result: Record<string, unknown> = {};
    const before = out.length;
    for (const [key, field] of fields) {
      const raw = Object.hasOwn(v, key) ? v[key] : undefined;
      if (raw === undefined || raw === null) {
        if (field.required) out.push({ path: [...p, key, 'missing'] });
        continue;
      }
      const value = field.check(raw, [...p, key], out);
      if (value !== undefined) result[key] = value;
    }
    return out.length === before ? (result as Parsed<S>) : undefined;
  };
};

/**
 * Parses a request body, or throws `VALIDATION_ERROR` listing every bad field.
 *
 * @example
 * const body = parse(await ctx.body(), findBody);
 */
export function parse<T>(value: unknown, check: Check<T>): T {
  const out: Problem[] = [];
  const result = check(value, [], out);
  if (out.length > 0 || result === undefined) failWith(validationError(out.length > 0 ? out : [{ path: ['invalid'] }]));
  return result;
}

/**
 * Like {@link parse}, but returns the problems instead of throwing (to merge them with others).
 *
 * @example
 * const { value, problems } = collect(body, schema);
 */
export function collect<T>(value: unknown, check: Check<T>): { readonly value: T | undefined; readonly problems: Problem[] } {
  const problems: Problem[] = [];
  const result = check(value, [], problems);
  return { value: problems.length > 0 ? undefined : result, problems };
}
