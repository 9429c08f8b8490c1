/**
 * Virtual time. The clock reads the queue's last popped time, so it moves only when the queue
 * pops; a {@link Simulation} ties the two together for scheduling and running.
 */
import { EventQueue, type Scheduled } from './queue.js';

/** The io-friendly shape of a clock: epoch-like milliseconds from `now()`. */
export interface Clock {
  readonly now: () => number;
}

/**
 * A clock whose time is the time of the last event popped from `queue`.
 *
 * @example
 * const q = new EventQueue<string>(100);
 * const clock = new VirtualClock(q);
 * clock.now(); // 100
 * q.push(250, 'tick'); q.pop();
 * clock.now(); // 250
 */
export class VirtualClock<E = unknown> implements Clock {
  readonly #queue: EventQueue<E>;

  constructor(queue: EventQueue<E>) {
    this.#queue = queue;
  }

  /** The current virtual time (an arrow so it can be passed around detached). */
  readonly now = (): number => this.#queue.lastPopped;
}

/**
 * A queue plus its clock: schedule events at absolute or relative virtual times and run them in
 * (time, seq) order. Handlers may schedule more events, never in the past.
 *
 * @example
 * const sim = new Simulation<string>(0);
 * sim.scheduleIn(10, 'b');
 * sim.schedule(5, 'a');
 * const seen: string[] = [];
 * sim.runUntil(100, (time, event) => seen.push(`${time}:${event}`));
 * seen; // ['5:a', '10:b']
 */
export class Simulation<E> {
  readonly #queue: EventQueue<E>;
  /** The virtual clock; hand `sim.clock` to anything that wants `{ now() }`. */
  readonly clock: Clock;

  constructor(start = 0) {
    this.#queue = new EventQueue<E>(start);
    this.clock = Object.freeze({ now: new VirtualClock(this.#queue).now });
  }

  /** The current virtual time. */
  now(): number {
    return this.#queue.lastPopped;
  }

  /** How many events are waiting. */
  get pending(): number {
    return this.#queue.size;
  }

  /** Queues `event` at absolute time `at` (not before {@link now}). */
  schedule(at: number, event: E): Scheduled<E> {
    return this.#queue.push(at, event);
  }

  /** Queues `event` `delay` ms after {@link now}; a negative delay throws. */
  scheduleIn(delay: number, event: E): Scheduled<E> {
    if (!(delay >= 0)) throw new RangeError(`delay must be >= 0, got ${delay}`);
    return this.#queue.push(this.now() + delay, event);
  }

  /** The next event without running it. */
  peek(): Scheduled<E> | undefined {
    return this.#queue.peek();
  }

  /** Pops the next event and advances the clock to its time. */
  next(): Scheduled<E> | undefined {
    return this.#queue.pop();
  }

  /**
   * Pops and handles every event whose time is at most `end`, including events the handler
   * schedules within the window. The clock stays at the last handled event's time. Returns the
   * number of events handled.
   */
  runUntil(end: number, handle: (time: number, event: E) => void): number {
    let handled = 0;
    for (let head = this.#queue.peek(); head !== undefined && head.time <= end; head = this.#queue.peek()) {
      const item = this.#queue.pop() as Scheduled<E>;
      handle(item.time, item.event);
      handled += 1;
    }
    return handled;
  }
}
