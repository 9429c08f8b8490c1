/** `parseVersion`: a whole createGameVersion request body, parsed, validated and resolved. */
import type { Problem, ResolvedVersion, ValidationContext, VersionConfig } from './types.js';
import { err, ok, type Result } from '../result.js';
import { parseVersionConfig } from './parse.js';
import { dedupeProblems, problem } from './path.js';
import { resolveVersion } from './resolve.js';
import { validateDisplayName, validateVersion } from './validate.js';

export interface ParsedVersion {
  readonly displayName: string;
  readonly config: VersionConfig;
  readonly resolved: ResolvedVersion;
}

/**
 * Parses and validates a createGameVersion body `{display_name, config}`. The display-name
 * problems always come with the config's; the semantic rules run only on a config that parsed
 * (so a wrongly typed value is not also reported as missing). A non-object body is
 * `['invalid-type']`; a missing `config` is `['config', 'missing']`.
 *
 * @example
 * const r = parseVersion({ display_name: 'v1', config: { matchmaker: {...} } }, ctx);
 * if (r.ok) r.value.resolved.gameModes; else r.error; // every problem
 */
export function parseVersion(body: unknown, ctx: ValidationContext): Result<ParsedVersion, readonly Problem[]> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return err([problem([], 'invalid-type')]);
  const displayName = Object.hasOwn(body, 'display_name') ? (body as Record<string, unknown>)['display_name'] : undefined;
  if (!Object.hasOwn(body, 'config')) {
    const out: Problem[] = [problem(['config'], 'missing')];
    validateDisplayName(displayName, ctx, out);
    return err(dedupeProblems(out));
  }
  const parsed = parseVersionConfig((body as Record<string, unknown>)['config']);
  if (!parsed.ok) {
    const out: Problem[] = [];
    validateDisplayName(displayName, ctx, out);
    return err(dedupeProblems([...out, ...parsed.error]));
  }
  const problems = validateVersion({ displayName, config: parsed.value }, ctx);
  if (problems.length > 0 || typeof displayName !== 'string') return err(problems);
  return ok(Object.freeze({ displayName, config: parsed.value, resolved: resolveVersion(parsed.value) }));
}
