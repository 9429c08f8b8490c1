/**
 * The outcome of a decision that can fail for an expected reason. Expected outcomes are values;
 * bugs throw.
 *
 * @example
 * const r = ok(3); if (r.ok) r.value; // 3
 */
export type Result<T, E> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };

export const ok = <T>(value: T): { readonly ok: true; readonly value: T } => ({ ok: true, value });
export const err = <E>(error: E): { readonly ok: false; readonly error: E } => ({ ok: false, error });
