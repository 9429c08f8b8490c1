import type { MatchStore, Transaction } from '../../io/index.js';
import type { Decision } from '../../core/tx.js';
import type { World } from '../../core/world.js';

/**
 * The world in process memory: the simulator's store and the tests'. Decisions are synchronous, so
 * a `transact` can never interleave with another one.
 *
 * @example
 * const store = new MemoryMatchStore(createWorld());
 */
export class MemoryMatchStore implements MatchStore {
  #world: World;

  constructor(world: World) {
    this.#world = world;
  }

  /** The current world, synchronously (the simulator reads it between events). */
  get world(): World {
    return this.#world;
  }

  snapshot(): Promise<World> {
    return Promise.resolve(this.#world);
  }

  transact<T>(decide: (world: World) => Transaction<T>): Promise<{ readonly result: T; readonly decision?: Decision<unknown> }> {
    const t = decide(this.#world);
    if (t.decision !== undefined) this.#world = t.decision.world;
    return Promise.resolve(t);
  }
}
