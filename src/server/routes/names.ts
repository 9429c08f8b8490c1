/** Display-name and name-id checks of games, namespaces and builds, in Rivet's path style. */
import { validateDisplayName } from '../../core/config/index.js';
import { isIdent } from '../../core/config/validate-text.js';
import { validationError } from '../../core/errors.js';
import { failWith } from '../errors.js';
import type { Problem } from '../validate.js';

/** `display-name.*` problems (1–128 bytes, single inner spaces). */
export function displayNameProblems(name: unknown): Problem[] {
  const out: Problem[] = [];
  validateDisplayName(name, { regions: new Set() }, out);
  return out;
}

/**
 * `name-id.*` problems of form (Rivet's ident: lowercase `a-z0-9-`, 1–16 chars, no `--`); whether
 * it is taken is the services' to say, for well-formed ones only ({@link wellFormedNameId}).
 */
export function nameIdProblems(nameId: unknown): Problem[] {
  if (typeof nameId !== 'string') return [{ path: ['name-id', nameId === undefined ? 'missing' : 'invalid-type'] }];
  return isIdent(nameId) ? [] : [{ path: ['name-id', 'invalid'] }];
}

/** The name id, if it has no {@link nameIdProblems}. */
export const wellFormedNameId = (nameId: unknown): string | undefined =>
  typeof nameId === 'string' && isIdent(nameId) ? nameId : undefined;

/** Throws `VALIDATION_ERROR` when there are problems. */
export function assertValid(problems: readonly Problem[]): void {
  if (problems.length > 0) failWith(validationError(problems));
}

/** A record field, or undefined when the body is not an object. */
export const field = (body: unknown, key: string): unknown =>
  typeof body === 'object' && body !== null && !Array.isArray(body) && Object.hasOwn(body, key) ? (body as Record<string, unknown>)[key] : undefined;
