/**
 * The scale benchmark's scenario (`bench/scenarios/large-100k.json`): a 100k-CCU game, constant
 * arrivals in four regions, for `hours` of simulated time.
 */
import { parseScenario } from '../src/sim/scenario/parse.js';
import type { Scenario } from '../src/sim/scenario/types.js';
import large from './scenarios/large-100k.json' with { type: 'json' };

export const HOUR_MS = 3_600_000;

/**
 * @example
 * await runScenario(largeScenario(6));
 */
export const largeScenario = (hours: number): Scenario => {
  const parsed = parseScenario(large);
  if (!parsed.ok) throw new Error(`large-100k.json is invalid: ${parsed.error.map((p) => p.path.join('.')).join(', ')}`);
  return { ...parsed.value, durationMs: Math.round(hours * HOUR_MS) };
};
