/**
 * The scale part of `npm run bench -- sim`, run in a process of its own so that its peak RSS is
 * the run's alone: `large-100k` for `--hours N` of simulated time (node --expose-gc). At every
 * simulated hour it reads the peak RSS so far and, after a full collection, the live heap; the
 * collections' time is left out of the speed. Prints one JSON object.
 */
import { runScenario } from '../src/sim/world/run.js';
import { intArg } from './measure.js';
import { HOUR_MS, largeScenario } from './sim-large.js';

export interface ScaleResult {
  readonly hours: number;
  readonly events: number;
  readonly wall_s: number;
  readonly events_per_s: number;
  readonly peak_ccu: number;
  readonly mean_ccu: number;
  /** Per simulated hour (index 0 at 1 h): peak RSS so far and live heap after a full GC, in MB. */
  readonly peak_rss_mb: readonly number[];
  readonly live_heap_mb: readonly number[];
  readonly violations: number;
}

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');
const mb = (bytes: number): number => Math.round(bytes / 1e5) / 10;

const hours = intArg(process.argv.slice(2), '--hours', 6, 1, 48);
const peakRss: number[] = [];
const liveHeap: number[] = [];
let gcMs = 0;
const start = performance.now();
const result = await runScenario(largeScenario(hours), {
  onSample: (t) => {
    if (t === 0 || t % HOUR_MS !== 0) return;
    peakRss.push(mb(process.resourceUsage().maxRSS * 1024));
    const before = performance.now();
    gc();
    gcMs += performance.now() - before;
    liveHeap.push(mb(process.memoryUsage().heapUsed));
  },
});
const wallS = (performance.now() - start - gcMs) / 1000;
const out: ScaleResult = {
  hours,
  events: result.events,
  wall_s: Math.round(wallS * 10) / 10,
  events_per_s: Math.round(result.events / wallS),
  peak_ccu: result.metrics.peakCcu,
  mean_ccu: Math.round(result.metrics.meanCcu),
  peak_rss_mb: peakRss,
  live_heap_mb: liveHeap,
  violations: result.violations.length + (result.clockMonotone ? 0 : 1),
};
process.stdout.write(`${JSON.stringify(out)}\n`);
