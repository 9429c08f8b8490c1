/**
 * A preview's replays in worker threads, one each, run side by side on one read of the recording:
 * the main thread reads the export once and hands each text (`source.ts`) to every replay, holding
 * back while any replay has {@link AHEAD} texts it has not taken yet, so memory stays bounded
 * whatever the recording's length. Each worker runs `replayRecorded` (`replay.ts`) as the preview's
 * own thread would: the same outcome, bit for bit, on two cores in about the time of one replay.
 */
import { Worker } from 'node:worker_threads';
import type { ReplayJob, ReplayOutcome } from './replay.js';
import type { ToReplay } from './replay-worker.js';

/** Texts a replay may have waiting (each {@link BATCH} requests, a few tens of kB). */
export const AHEAD = 8;

/**
 * Each worker's young generation (V8's default lets it grow to 32 MB of new space). Measured on the
 * 1-day and 7-day recordings at 1,000 CCU (bench/RESULTS.md, 2026-11-29 13:25): with the default,
 * the process's peak RSS grew 1.28× from 1 day to 7; with 8 MB, 1.11× (and 30 MB less), for about
 * 5 % more CPU. A run's live heap is flat (about 20 MB after a collection, a day or a week).
 */
export const WORKER_YOUNG_GENERATION_MB = 8;

type FromReplay = { readonly ack: true } | { readonly outcome: ReplayOutcome };

/**
 * A worker running `replay-worker`: the compiled `.js` beside this file, or (running from the
 * TypeScript sources: tests, tsx) the `.ts` one through tsx's loader, registered first.
 */
function startWorker(job: ReplayJob): Worker {
  const source = import.meta.url.endsWith('.ts');
  const entry = new URL(`./replay-worker.${source ? 'ts' : 'js'}`, import.meta.url);
  const options = { workerData: job, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } };
  if (!source) return new Worker(entry, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(boot, { ...options, eval: true });
}

interface Replay {
  readonly worker: Worker;
  /** Texts sent and not taken yet. */
  waiting: number;
  done: boolean;
}

/**
 * Runs each job in a worker thread of its own on the same texts; the outcomes in the jobs' order.
 * A failing replay (or text source) fails the whole and stops every worker.
 *
 * @example
 * const [live, next] = await replayInWorkers([liveJob, nextJob], textBatches(exportDemandPages(store, ns, window, options)));
 */
export async function replayInWorkers(jobs: readonly ReplayJob[], texts: AsyncIterable<string>): Promise<ReplayOutcome[]> {
  let wake: (() => void) | undefined;
  let failure: { error: unknown } | undefined;
  const nudge = (): void => {
    wake?.();
    wake = undefined;
  };
  const replays: Replay[] = [];
  const outcomes = jobs.map((job) => {
    const replay: Replay = { worker: startWorker(job), waiting: 0, done: false };
    replays.push(replay);
    return new Promise<ReplayOutcome>((resolve, reject) => {
      const fail = (error: unknown): void => {
        failure ??= { error };
        replay.done = true;
        reject(error instanceof Error ? error : new Error(String(error)));
        nudge();
      };
      replay.worker.on('message', (m: FromReplay) => {
        if ('ack' in m) replay.waiting -= 1;
        else {
          replay.done = true;
          resolve(m.outcome);
        }
        nudge();
      });
      replay.worker.on('error', fail);
      replay.worker.on('exit', (code) => {
        if (!replay.done) fail(new Error(`a preview replay's worker exited (code ${code}) before its run was over`));
      });
    });
  });
  // Every outcome is awaited below; a failure is also raised from the loop.
  for (const o of outcomes) o.catch(() => undefined);
  const send = (r: Replay, m: ToReplay): void => {
    if (!r.done) r.worker.postMessage(m);
  };
  try {
    for await (const text of texts) {
      while (failure === undefined && replays.some((r) => !r.done && r.waiting >= AHEAD)) await new Promise<void>((resolve) => (wake = resolve));
      if (failure !== undefined) throw failure.error;
      for (const r of replays) {
        send(r, { text });
        if (!r.done) r.waiting += 1;
      }
    }
    for (const r of replays) send(r, { end: true });
    return await Promise.all(outcomes);
  } finally {
    await Promise.all(replays.map((r) => r.worker.terminate()));
  }
}
