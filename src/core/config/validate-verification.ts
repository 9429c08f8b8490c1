/** Validation of the actions' verification configs (Rivet `external-request-validate`, without the request). */
import type { ActionsConfig, Problem, VerificationConfig } from './types.js';
import { LIMITS } from './defaults.js';
import { named, problem, type Path } from './path.js';
import { checkVerificationUrl } from './validate-url.js';
import { isHeaderName, isHeaderValue } from './validate-text.js';

/**
 * Validates one verification config at `at`: `url.<problem>` (see {@link checkVerificationUrl}),
 * `headers-meta.too-many` (> 32), `headers.*name*.invalid-name` (not an RFC 7230 token),
 * `headers.*name*.invalid-value` (CR, LF, NUL or other control characters).
 *
 * @example
 * const out: Problem[] = []; validateVerification({ url: 'http://10.0.0.1', headers: {} }, ['v'], out);
 * // out: [{ path: ['v', 'url', 'invalid-ip'] }]
 */
// Stryker disable next-line ArrayDeclaration: equivalent; the only literal a mutant puts here ('Stryker was here') contains spaces, and a host with a space is refused before the allow-list is read.
export function validateVerification(verification: VerificationConfig, at: Path, out: Problem[], allowed: readonly string[] = []): void {
  const urlProblem = checkVerificationUrl(verification.url, allowed);
  if (urlProblem !== undefined) out.push(problem(at, 'url', urlProblem));
  const headers = Object.entries(verification.headers);
  if (headers.length > LIMITS.verificationHeaders) out.push(problem(at, 'headers-meta', 'too-many'));
  for (const [name, value] of headers) {
    if (!isHeaderName(name)) out.push(problem(at, 'headers', named(name), 'invalid-name'));
    if (!isHeaderValue(value)) out.push(problem(at, 'headers', named(name), 'invalid-value'));
  }
}

/**
 * Validates the verification configs of find, join and create written at `base` (a game mode or
 * the matchmaker), at Rivet's paths `<action>-config.verification-config.…`.
 *
 * @example
 * validateActions(mode.actions, ['config', 'matchmaker', 'game-modes', '*default*'], out, ctx.verificationHostsAllowed);
 */
// Stryker disable next-line ArrayDeclaration: equivalent; the only literal a mutant puts here ('Stryker was here') contains spaces, and a host with a space is refused before the allow-list is read.
export function validateActions(actions: ActionsConfig | undefined, base: Path, out: Problem[], allowed: readonly string[] = []): void {
  for (const kind of ['find', 'join', 'create'] as const) {
    const verification = actions?.[kind]?.verification;
    if (verification !== undefined) validateVerification(verification, [...base, `${kind}-config`, 'verification-config'], out, allowed);
  }
}
