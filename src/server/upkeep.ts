/**
 * A runtime's periodic upkeep (health checks, the reconciler): each task every so often, a failure
 * logged and tried again on the next round, all stopped at once on close.
 */
import type { HostedRuntime } from '../io/runtime.js';
import type { Logger } from '../io/log.js';
import { reconcileRuntime, type ReconcilerDeps } from '../services/reconcile.js';

export interface Upkeep {
  /** Runs `task` every `ms` (unref'd: it never keeps the process alive). */
  every(ms: number, task: () => Promise<void>): void;
  /** Whether anything was scheduled yet. */
  readonly started: boolean;
  stop(): void;
}

/**
 * @example
 * const upkeep = createUpkeep(logger); upkeep.every(5_000, check); … upkeep.stop();
 */
export const createUpkeep = (logger: Pick<Logger, 'error'>): Upkeep => {
  const timers: ReturnType<typeof setInterval>[] = [];
  return {
    every(ms, task) {
      const t = setInterval(() => void task().catch((error: unknown) => logger.error({ err: error }, 'runtime upkeep failed')), ms);
      t.unref();
      timers.push(t);
    },
    get started() {
      return timers.length > 0;
    },
    stop() {
      for (const t of timers.splice(0)) clearInterval(t);
    },
  };
};

/**
 * One reconciler pass over `runtime`'s containers (adopt, discard orphans, report the missing),
 * logged when it changed anything; nothing before a matchmaker is attached or while the runtime is
 * unreachable.
 *
 * @example
 * const reconcile = reconciler(runtime, deps.catalog, () => matchmaker, instanceId, logger);
 */
export const reconciler = (
  runtime: HostedRuntime & { available(): boolean },
  hosts: ReconcilerDeps['hosts'],
  matchmaker: () => ReconcilerDeps['matchmaker'] | undefined,
  instanceId: string,
  logger: Pick<Logger, 'info'>,
): (() => Promise<void>) => async () => {
  const mm = matchmaker();
  if (mm === undefined || !runtime.available()) return;
  const report = await reconcileRuntime({ runtime, hosts, matchmaker: mm, instanceId });
  if (report.adopted + report.discarded + report.gone > 0) logger.info({ ...report }, 'runtime reconciled');
};
