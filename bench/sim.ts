/**
 * `npm run bench -- sim [speed] [scale] [core] [--hours N] [--json]`: the simulator's speed, its
 * memory at scale and its overhead over the core it drives (all three parts unless some are named).
 *
 * - speed: `diurnal` with its arrivals scaled so the expected peak is 10,000 concurrent players,
 *   24 h simulated: wall seconds, the speed against real time, and queue events handled per wall
 *   second (each drives the real services on the memory store, the metrics and the trace hash);
 *   the `steady` built-in (1 h) too, short enough that JIT warm-up weighs on it. Targets (issue 4):
 *   ≥ 100,000 events/s and the day in ≤ 60 s (≥ 1,440× real time).
 * - scale: `bench/scenarios/large-100k.json` (a 100k-CCU game) for `--hours` simulated hours
 *   (default 6; 24 for a whole day, about 4× longer), in a child process of its own: peak RSS and
 *   the live heap after a full collection at 1, 6 and 24 h (issue 23: memory flat as simulated time
 *   grows).
 * - core: the same 100k-CCU scenario from 30 to 33 simulated minutes, first as the simulator runs
 *   it (events/s over that window), then the decisions it committed in that window replayed in a
 *   loop on the core alone (each store transaction's decide function on the same chain of worlds,
 *   same clock readings and draws: no queue, effects, events, metrics or trace). The baseline is the
 *   core's rate on the same event mix, the window's events over the replay's time; target (issue
 *   23): the simulator at ≥ 50 % of it.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { builtinScenario } from '../src/sim/scenario/builtin.js';
import { expectedPeakCcu, scaleDemand } from '../src/sim/scenario/scale.js';
import { DecisionLog } from '../src/sim/world/decisions.js';
import { runScenario, type RunResult } from '../src/sim/world/run.js';
import { fmtRate, intArg, table } from './measure.js';
import { largeScenario } from './sim-large.js';
import type { ScaleResult } from './sim-scale.js';

const PARTS = ['speed', 'scale', 'core'] as const;
type Part = (typeof PARTS)[number];
const MINUTE = 60_000;
const WINDOW = { from: 30 * MINUTE, to: 33 * MINUTE };

interface Timed {
  readonly result: RunResult;
  readonly wallS: number;
}

const timed = async (run: () => Promise<RunResult>): Promise<Timed> => {
  const start = performance.now();
  const result = await run();
  return { result, wallS: (performance.now() - start) / 1000 };
};

const checked = (r: RunResult, what: string): RunResult => {
  if (r.violations.length > 0 || !r.clockMonotone) throw new Error(`${what}: invariants broke: ${r.violations.slice(0, 3).join('; ')}`);
  return r;
};

const speedPart = async () => {
  const steady = builtinScenario('steady');
  await runScenario({ ...steady, durationMs: 10 * MINUTE }); // warm-up
  const events = await timed(() => runScenario(steady));
  checked(events.result, 'steady');
  const diurnal = builtinScenario('diurnal');
  const factor = 10_000 / expectedPeakCcu(diurnal);
  const day = await timed(() => runScenario(scaleDemand(diurnal, factor)));
  checked(day.result, 'diurnal');
  return { events, day, factor, eventsPerS: day.result.events / day.wallS, dayRealtime: day.result.metrics.durationMs / 1000 / day.wallS };
};

const scalePart = async (hours: number): Promise<ScaleResult> => {
  const script = fileURLToPath(new URL('./sim-scale.js', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, ['--max-semi-space-size=64', '--expose-gc', script, '--hours', String(hours)], { maxBuffer: 1 << 20 });
  const result = JSON.parse(stdout) as ScaleResult;
  if (result.violations > 0) throw new Error(`large-100k: ${result.violations} invariants broke`);
  return result;
};

const corePart = async () => {
  const scenario = largeScenario(WINDOW.to / 3_600_000);
  const marks = new Map<number, { wall: number; events: number }>();
  checked(await runScenario(scenario, { onSample: (t, events) => void marks.set(t, { wall: performance.now(), events }) }), 'large-100k');
  const from = marks.get(WINDOW.from);
  const to = marks.get(WINDOW.to);
  if (from === undefined || to === undefined) throw new Error('the run sampled no minute at the window bounds');
  const events = to.events - from.events;
  const simS = (to.wall - from.wall) / 1000;
  const log = new DecisionLog(WINDOW.from);
  checked(await runScenario(scenario, { decisions: log }), 'large-100k (decisions kept)');
  const decisions = log.decisions;
  const { events: committed, decideMs } = log.replay();
  const coreS = decideMs / 1000;
  if (committed !== log.events) throw new Error(`the replay committed ${committed} events, the run ${log.events}: not the same decisions`);
  return { events, decisions, simS, coreS, simRate: events / simS, coreRate: events / coreS, decisionsPerS: decisions / coreS };
};

export const simBench = async (args: readonly string[]): Promise<void> => {
  const json = args.includes('--json');
  const named = args.filter((a): a is Part => (PARTS as readonly string[]).includes(a));
  const parts = new Set<Part>(named.length > 0 ? named : PARTS);
  const hours = intArg(args, '--hours', 6, 1, 48);
  const speed = parts.has('speed') ? await speedPart() : undefined;
  if (speed === undefined && parts.has('core')) await runScenario({ ...builtinScenario('steady'), durationMs: 10 * MINUTE }); // warm-up
  const core = parts.has('core') ? await corePart() : undefined;
  const scale = parts.has('scale') ? await scalePart(hours) : undefined;
  const at = (series: readonly number[], hour: number): number | undefined => series[hour - 1];

  if (json) {
    process.stdout.write(
      `${JSON.stringify({
        ...(speed === undefined ? {} : { events_per_s: Math.round(speed.eventsPerS), day_10k_ccu_s: Number(speed.day.wallS.toFixed(2)), day_realtime_x: Math.round(speed.dayRealtime) }),
        ...(scale === undefined ? {} : { scale }),
        ...(core === undefined
          ? {}
          : { core: { window_events: core.events, decisions: core.decisions, sim_events_per_s: Math.round(core.simRate), core_events_per_s: Math.round(core.coreRate), core_decisions_per_s: Math.round(core.decisionsPerS), sim_share_of_core: Number((core.simRate / core.coreRate).toFixed(3)) } }),
      })}\n`,
    );
    return;
  }
  const out: string[] = [];
  if (speed !== undefined) {
    const { events, day, factor, eventsPerS, dayRealtime } = speed;
    out.push(
      table(['run', 'events', 'wall', 'events/s', 'vs real time', 'peak CCU'], [
        ['steady, 1 h', fmtRate(events.result.events), `${events.wallS.toFixed(2)} s`, fmtRate(events.result.events / events.wallS), `${Math.round(events.result.metrics.durationMs / 1000 / events.wallS)}×`, String(events.result.metrics.peakCcu)],
        [`diurnal ×${factor.toFixed(2)}, 24 h`, fmtRate(day.result.events), `${day.wallS.toFixed(2)} s`, fmtRate(eventsPerS), `${Math.round(dayRealtime)}×`, String(day.result.metrics.peakCcu)],
      ]),
      `targets: ≥ 100k events/s (${fmtRate(eventsPerS)}), the 10k-CCU day in ≤ 60 s (${day.wallS.toFixed(1)} s, ${Math.round(dayRealtime)}× real time, ≥ 1,440× wanted)`,
    );
  }
  if (scale !== undefined) {
    const hoursShown = [1, 6, 24].filter((h) => h <= scale.hours);
    if (!hoursShown.includes(scale.hours)) hoursShown.push(scale.hours);
    out.push(
      `large-100k, ${scale.hours} h simulated: ${fmtRate(scale.events)} events in ${scale.wall_s.toFixed(1)} s (${fmtRate(scale.events_per_s)} events/s), peak CCU ${scale.peak_ccu.toLocaleString('en-US')}, mean ${scale.mean_ccu.toLocaleString('en-US')}`,
      table(['simulated', 'peak RSS so far', 'live heap after GC'], hoursShown.map((h) => [`${h} h`, `${at(scale.peak_rss_mb, h) ?? '–'} MB`, `${at(scale.live_heap_mb, h) ?? '–'} MB`])),
    );
  }
  if (core !== undefined) {
    const share = core.simRate / core.coreRate;
    out.push(
      `large-100k, ${WINDOW.from / MINUTE}–${WINDOW.to / MINUTE} min: ${fmtRate(core.events)} events, ${fmtRate(core.decisions)} decisions`,
      table(['what', 'wall', 'events/s', 'decisions/s'], [
        ['simulator', `${core.simS.toFixed(2)} s`, fmtRate(core.simRate), fmtRate(core.decisions / core.simS)],
        ['core alone', `${core.coreS.toFixed(2)} s`, fmtRate(core.coreRate), fmtRate(core.decisionsPerS)],
      ]),
      `target: the simulator at ≥ 50 % of the core's rate (${(share * 100).toFixed(0)} %)`,
    );
  }
  process.stdout.write(`${out.join('\n\n')}\n`);
};
