/**
 * The loop of a simulated run: it pops the queue's events in (time, sequence) order and, after each
 * one, lets every task that event woke (a service call, a simulated client) run to its next sleep on
 * virtual time or to its end before time moves on. Tasks run as microtasks; the last one to sleep or
 * end resumes the loop directly, so an event costs no promise of its own.
 */
import type { Simulation } from '../engine/clock.js';

export interface DriveResult {
  /** Queue events handled. */
  readonly events: number;
  /** Whether the virtual clock ever went backwards (never, or the queue is broken). */
  readonly monotone: boolean;
}

/**
 * @example
 * const driver = new Driver(sim, 3_600_000);
 * sim.schedule(0, () => driver.spawn(mm.find(request)));
 * const { events } = await driver.run();
 */
export class Driver {
  readonly #sim: Simulation<() => void>;
  readonly #end: number;
  readonly #onProgress: ((fraction: number) => void) | undefined;
  /** Tasks in flight, and those of them asleep on virtual time: the others are still running. */
  #inflight = 0;
  #sleeping = 0;
  /** The loop is paused until every task in flight sleeps or has ended. */
  #waiting = false;
  #failure: unknown;
  #events = 0;
  #last = 0;
  #monotone = true;
  #nextReport: number;
  readonly #step: number;
  readonly #outside: boolean;
  #finish: ((result: DriveResult) => void) | undefined;
  #fail: ((error: unknown) => void) | undefined;

  /**
   * `outside`: tasks may wait on the outside world (a recording read as the run goes), so the loop
   * does not fail when the event loop gets a turn.
   */
  constructor(sim: Simulation<() => void>, end: number, onProgress?: (fraction: number) => void, outside = false) {
    this.#outside = outside;
    this.#sim = sim;
    this.#end = end;
    this.#onProgress = onProgress;
    this.#step = Math.max(1, end / 100);
    this.#nextReport = this.#step;
  }

  /** Queue events handled so far. */
  get events(): number {
    return this.#events;
  }

  /** Track a task started by an event: the loop waits for it to sleep or end; a failure fails the run. */
  spawn(task: Promise<unknown>): void {
    this.#inflight += 1;
    task.then(this.#ended, this.#failed);
  }

  /** A promise resolved `delay` virtual ms from now; its task counts as asleep meanwhile. */
  sleep(delay: number): Promise<void> {
    return new Promise((resolve) => {
      this.#sleeping += 1;
      this.#settled();
      this.#sim.scheduleIn(delay, () => {
        this.#sleeping -= 1;
        resolve();
      });
    });
  }

  readonly #ended = (): void => {
    this.#inflight -= 1;
    this.#settled();
  };

  readonly #failed = (error: unknown): void => {
    this.#inflight -= 1;
    this.#failure ??= error;
    this.#settled();
  };

  #settled(): void {
    if (!this.#waiting || this.#inflight > this.#sleeping) return;
    this.#waiting = false;
    this.#loop();
  }

  /**
   * Handle every event up to the end time. A run is one chain of microtasks: the event loop only gets
   * a turn when a task waits on something other than virtual time, and then the run fails instead of
   * hanging.
   */
  run(): Promise<DriveResult> {
    return new Promise<DriveResult>((resolve, reject) => {
      const watchdog = this.#outside ? undefined : setImmediate(() => this.#fail?.(new Error('a simulated task waits on something other than virtual time')));
      this.#finish = (result) => {
        if (watchdog !== undefined) clearImmediate(watchdog);
        resolve(result);
      };
      this.#fail = (error) => {
        if (watchdog !== undefined) clearImmediate(watchdog);
        this.#finish = undefined;
        this.#fail = undefined;
        reject(error instanceof Error ? error : new Error('a simulated task failed', { cause: error }));
      };
      this.#loop();
    });
  }

  #loop(): void {
    try {
      for (;;) {
        if (this.#failure !== undefined) {
          this.#fail?.(this.#failure);
          return;
        }
        const item = this.#sim.peek();
        if (item === undefined || item.time > this.#end) break;
        this.#sim.next();
        if (item.time < this.#last) this.#monotone = false;
        this.#last = item.time;
        item.event();
        this.#events += 1;
        if (this.#onProgress !== undefined && item.time >= this.#nextReport) {
          this.#onProgress(item.time / this.#end);
          this.#nextReport = (Math.floor(item.time / this.#step) + 1) * this.#step;
        }
        if (this.#inflight > this.#sleeping) {
          this.#waiting = true;
          return;
        }
      }
      this.#finish?.({ events: this.#events, monotone: this.#monotone });
    } catch (error) {
      this.#fail?.(error);
    }
  }
}
