/**
 * Waiting for lobbies' tasks to run, for every start at once: one look at the manager's tasks of
 * all the services still starting (`GET /tasks?filters={"service":[…]}`) every 20 ms during a
 * start's first 3 s, every 250 ms after. Swarm runs a task 0.3–1.5 s after its service is made, so
 * the step is what a start waits for past that (a 50 → 250 ms back-off added 100–250 ms), and one
 * request a tick, however many starts wait, keeps the manager's load that of one start.
 */
import { isStatus } from '../docker/engine-errors.js';
import { latestTask, PLACED, type RawTask, type SwarmNodeFacts, taskOutcome } from './swarm-state.js';

export interface TaskWaiterOptions {
  /** The tasks of these services (the manager answers 404 for the whole list when one is gone). */
  readonly tasks: (serviceIds: readonly string[]) => Promise<readonly RawTask[]>;
  /** The nodes, to tell a task whose node the manager no longer hears from. */
  readonly nodes: () => Promise<readonly SwarmNodeFacts[]>;
  readonly now: () => number;
  /** The step during a start's first `fastForMs`, and after; default 20 ms, 250 ms, 3 s. */
  readonly fastMs?: number;
  readonly slowMs?: number;
  readonly fastForMs?: number;
}

/** What a read gave: its items, or why it failed. */
type Read<T> = { readonly ok: readonly T[] } | { readonly error: unknown };

interface Waiter {
  readonly since: number;
  readonly timeoutMs: number;
  readonly resolve: (nodeId: string) => void;
  readonly reject: (error: unknown) => void;
  readonly placed?: ((nodeId: string) => void) | undefined;
}

/**
 * @example
 * const waiter = new TaskWaiter({ tasks: (ids) => manager.listTasks({ filters: { service: [...ids] } }), nodes, now: () => Date.now() });
 * const nodeId = await waiter.until(service.id, 120_000);
 */
export class TaskWaiter {
  readonly #o: TaskWaiterOptions;
  readonly #waiting = new Map<string, Waiter>();
  #looking = false;
  #wake: (() => void) | undefined;

  constructor(options: TaskWaiterOptions) {
    this.#o = options;
  }

  /**
   * The node the service's task runs on, once it runs; rejects saying why when it ended, was lost,
   * or did not run within `timeoutMs`. `placed` hears the node as soon as the scheduler chose it
   * (each look until it runs), before the manager calls the task running.
   */
  until(serviceId: string, timeoutMs: number, placed?: (nodeId: string) => void): Promise<string> {
    return new Promise((resolve, reject) => {
      this.#waiting.set(serviceId, { since: this.#o.now(), timeoutMs, resolve, reject, placed });
      if (this.#looking) this.#wake?.();
      else void this.#loop();
    });
  }

  async #loop(): Promise<void> {
    this.#looking = true;
    try {
      while (this.#waiting.size > 0) {
        await this.#look();
        if (this.#waiting.size > 0) await this.#sleep(this.#step());
      }
    } finally {
      this.#looking = false;
    }
  }

  /** One look at every waiting service's task; settles those that run, ended, were lost or timed out. */
  async #look(): Promise<void> {
    const waiting = [...this.#waiting];
    const [found, nodes] = await Promise.all([this.#tasksOf(waiting.map(([id]) => id)), this.#o.nodes().then((n): Read<SwarmNodeFacts> => ({ ok: n }), (error: unknown): Read<SwarmNodeFacts> => ({ error }))]);
    const now = this.#o.now();
    for (const [id, w] of waiting) {
      const tasks = found.get(id) ?? { ok: [] };
      if ('error' in tasks || 'error' in nodes) {
        const failed = 'error' in tasks ? tasks.error : 'error' in nodes ? nodes.error : undefined;
        this.#settle(id, () => w.reject(failed));
        continue;
      }
      const task = latestTask(tasks.ok);
      if (w.placed !== undefined && task?.NodeID !== undefined && PLACED.has(task.Status?.State ?? '')) w.placed(task.NodeID);
      const last = taskOutcome(task, nodes.ok);
      if (last.kind === 'running') this.#settle(id, () => w.resolve(last.nodeId));
      else if (last.kind === 'ended' || last.kind === 'lost') this.#settle(id, () => w.reject(new Error(`the lobby's task did not start: ${last.why}`)));
      else if (now - w.since >= w.timeoutMs) {
        this.#settle(id, () => w.reject(new Error(`the lobby's task did not run within ${w.timeoutMs} ms${last.why === undefined ? '' : `: ${last.why}`}`)));
      }
    }
  }

  /**
   * Each service's tasks, or why they could not be read: one request for all; when the manager
   * answers 404 (one of them is gone), one request each, so only the start whose service is gone fails.
   */
  async #tasksOf(ids: readonly string[]): Promise<Map<string, Read<RawTask>>> {
    try {
      const tasks = await this.#o.tasks(ids);
      return new Map(ids.map((id) => [id, { ok: tasks.filter((t) => t.ServiceID === id) }]));
    } catch (error) {
      if (ids.length === 1 || !isStatus(error, 404)) return new Map(ids.map((id) => [id, { error }]));
    }
    return new Map(await Promise.all(ids.map(async (id) => [id, await this.#o.tasks([id]).then((ok): Read<RawTask> => ({ ok }), (error: unknown): Read<RawTask> => ({ error }))] as const)));
  }

  #settle(id: string, settle: () => void): void {
    this.#waiting.delete(id);
    settle();
  }

  #step(): number {
    const now = this.#o.now();
    const young = [...this.#waiting.values()].some((w) => now - w.since < (this.#o.fastForMs ?? 3_000));
    return young ? (this.#o.fastMs ?? 20) : (this.#o.slowMs ?? 250);
  }

  /** Waits `ms`, or less when a start arrives meanwhile (its first look is not put off by a slow step). */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      // Not unref'd: a start waiting for its task keeps the process alive (it is bounded).
      const timer = setTimeout(() => done(), ms);
      const done = (): void => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      this.#wake = done;
    });
  }
}
