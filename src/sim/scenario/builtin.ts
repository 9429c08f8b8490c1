/**
 * The built-in scenarios, shipped as JSON files beside this module (the files are the single
 * source of truth; `scenario.schema.json` describes them).
 */
import type { Scenario } from './types.js';
import { parseScenario } from './parse.js';
import coldStart from './builtin/cold-start.json' with { type: 'json' };
import diurnal from './builtin/diurnal.json' with { type: 'json' };
import launchSpike from './builtin/launch-spike.json' with { type: 'json' };
import steady from './builtin/steady.json' with { type: 'json' };

export const BUILTIN_NAMES = Object.freeze(['steady', 'diurnal', 'launch-spike', 'cold-start'] as const);
export type BuiltinName = (typeof BUILTIN_NAMES)[number];

const FILES: Readonly<Record<BuiltinName, unknown>> = Object.freeze({
  steady,
  diurnal,
  'launch-spike': launchSpike,
  'cold-start': coldStart,
});

/**
 * Whether `name` names a built-in scenario.
 *
 * @example
 * isBuiltinName('steady'); // true
 */
export const isBuiltinName = (name: string): name is BuiltinName => (BUILTIN_NAMES as readonly string[]).includes(name);

/**
 * A built-in scenario's raw JSON (a fresh deep copy), for `--set` overrides before parsing.
 *
 * @example
 * applyOverrides(builtinScenarioJson('steady'), ['seed=9']);
 */
export const builtinScenarioJson = (name: BuiltinName): unknown => structuredClone(FILES[name]);

/**
 * A built-in scenario, parsed. Built-ins are valid (a test says so), so a problem here is a bug
 * and throws.
 *
 * @example
 * builtinScenario('cold-start').infrastructure.regions[0]?.lobbyStartDelayMs; // { kind: 'lognormal', median: 40000, p95: 120000 }
 */
export function builtinScenario(name: BuiltinName): Scenario {
  const parsed = parseScenario(FILES[name]);
  if (!parsed.ok) throw new Error(`built-in scenario ${name} is invalid: ${parsed.error.map((p) => p.path.join('.')).join(', ')}`);
  return parsed.value;
}
