/**
 * One replay of a preview: a calibrated scenario (as JSON) run on the recording's texts
 * (`source.ts`), counting the requests it replays by game mode and region. The same function runs
 * in the preview's thread or in a worker thread of its own (`replay-worker.ts`, `workers.ts`): the
 * job is plain data and so is what it returns, so both give the same result, bit for bit.
 */
import { parseScenario } from '../scenario/parse.js';
import type { Scenario } from '../scenario/types.js';
import { runScenario, type RunResult } from '../world/run.js';
import { recordedBatches } from './source.js';

/** Samples a preview's run keeps (its charts): one every 8 minutes over a week, every minute of a day. */
export const PREVIEW_SAMPLES = 2_048;

/** What one replay needs: the scenario as `parseScenario` reads it (with external demand), and the seed. */
export interface ReplayJob {
  readonly scenario: Record<string, unknown>;
  readonly seed: number;
}

/** Requests replayed in one game mode and region. */
export interface RequestCount {
  readonly gameMode: string;
  readonly region: string;
  readonly count: number;
}

export interface ReplayOutcome {
  readonly run: RunResult;
  /** In order of first appearance in the recording. */
  readonly requests: readonly RequestCount[];
}

/**
 * The scenario of a job, or why it is not one (`which` names it: `live`, `new`).
 *
 * @example
 * const scenario = jobScenario({ scenario: json, seed: 1 }, 'live');
 */
export function jobScenario(job: ReplayJob, which: string): Scenario {
  const parsed = parseScenario(job.scenario, { externalDemand: true });
  if (!parsed.ok) throw new Error(`the ${which} scenario is invalid: ${parsed.error.map((p) => p.path.join('.')).join(', ')}`);
  return parsed.value;
}

/**
 * Runs a job on the recording's texts.
 *
 * @example
 * const { run, requests } = await replayRecorded(job, textBatches(exportDemandPages(store, ns, window, options)));
 */
export async function replayRecorded(job: ReplayJob, texts: AsyncIterable<string>): Promise<ReplayOutcome> {
  const counts = new Map<string, { gameMode: string; region: string; count: number }>();
  const seen = (r: { readonly gameMode: string; readonly region: string }): void => {
    const key = `${r.gameMode}\u0001${r.region}`;
    const c = counts.get(key);
    if (c === undefined) counts.set(key, { gameMode: r.gameMode, region: r.region, count: 1 });
    else c.count += 1;
  };
  const run = await runScenario(jobScenario(job, 'replayed'), { seed: job.seed, maxSamples: PREVIEW_SAMPLES, recordedBatches: recordedBatches(texts, seen) });
  return { run, requests: [...counts.values()] };
}
