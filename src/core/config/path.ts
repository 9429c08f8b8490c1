/**
 * Problem paths in Rivet's style: lowercase kebab segments, named items wrapped in asterisks,
 * indexes as decimal strings, the problem name last. Also the deep-freeze used on every output.
 */
import type { Problem } from './types.js';

export type Path = readonly string[];

/** Keys that must never be copied into an output object (prototype pollution). */
export const FORBIDDEN_KEYS: readonly string[] = Object.freeze(['__proto__', 'constructor', 'prototype']);

/**
 * Wraps a user-chosen name (game mode, region, port label, map key) in asterisks.
 *
 * @example
 * named('default'); // '*default*'
 */
export const named = (name: string): string => `*${name}*`;

/**
 * Turns a snake_case wire key into its kebab path segment.
 *
 * @example
 * kebab('max_players_direct'); // 'max-players-direct'
 */
export const kebab = (key: string): string => key.replaceAll('_', '-');

/**
 * Whether `key` is one of {@link FORBIDDEN_KEYS}.
 *
 * @example
 * isForbiddenKey('__proto__'); // true
 */
export const isForbiddenKey = (key: string): boolean => FORBIDDEN_KEYS.includes(key);

/**
 * Builds one frozen problem from a base path and trailing segments.
 *
 * @example
 * problem(['config', 'cdn'], 'no-site-id').path; // ['config', 'cdn', 'no-site-id']
 */
export function problem(path: Path, ...rest: readonly string[]): Problem {
  return Object.freeze({ path: Object.freeze([...path, ...rest]) });
}

/**
 * Builds one frozen problem that also says why, in words, and what to do.
 *
 * @example
 * explained(['config', 'matchmaker'], 'host networking is off on this server', 'network-mode', 'host-not-allowed').message;
 * // 'host networking is off on this server'
 */
export function explained(path: Path, message: string, ...rest: readonly string[]): Problem {
  return Object.freeze({ path: Object.freeze([...path, ...rest]), message });
}

/**
 * Drops problems whose path repeats an earlier one, keeping discovery order.
 *
 * @example
 * dedupeProblems([problem(['a']), problem(['a'])]).length; // 1
 */
export function dedupeProblems(problems: readonly Problem[]): readonly Problem[] {
  const seen = new Set<string>();
  const kept: Problem[] = [];
  for (const p of problems) {
    const key = JSON.stringify(p.path);
    if (!seen.has(key)) {
      seen.add(key);
      kept.push(p);
    }
  }
  return Object.freeze(kept);
}

/**
 * Freezes an object graph of plain objects and arrays in place and returns it.
 *
 * @example
 * Object.isFrozen(deepFreeze({ a: [1] }).a); // true
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * A deep copy of plain JSON-like data (objects keep a null prototype if they had one; keys in
 * {@link FORBIDDEN_KEYS} are dropped), so freezing the copy never freezes the caller's objects.
 *
 * @example
 * const a = { b: [1] }; cloneData(a).b !== a.b; // true
 */
export function cloneData<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => cloneData(item)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const copy = Object.create(Object.getPrototypeOf(value) === null ? null : Object.prototype) as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) if (!isForbiddenKey(key)) copy[key] = cloneData(item);
  return copy as T;
}

/** `T` with every optional member also accepting `undefined`. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` tests optionality here.
export type Loose<T> = { [K in keyof T]: {} extends Pick<T, K> ? T[K] | undefined : T[K] };

/**
 * Builds `T` from a record whose optional members may be `undefined`, omitting those members
 * (required by `exactOptionalPropertyTypes`).
 *
 * @example
 * defined<{ a?: number; b: string }>({ a: undefined, b: 'x' }); // { b: 'x' }
 */
export function defined<T extends object>(loose: Loose<T>): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(loose)) if (value !== undefined) out[key] = value;
  return out as T;
}
