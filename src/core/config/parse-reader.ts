/**
 * Structural parsing primitives: each parser takes an untrusted JSON value and a path, pushes a
 * problem for anything wrong, and returns the parsed value or `undefined`. Only own properties
 * are read; map keys that could pollute prototypes are refused as `invalid-key`; an object's
 * members that its parser never asked for are refused as `unknown-key` (or `forbidden-key`).
 */
import type { Problem } from './types.js';
import { explained, isForbiddenKey, kebab, named, problem, type Path } from './path.js';
import { forbiddenKey, unknownKey } from './stray-keys.js';
import { isHumanText } from './validate-text.js';

export type Parser<T> = (value: unknown, path: Path, out: Problem[]) => T | undefined;

export const U32_MAX = 4_294_967_295;

type JsonObject = Readonly<Record<string, unknown>>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What a JSON value is, in words (for "expected …, got …"). */
const kindOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'a table' : typeof value === 'string' ? 'a string' : typeof value === 'number' ? 'a number' : typeof value === 'boolean' ? `${String(value)}` : typeof value;

/** `invalid-type` at `path`, saying what was expected and what came. */
function invalidType(path: Path, out: Problem[], expected: string, value: unknown): undefined {
  out.push(explained(path, `expected ${expected}, got ${kindOf(value)}`, 'invalid-type'));
  return undefined;
}

/** A string. @example str('a', ['x'], []); // 'a' */
export const str: Parser<string> = (value, path, out) =>
  typeof value === 'string' ? value : invalidType(path, out, 'a string', value);

/**
 * A string meant for people: anything {@link isHumanText} refuses (control characters, bidi
 * overrides, lone surrogates) is `invalid`.
 *
 * @example
 * humanText('a\u202eb', ['x'], out); // undefined, out: [['x', 'invalid']]
 */
export const humanText: Parser<string> = (value, path, out) => {
  if (typeof value !== 'string') return invalidType(path, out, 'a string', value);
  if (isHumanText(value)) return value;
  out.push(problem(path, 'invalid'));
  return undefined;
};

/** A boolean. @example bool(true, ['x'], []); // true */
export const bool: Parser<boolean> = (value, path, out) =>
  typeof value === 'boolean' ? value : invalidType(path, out, 'true or false', value);

/**
 * A non-negative integer no larger than `max` (problems `not-an-integer`, `negative`, `too-large`).
 *
 * @example
 * int(10)(11, ['n'], out); // undefined, out: [['n', 'too-large']]
 */
export function int(max: number): Parser<number> {
  return (value, path, out) => {
    if (typeof value !== 'number') return invalidType(path, out, 'a whole number', value);
    const name = !Number.isInteger(value) ? 'not-an-integer' : value < 0 ? 'negative' : value > max ? 'too-large' : undefined;
    if (name === undefined) return value + 0; // normalizes -0
    out.push(explained(path, `expected a whole number from 0 to ${max}, got ${value}`, name));
    return undefined;
  };
}

/** A u32. @example u32(3, ['n'], []); // 3 */
export const u32: Parser<number> = int(U32_MAX);
/** A non-negative safe integer (milliseconds). @example safeInt(3, ['n'], []); // 3 */
export const safeInt: Parser<number> = int(Number.MAX_SAFE_INTEGER);

/**
 * A string from a closed table of spellings (several spellings may map to one value); an unknown
 * string is `invalid`.
 *
 * @example
 * oneOf({ none: 'none' })('none', ['p'], []); // 'none'
 */
export function oneOf<T extends string>(table: Readonly<Record<string, T>>): Parser<T> {
  return (value, path, out) => {
    if (typeof value !== 'string') return invalidType(path, out, `one of ${Object.keys(table).join(', ')}`, value);
    if (Object.hasOwn(table, value)) return table[value];
    out.push(explained(path, `expected one of ${Object.keys(table).join(', ')}, got ${JSON.stringify(value.slice(0, 64))}`, 'invalid'));
    return undefined;
  };
}

/**
 * An array whose items each parse with `item` (failed items are left out, their problems kept).
 *
 * @example
 * arrayOf(str)(['a', 1], ['xs'], out); // ['a'], out: [['xs', '1', 'invalid-type']]
 */
export function arrayOf<T>(item: Parser<T>): Parser<readonly T[]> {
  return (value, path, out) => {
    if (!Array.isArray(value)) return invalidType(path, out, 'a list', value);
    const items: T[] = [];
    for (let i = 0; i < value.length; i += 1) {
      const parsed = item(value[i], [...path, String(i)], out);
      if (parsed !== undefined) items.push(parsed);
    }
    return items;
  };
}

/**
 * A JSON object used as a map (`map<string, T>`), keys kept in order; the result has a null
 * prototype, and `__proto__`/`constructor`/`prototype` keys are refused as `invalid-key`.
 *
 * @example
 * mapOf(str)({ a: 'b' }, ['env'], []); // { a: 'b' }
 */
export function mapOf<T>(item: Parser<T>): Parser<Readonly<Record<string, T>>> {
  return (value, path, out) => {
    if (!isObject(value)) return invalidType(path, out, 'a table (an object)', value);
    const map = Object.create(null) as Record<string, T>;
    for (const key of Object.keys(value)) {
      const at = [...path, named(key)];
      if (isForbiddenKey(key)) {
        out.push(problem(at, 'invalid-key'));
        continue;
      }
      const parsed = item(value[key], at, out);
      if (parsed !== undefined) map[key] = parsed;
    }
    return map;
  };
}

/** Typed access to the own members of one JSON object, with paths and problems handled. */
export interface Fields {
  /** An optional member: absent means `undefined`, no problem. */
  readonly opt: <T>(key: string, parse: Parser<T>) => T | undefined;
  /** A required member: absent is `[..., key, 'missing']`. */
  readonly req: <T>(key: string, parse: Parser<T>) => T | undefined;
  /**
   * A member with two wire spellings; both present is `[..., alias, 'conflicts-with-<primary>']`
   * (both are still parsed so every problem is reported) and the primary spelling wins.
   */
  readonly either: <T>(primary: string, alias: string, parse: Parser<T>, parseAlias?: Parser<T>) => T | undefined;
}

/** The members of `obj`, each key asked for recorded in `known` (present or not). */
function fieldsOf(obj: JsonObject, path: Path, out: Problem[], known: Set<string>): Fields {
  const has = (key: string): boolean => Object.hasOwn(obj, key);
  const opt = <T>(key: string, parse: Parser<T>): T | undefined => {
    known.add(key);
    return has(key) ? parse(obj[key], [...path, kebab(key)], out) : undefined;
  };
  const req = <T>(key: string, parse: Parser<T>): T | undefined => {
    if (!has(key)) out.push(problem(path, kebab(key), 'missing'));
    return opt(key, parse);
  };
  const either = <T>(primary: string, alias: string, parse: Parser<T>, parseAlias: Parser<T> = parse): T | undefined => {
    if (has(primary) && has(alias)) out.push(problem(path, kebab(alias), `conflicts-with-${kebab(primary)}`));
    const fromAlias = opt(alias, parseAlias);
    const fromPrimary = opt(primary, parse);
    return has(primary) ? fromPrimary : fromAlias;
  };
  return { opt, req, either };
}

/** How {@link object} treats members its `build` never asks for. */
export interface StrayKeys {
  /** Why a member may never be given (checked first), or `undefined` when it is merely unknown. */
  readonly forbidden?: (key: string) => string | undefined;
  /** `'ignore'` drops unknown members silently (a wire body outside the version config); default `'refuse'`. */
  readonly unknown?: 'refuse' | 'ignore';
}

/**
 * A JSON object read member by member by `build`. The keys `build` asks for (with `opt`, `req`
 * or `either`, whether present or not) are the object's known keys: one table, the parser itself,
 * so `build` must ask for every key it takes on every call. Any other member is
 * `[..., '*key*', 'forbidden-key']` when `stray.forbidden` names a reason, else
 * `[..., '*key*', 'unknown-key']` with the nearest known key in its message.
 *
 * @example
 * const point = object((f) => ({ x: f.req('x', u32) }));
 * point([], ['p'], out); // undefined, out: [['p', 'invalid-type']]
 * point({ x: 1, xx: 2 }, ['p'], out); // { x: 1 }, out: [['p', '*xx*', 'unknown-key'] ("did you mean `x`?")]
 */
export function object<T>(build: (fields: Fields) => T | undefined, stray: StrayKeys = {}): Parser<T> {
  return (value, path, out) => {
    if (!isObject(value)) return invalidType(path, out, 'a table (an object)', value);
    const known = new Set<string>();
    const built = build(fieldsOf(value, path, out, known));
    if (stray.unknown === 'ignore') return built;
    for (const key of Object.keys(value)) {
      if (known.has(key)) continue;
      const reason = stray.forbidden?.(key);
      out.push(reason === undefined ? unknownKey(path, key, known) : forbiddenKey(path, key, reason));
    }
    return built;
  };
}

/**
 * An object with no members (`{}` on the wire); any member is an unknown key.
 *
 * @example
 * emptyObject({}, ['kv'], []); // {}
 */
export const emptyObject: Parser<Readonly<Record<string, never>>> = object(() => ({}));

/**
 * A wire list of entries that carry their own key, converted into a map keyed by it (the
 * deprecated `lobby_groups` shapes). A repeated key is `[..., index, keyField, 'not-unique']`.
 *
 * @example
 * const envVars = keyedList('key', object((f) => { ... }));
 */
export function keyedList<T>(keyField: string, item: Parser<{ readonly key: string; readonly value: T }>): Parser<Readonly<Record<string, T>>> {
  return (value, path, out) => {
    if (!Array.isArray(value)) return invalidType(path, out, 'a list', value);
    const map = Object.create(null) as Record<string, T>;
    for (let i = 0; i < value.length; i += 1) {
      const entry = item(value[i], [...path, String(i)], out);
      if (entry === undefined) continue;
      const at = [...path, String(i), kebab(keyField)];
      if (isForbiddenKey(entry.key)) out.push(problem(at, 'invalid-key'));
      else if (Object.hasOwn(map, entry.key)) out.push(problem(at, 'not-unique'));
      else map[entry.key] = entry.value;
    }
    return map;
  };
}
