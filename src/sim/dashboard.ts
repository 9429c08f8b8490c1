/**
 * The simulator the server runs (`io/simulator.ts`): for the dashboard, a built-in scenario, cut to
 * the minutes asked for, run on virtual time, and reported as its summary table and charts; for the
 * deploy preview, the recorded demand replayed under two configs (`preview/preview.ts`).
 */
import { validationError } from '../core/errors.js';
import { err, ok } from '../core/result.js';
import type { PreviewRequest, Simulator } from '../io/simulator.js';
import { previewDeploy } from './preview/preview.js';
import { previewJson } from './preview/report.js';
import { runCharts, summaryTable } from './report.js';
import { builtinScenarioJson, isBuiltinName } from './scenario/builtin.js';
import { applyOverrides } from './scenario/overrides.js';
import { MAX_DURATION_MS, parseScenario } from './scenario/parse.js';
import { runScenario } from './world/run.js';

/**
 * @example
 * const report = await builtinSimulator.runBuiltin('steady', 5); // ok({ summary, charts })
 */
export const builtinSimulator: Simulator = Object.freeze({
  maxPreviewWindowMs: MAX_DURATION_MS,
  preview: async (request: PreviewRequest) => previewJson(await previewDeploy(request)),
  async runBuiltin(name: string, minutes: number) {
    if (!isBuiltinName(name)) return err(validationError([{ path: ['scenario', 'not-builtin'] }]));
    const json = applyOverrides(builtinScenarioJson(name), [`duration_ms=${minutes * 60_000}`]);
    const scenario = json.ok ? parseScenario(json.value) : undefined;
    if (scenario === undefined || !scenario.ok) return err(validationError([{ path: ['scenario', 'invalid'] }]));
    const result = await runScenario(scenario.value);
    return ok({ summary: summaryTable(result), charts: runCharts(result) });
  },
});
