/** The scenario's `version`: the createGameVersion `config`, parsed and validated by the core. */
import type { Problem, ResolvedVersion, VersionConfig } from '../../core/config/types.js';
import { parseVersionConfig } from '../../core/config/parse.js';
import { resolveVersion } from '../../core/config/resolve.js';
import { validateVersion } from '../../core/config/validate.js';

/** The display name given to the core's validator (a scenario's version has none of its own). */
const DISPLAY_NAME = 'scenario';

/** The problems under `version` instead of `config`, their words kept. */
const rebase = (problems: readonly Problem[]): Problem[] =>
  problems.map((p) => Object.freeze({ ...p, path: Object.freeze(['version', ...(p.path[0] === 'config' ? p.path.slice(1) : p.path)]) }));

/**
 * Parses the version config with `parseVersionConfig`, then (when it parsed) validates it with
 * `validateVersion` against the scenario's infrastructure regions. The core's `config` prefix
 * becomes `version` (`['version', 'matchmaker', 'game-modes', '*default*', 'max-players', 'too-high']`).
 *
 * @example
 * const out: Problem[] = []; parseScenarioVersion({ matchmaker: { game_modes: {} } }, new Set(['eu']), out);
 * // out: [{ path: ['version', 'matchmaker', 'game-modes-meta', 'too-few'] }]
 */
export function parseScenarioVersion(
  raw: unknown,
  regions: ReadonlySet<string>,
  out: Problem[],
): { readonly config: VersionConfig; readonly resolved: ResolvedVersion } | undefined {
  const parsed = parseVersionConfig(raw);
  if (!parsed.ok) {
    out.push(...rebase(parsed.error));
    return undefined;
  }
  const problems = validateVersion({ displayName: DISPLAY_NAME, config: parsed.value }, { regions });
  out.push(...rebase(problems));
  return problems.length > 0 ? undefined : { config: parsed.value, resolved: resolveVersion(parsed.value) };
}
