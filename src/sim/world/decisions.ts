/**
 * The decisions a run's services committed, kept to measure the core alone (`npm run bench -- sim`):
 * each store transaction's decide function with the clock reading and the seeds and ids it drew, replayed in
 * a loop on the same chain of worlds, without the event queue, the services' effects and events,
 * the metrics or the trace.
 */
import { MemoryMatchStore } from '../../adapters/memory/match-store.js';
import type { Clock, Random, Transaction } from '../../io/index.js';
import type { Decision } from '../../core/tx.js';
import { addNamespace } from '../../core/namespace.js';
import { createWorld, DEFAULT_NAMESPACE_SETTINGS, type World } from '../../core/world.js';

interface DecisionRecord {
  readonly decide: (world: World) => Transaction<unknown>;
  readonly now: number;
  /** The seeds and ids drawn while deciding, in order. */
  readonly drawn: readonly (number | string)[];
}

/**
 * Give it to `runScenario` (`decisions`); once the run is over, {@link replay} runs the decisions
 * again on the core.
 *
 * @example
 * const log = new DecisionLog(30 * 60_000);
 * await runScenario(scenario, { decisions: log });
 * const committed = log.replay(); // === log.events
 */
export class DecisionLog {
  /** Virtual ms from which decisions are kept (the run's warm-up is left out). */
  readonly from: number;
  /** Emptied as they are replayed (see {@link replay}). */
  #records: (DecisionRecord | undefined)[] = [];
  #start: World | undefined;
  #events = 0;
  /** Draws of the transaction being decided (recording), or undefined between transactions. */
  #drawing: (number | string)[] | undefined;
  #replaying: DecisionRecord | undefined;
  #next = 0;
  /** The run's namespaces with nothing in them: a kept decide function runs once more on it, to let go of what it read. */
  #empty: World | undefined;
  #releasing = false;

  constructor(from = 0) {
    this.from = from;
  }

  /** Decisions kept. */
  get decisions(): number {
    return this.#records.length;
  }

  /** Events the kept decisions committed in the run. */
  get events(): number {
    return this.#events;
  }

  /** The services' clock: the recorded reading while replaying. */
  clock(inner: Clock): Clock {
    return { now: () => this.#replaying?.now ?? inner.now() };
  }

  /** The services' random source: draws made while deciding are noted, and served from the record while replaying. */
  random(inner: Random): Random {
    const draw = <T extends number | string>(fresh: () => T, none: T): T => {
      if (this.#replaying !== undefined) return this.#replaying.drawn[this.#next++] as T;
      if (this.#releasing) return none;
      const value = fresh();
      this.#drawing?.push(value);
      return value;
    };
    return { uuid: () => draw(() => inner.uuid(), ''), u32: () => draw(() => inner.u32(), 0) };
  }

  /** A memory store that keeps each transaction decided at virtual time `from` or later. */
  store(world: World, virtualNow: () => number, clock: Clock): MemoryMatchStore {
    const from = this.from;
    const begin = (w: World): void => {
      if (this.#start === undefined) {
        this.#start = w;
        this.#empty = [...w.namespaces.keys()].reduce((empty, id) => addNamespace(empty, id, DEFAULT_NAMESPACE_SETTINGS), createWorld([]));
      }
      this.#drawing = [];
    };
    const keep = (decide: (world: World) => Transaction<unknown>, t: Transaction<unknown>): void => {
      this.#records.push({ decide, now: clock.now(), drawn: this.#drawing ?? [] });
      this.#drawing = undefined;
      this.#events += t.decision?.events.length ?? 0;
      this.#release(decide);
    };
    return new (class extends MemoryMatchStore {
      override transact<T>(decide: (world: World) => Transaction<T>): Promise<{ readonly result: T; readonly decision?: Decision<unknown> }> {
        if (virtualNow() < from) return super.transact(decide);
        begin(this.world);
        return super.transact((w) => {
          const t = decide(w);
          keep(decide, t);
          return t;
        });
      }
    })(world);
  }

  /**
   * A decide function keeps the namespace it last read (the services compare it with the one
   * after): run it once more on empty namespaces (it refuses: no lobby, no version) so that it
   * lets go. Otherwise the log would keep every world of the run; and in a replay every new world
   * would be copied by each young-generation collection (an old closure points to it), which made
   * the replay spend ~45 % of its time collecting.
   */
  #release(decide: (world: World) => Transaction<unknown>): void {
    this.#releasing = true;
    try {
      decide(this.#empty as World);
    } catch {
      // Its answer does not matter, only what it lets go of.
    } finally {
      this.#releasing = false;
    }
  }

  /**
   * Decide every kept transaction again, in order, each on the world the one before it left.
   * Returns the events committed (equal to {@link events} when the replay made the same decisions)
   * and the wall time spent deciding, the releases (see {@link #release}) left out. Once only: each
   * record is let go once decided.
   */
  replay(): { readonly events: number; readonly decideMs: number } {
    let world = this.#start;
    if (world === undefined) return { events: 0, decideMs: 0 };
    let events = 0;
    let decideMs = 0;
    const records = this.#records;
    this.#records = [];
    this.#start = undefined;
    try {
      for (let i = 0; i < records.length; i++) {
        const record = records[i] as DecisionRecord;
        records[i] = undefined;
        this.#replaying = record;
        this.#next = 0;
        const started = performance.now();
        const t = record.decide(world);
        decideMs += performance.now() - started;
        this.#replaying = undefined;
        this.#release(record.decide);
        if (t.decision !== undefined) {
          world = t.decision.world;
          events += t.decision.events.length;
        }
      }
    } finally {
      this.#replaying = undefined;
    }
    return { events, decideMs };
  }
}
