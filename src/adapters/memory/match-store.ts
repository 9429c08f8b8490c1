import type { LobbyStatePage, LobbyStateWrite, MatchStore, Transaction } from '../../io/index.js';
import { utf8Length } from '../../core/config/validate-text.js';
import { fitStates, statelessLobbies } from '../../core/lobby/state.js';
import { diffWorld } from '../../core/persist.js';
import type { Decision } from '../../core/tx.js';
import type { World } from '../../core/world.js';
import { statePage } from '../state-page.js';

/**
 * The world in process memory: the simulator's store and the tests'. Decisions are synchronous, so
 * a `transact` can never interleave with another one. Lobby states sit beside the world, dropped
 * by the decision that stops their lobby (looked for only while some lobby has a state).
 *
 * @example
 * const store = new MemoryMatchStore(createWorld());
 */
export class MemoryMatchStore implements MatchStore {
  #world: World;
  /** JSON texts and their UTF-8 sizes, by lobby. */
  readonly #states = new Map<string, { readonly json: string; readonly bytes: number }>();

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
    if (t.lobbyState !== undefined) this.#write(t.lobbyState);
    if (t.decision !== undefined) {
      const before = this.#world;
      this.#world = t.decision.world;
      if (this.#states.size > 0) for (const change of diffWorld(before, this.#world).namespaces) for (const id of statelessLobbies(change)) this.#states.delete(id);
    }
    return Promise.resolve(t);
  }

  #write({ lobbyId, json }: LobbyStateWrite): void {
    if (json === undefined) this.#states.delete(lobbyId);
    else this.#states.set(lobbyId, { json, bytes: utf8Length(json) });
  }

  lobbyState(lobbyId: string): Promise<string | undefined> {
    return Promise.resolve(this.#states.get(lobbyId)?.json);
  }

  lobbyStates(lobbyIds: readonly string[], maxBytes: number): Promise<LobbyStatePage> {
    const { included, omitted } = fitStates(lobbyIds, (id) => this.#states.get(id)?.bytes, maxBytes);
    return Promise.resolve(statePage(included, omitted, new Map(included.map((id) => [id, this.#states.get(id)?.json ?? '']))));
  }
}
