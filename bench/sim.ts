/**
 * `npm run bench -- sim [--json]`: the simulator's speed on one core.
 *
 * - day at 10k CCU: `diurnal` with its arrivals scaled so the expected peak is 10,000 concurrent
 *   players, 24 h simulated: wall seconds, and the speed against real time (the baseline).
 * - events/s: queue events handled per wall second over that day (each drives the real services on
 *   the memory store, the metrics and the trace hash); the `steady` built-in (1 h) is shown too,
 *   short enough that JIT warm-up weighs on it.
 *
 * Targets (issue 4): ≥ 100,000 events/s and the day in ≤ 60 s (≥ 1,440× real time).
 */
import { builtinScenario } from '../src/sim/scenario/builtin.js';
import { expectedPeakCcu, scaleDemand } from '../src/sim/scenario/scale.js';
import { runScenario, type RunResult } from '../src/sim/world/run.js';
import { fmtRate, table } from './measure.js';

interface Timed {
  readonly result: RunResult;
  readonly wallS: number;
}

const timed = async (run: () => Promise<RunResult>): Promise<Timed> => {
  const start = performance.now();
  const result = await run();
  return { result, wallS: (performance.now() - start) / 1000 };
};

export const simBench = async (args: readonly string[]): Promise<void> => {
  const json = args.includes('--json');
  const steady = builtinScenario('steady');
  await runScenario({ ...steady, durationMs: 10 * 60_000 }); // warm-up
  const events = await timed(() => runScenario(steady));
  const diurnal = builtinScenario('diurnal');
  const factor = 10_000 / expectedPeakCcu(diurnal);
  const day = await timed(() => runScenario(scaleDemand(diurnal, factor)));
  const eventsPerS = day.result.events / day.wallS;
  const dayRealtime = day.result.metrics.durationMs / 1000 / day.wallS;
  if (day.result.violations.length > 0 || events.result.violations.length > 0) {
    throw new Error(`invariants broke: ${[...events.result.violations, ...day.result.violations].slice(0, 3).join('; ')}`);
  }
  if (json) {
    process.stdout.write(`${JSON.stringify({ events_per_s: Math.round(eventsPerS), day_10k_ccu_s: Number(day.wallS.toFixed(2)), day_realtime_x: Math.round(dayRealtime) })}\n`);
    return;
  }
  const rows = [
    ['steady, 1 h', fmtRate(events.result.events), `${events.wallS.toFixed(2)} s`, fmtRate(events.result.events / events.wallS), `${Math.round(events.result.metrics.durationMs / 1000 / events.wallS)}×`, String(events.result.metrics.peakCcu)],
    [`diurnal ×${factor.toFixed(2)}, 24 h`, fmtRate(day.result.events), `${day.wallS.toFixed(2)} s`, fmtRate(eventsPerS), `${Math.round(dayRealtime)}×`, String(day.result.metrics.peakCcu)],
  ];
  process.stdout.write(`${table(['run', 'events', 'wall', 'events/s', 'vs real time', 'peak CCU'], rows)}\n`);
  process.stdout.write(`\ntargets: ≥ 100k events/s (${fmtRate(eventsPerS)}), the 10k-CCU day in ≤ 60 s (${day.wallS.toFixed(1)} s, ${Math.round(dayRealtime)}× real time, ≥ 1,440× wanted)\n`);
};
