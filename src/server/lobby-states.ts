/** Lobby states in process memory: the server's default (one instance; a restart forgets them). */
import type { LobbyStates } from '../io/index.js';

/**
 * @example
 * const states = new MemoryLobbyStates();
 * await states.set(lobbyId, { map: 'dust' });
 */
export class MemoryLobbyStates implements LobbyStates {
  readonly #states = new Map<string, unknown>();

  get(lobbyId: string): Promise<unknown> {
    return Promise.resolve(this.#states.get(lobbyId));
  }

  set(lobbyId: string, state: unknown): Promise<void> {
    if (state === undefined) this.#states.delete(lobbyId);
    else this.#states.set(lobbyId, state);
    return Promise.resolve();
  }
}
