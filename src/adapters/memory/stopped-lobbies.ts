/** The stopped-lobby store in memory (tests, the simulator, in-process apps). */
import type { StoppedKeep, StoppedLobbyRecord, StoppedLobbyStore, StoppedQuery } from '../../io/stopped-lobbies.js';

/** Newest first: the latest stop, then the greater lobby id (as the SQL stores order them). */
const newestFirst = (a: StoppedLobbyRecord, b: StoppedLobbyRecord): number =>
  b.stoppedAt - a.stoppedAt || (a.lobbyId < b.lobbyId ? 1 : a.lobbyId > b.lobbyId ? -1 : 0);

/**
 * @example
 * const stopped = new MemoryStoppedLobbyStore();
 */
export class MemoryStoppedLobbyStore implements StoppedLobbyStore {
  readonly #records = new Map<string, StoppedLobbyRecord>();

  putStoppedLobby(record: StoppedLobbyRecord, keep: StoppedKeep): Promise<void> {
    this.#records.set(record.lobbyId, structuredClone(record));
    for (const [id, r] of this.#records) if (r.stoppedAt < keep.since) this.#records.delete(id);
    for (const failed of [true, false]) {
      const kind = [...this.#records.values()].filter((r) => r.namespaceId === record.namespaceId && r.failed === failed).sort(newestFirst);
      for (const r of kind.slice(keep.perNamespace)) this.#records.delete(r.lobbyId);
    }
    return Promise.resolve();
  }

  stoppedLobbies(namespaceId: string, query: StoppedQuery): Promise<readonly StoppedLobbyRecord[]> {
    const rows = [...this.#records.values()]
      .filter((r) => r.namespaceId === namespaceId && r.stoppedAt >= query.since && (!query.failedOnly || r.failed))
      .sort(newestFirst)
      .slice(0, Math.max(0, Math.floor(query.limit)));
    return Promise.resolve(rows.map((r) => structuredClone(r)));
  }

  stoppedLobby(lobbyId: string): Promise<StoppedLobbyRecord | undefined> {
    const r = this.#records.get(lobbyId);
    return Promise.resolve(r === undefined ? undefined : structuredClone(r));
  }
}
