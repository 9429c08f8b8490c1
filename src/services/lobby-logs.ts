/**
 * Lobby log lines: written to the catalog, and announced in process so a long-polling
 * `getLobbyLogs` wakes as soon as a line arrives (other instances' lines are found by polling).
 */
import type { AppendLog } from '../core/effects.js';
import type { LogLine, LogStore, LogStream } from '../io/catalog.js';
import type { LobbyLogs } from '../io/index.js';

type Listener = () => void;

/**
 * @example
 * const book = new LogBook(catalog);
 * const off = book.subscribe(lobbyId, 'std_out', () => wake());
 * await book.write(lobbyId, 'std_out', [{ at: now, line: 'hello' }]);
 */
export class LogBook implements LobbyLogs {
  readonly #catalog: LogStore;
  readonly #listeners = new Map<string, Set<Listener>>();

  constructor(catalog: LogStore) {
    this.#catalog = catalog;
  }

  /** {@link LobbyLogs}: a line Tavern writes itself (the matchmaker's effects), on the lobby's `tavern` stream. */
  async append(line: AppendLog): Promise<void> {
    await this.write(line.lobbyId, 'tavern', [{ at: line.at, line: line.line }]);
  }

  /**
   * Appends lines to a lobby stream and wakes its watchers; returns the last sequence number.
   *
   * @effects catalog (appendLogs)
   */
  async write(lobbyId: string, stream: LogStream, lines: readonly LogLine[]): Promise<number> {
    const last = await this.#catalog.appendLogs(lobbyId, stream, lines);
    const listeners = this.#listeners.get(`${lobbyId} ${stream}`);
    if (listeners !== undefined) for (const l of [...listeners]) l();
    return last;
  }

  /** Calls `listener` after each write to the stream; returns the unsubscribe function. */
  subscribe(lobbyId: string, stream: LogStream, listener: Listener): () => void {
    const key = `${lobbyId} ${stream}`;
    const set = this.#listeners.get(key) ?? new Set<Listener>();
    set.add(listener);
    this.#listeners.set(key, set);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(key);
    };
  }
}
