/**
 * A runtime's periodic upkeep (health checks, the reconciler): each task every so often, a failure
 * logged and tried again on the next round, all stopped at once on close.
 */
import type { Logger } from '../io/log.js';

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
