import { describe, expect, it } from 'vitest';
import { builtinScenarioJson } from '../../../src/sim/scenario/builtin.js';
import { applyOverrides } from '../../../src/sim/scenario/overrides.js';
import { parseScenario } from '../../../src/sim/scenario/parse.js';
import type { Scenario } from '../../../src/sim/scenario/types.js';
import { firstDivergence } from '../../../src/sim/trace/trace.js';
import { runScenario, type RunResult } from '../../../src/sim/world/run.js';

/** `steady` for 12 minutes, finds and creates only (no join to a lobby that filled meanwhile: no refusal without an outage). */
const steady = (sets: readonly string[] = []): Scenario => {
  const json = applyOverrides(builtinScenarioJson('steady'), [
    'duration_ms=720000',
    'demand.default.eu-west.mix={"find":0.9,"create":0.1}',
    'demand.default.us-east.mix={"find":0.9,"create":0.1}',
    ...sets,
  ]);
  if (!json.ok) throw new Error(JSON.stringify(json.error));
  const parsed = parseScenario(json.value);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.error));
  return parsed.value;
};

/** When each request was refused, or a seat failed, by code (from the trace). */
const refusalTimes = (r: RunResult): Map<string, number[]> => {
  const times = new Map<string, number[]>();
  for (const record of r.trace.records ?? []) {
    const data = record.data as { readonly code?: string; readonly type?: string };
    if (data.code === undefined || (record.kind !== 'outcome' && data.type !== 'seat-failed')) continue;
    times.set(data.code, [...(times.get(data.code) ?? []), record.t]);
  }
  return times;
};

describe('a runtime outage in a scenario', () => {
  // From 5 min on the engine does not answer for 2 min; the runtime notices 30 s late, and its end too.
  const AT = 300_000;
  const END = AT + 120_000;
  const NOTICED = 30_000;

  it('shows its refusals in the metrics (failed starts put the mode under back-off, then the runtime is unavailable), all within the outage', async () => {
    const calm = await runScenario(steady(), { keepTrace: true });
    const out = await runScenario(steady([`infrastructure.runtime_outages=[{"at_ms":${AT},"duration_ms":120000,"noticed_after_ms":${NOTICED}}]`]), { keepTrace: true });
    expect(calm.metrics.rejections).toEqual({});
    expect(calm.metrics.seatFailures).toEqual({});
    expect(out.metrics.rejections['MATCHMAKER_LOBBY_START_BACKOFF']).toBeGreaterThan(0);
    expect(out.metrics.rejections['MATCHMAKER_RUNTIME_UNAVAILABLE']).toBeGreaterThan(0);
    // A seat in a lobby whose start failed before the runtime noticed.
    expect(out.metrics.seatFailures['MATCHMAKER_LOBBY_STOPPED']).toBeGreaterThan(0);
    const times = refusalTimes(out);
    expect([...times.keys()].sort()).toEqual(['MATCHMAKER_LOBBY_START_BACKOFF', 'MATCHMAKER_LOBBY_STOPPED', 'MATCHMAKER_RUNTIME_UNAVAILABLE']);
    // Starts fail (and back off) until the runtime notices; then it is unavailable until it notices the end.
    for (const t of [...(times.get('MATCHMAKER_LOBBY_START_BACKOFF') ?? []), ...(times.get('MATCHMAKER_LOBBY_STOPPED') ?? [])]) expect(t >= AT && t < AT + NOTICED).toBe(true);
    for (const t of times.get('MATCHMAKER_RUNTIME_UNAVAILABLE') ?? []) expect(t >= AT + NOTICED && t < END + NOTICED).toBe(true);
    // Before the outage the run is the calm one, record for record.
    expect(firstDivergence(calm.trace.records ?? [], out.trace.records ?? [])?.actual?.t).toBeGreaterThanOrEqual(AT);
    expect(out.violations).toEqual([]);
    expect(calm.violations).toEqual([]);
  });
});
