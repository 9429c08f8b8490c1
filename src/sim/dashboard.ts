/**
 * The simulator the dashboard runs (`io/simulator.ts`): a built-in scenario, cut to the minutes
 * asked for, run on virtual time, and reported as its summary table and charts.
 */
import { validationError } from '../core/errors.js';
import { err, ok } from '../core/result.js';
import type { Simulator } from '../io/simulator.js';
import { runCharts, summaryTable } from './report.js';
import { builtinScenarioJson, isBuiltinName } from './scenario/builtin.js';
import { applyOverrides } from './scenario/overrides.js';
import { parseScenario } from './scenario/parse.js';
import { runScenario } from './world/run.js';

/**
 * @example
 * const report = await builtinSimulator.runBuiltin('steady', 5); // ok({ summary, charts })
 */
export const builtinSimulator: Simulator = Object.freeze({
  async runBuiltin(name: string, minutes: number) {
    if (!isBuiltinName(name)) return err(validationError([{ path: ['scenario', 'not-builtin'] }]));
    const json = applyOverrides(builtinScenarioJson(name), [`duration_ms=${minutes * 60_000}`]);
    const scenario = json.ok ? parseScenario(json.value) : undefined;
    if (scenario === undefined || !scenario.ok) return err(validationError([{ path: ['scenario', 'invalid'] }]));
    const result = await runScenario(scenario.value);
    return ok({ summary: summaryTable(result), charts: runCharts(result) });
  },
});
