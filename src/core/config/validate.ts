/** `validateVersion`: the semantic rules of wire.md §2.1 over a parsed configuration. */
import type { Problem, ValidationContext, VersionConfig } from './types.js';
import { LIMITS } from './defaults.js';
import { dedupeProblems, problem } from './path.js';
import { validateCdn } from './validate-cdn.js';
import { validateMatchmaker } from './validate-matchmaker.js';
import { isDisplayNameShape, isHumanText, lengthProblem } from './validate-text.js';

/**
 * Validates a version display name: a string (`invalid-type`, `missing`), 1–128 UTF-8 bytes
 * (`too-short`, `too-long`), single spaces only and none at the ends, nothing {@link isHumanText}
 * refuses (`invalid`), unique among
 * `ctx.versionDisplayNames` (`not-unique`). Paths start with `display-name`.
 *
 * @example
 * const out: Problem[] = []; validateDisplayName('a  b', { regions: new Set() }, out);
 * // out: [{ path: ['display-name', 'invalid'] }]
 */
export function validateDisplayName(name: unknown, ctx: ValidationContext, out: Problem[]): void {
  if (typeof name !== 'string') {
    out.push(problem(['display-name'], name === undefined ? 'missing' : 'invalid-type'));
    return;
  }
  const length = lengthProblem(name, 1, LIMITS.displayNameBytes);
  if (length !== undefined) out.push(problem(['display-name'], length));
  // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent; '' has a valid shape and is human text, so the guard only skips a check that passes (too-short is reported above).
  if (name !== '' && (!isDisplayNameShape(name) || !isHumanText(name))) out.push(problem(['display-name'], 'invalid'));
  if (ctx.versionDisplayNames?.has(name) === true) out.push(problem(['display-name'], 'not-unique'));
}

/**
 * Validates a version: its display name, CDN and matchmaker blocks. Every problem is collected;
 * a value inherited by several game modes is reported once, where it was written. Pure: the
 * context's lookups stand in for the stores. An empty result means the version is valid.
 *
 * @example
 * validateVersion({ displayName: '', config: {} }, { regions: new Set(['lnd-atl']) });
 * // [{ path: ['display-name', 'too-short'] }]
 */
export function validateVersion(
  input: { readonly displayName: unknown; readonly config: VersionConfig },
  ctx: ValidationContext,
): readonly Problem[] {
  const out: Problem[] = [];
  validateDisplayName(input.displayName, ctx, out);
  validateCdn(input.config.cdn, ctx, out);
  if (input.config.matchmaker !== undefined) validateMatchmaker(input.config.matchmaker, ctx, out);
  return dedupeProblems(out);
}
