/**
 * The stopped-lobby store in SQLite (migration 9): one row per lobby, its record a JSON document
 * beside the columns a listing and the bounds look up. Each write prunes in the same transaction.
 */
import type Database from 'better-sqlite3';
import type { StoppedKeep, StoppedLobbyRecord, StoppedLobbyStore, StoppedQuery } from '../../io/stopped-lobbies.js';

const settle = <T>(work: () => T): Promise<T> => {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
};

const parse = (row: unknown): StoppedLobbyRecord => JSON.parse((row as { doc: string }).doc) as StoppedLobbyRecord;

/**
 * @example
 * const stopped = new SqliteStoppedLobbyStore(openDatabase('.tavern'));
 */
export class SqliteStoppedLobbyStore implements StoppedLobbyStore {
  readonly #db: Database.Database;
  readonly #upsert: Database.Statement;
  readonly #pruneOld: Database.Statement;
  readonly #pruneKind: Database.Statement;
  readonly #list: Database.Statement;
  readonly #get: Database.Statement;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#upsert = db.prepare(`INSERT INTO stopped_lobbies (lobby_id, namespace_id, stopped_at, failed, doc) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (lobby_id) DO UPDATE SET namespace_id = excluded.namespace_id, stopped_at = excluded.stopped_at, failed = excluded.failed, doc = excluded.doc`);
    this.#pruneOld = db.prepare('DELETE FROM stopped_lobbies WHERE stopped_at < ?');
    this.#pruneKind = db.prepare(`DELETE FROM stopped_lobbies WHERE lobby_id IN (
      SELECT lobby_id FROM stopped_lobbies WHERE namespace_id = ? AND failed = ? ORDER BY stopped_at DESC, lobby_id DESC LIMIT -1 OFFSET ?)`);
    // failed >= 1: failures only; failed >= 0: all.
    this.#list = db.prepare('SELECT doc FROM stopped_lobbies WHERE namespace_id = ? AND stopped_at >= ? AND failed >= ? ORDER BY stopped_at DESC, lobby_id DESC LIMIT ?');
    this.#get = db.prepare('SELECT doc FROM stopped_lobbies WHERE lobby_id = ?');
  }

  putStoppedLobby(record: StoppedLobbyRecord, keep: StoppedKeep): Promise<void> {
    return settle(() =>
      this.#db
        .transaction(() => {
          this.#upsert.run(record.lobbyId, record.namespaceId, record.stoppedAt, record.failed ? 1 : 0, JSON.stringify(record));
          this.#pruneOld.run(keep.since);
          for (const failed of [1, 0]) this.#pruneKind.run(record.namespaceId, failed, Math.max(0, Math.floor(keep.perNamespace)));
        })
        .immediate(),
    );
  }

  stoppedLobbies(namespaceId: string, query: StoppedQuery): Promise<readonly StoppedLobbyRecord[]> {
    return settle(() => this.#list.all(namespaceId, query.since, query.failedOnly ? 1 : 0, Math.max(0, Math.floor(query.limit))).map(parse));
  }

  stoppedLobby(lobbyId: string): Promise<StoppedLobbyRecord | undefined> {
    return settle(() => {
      const row = this.#get.get(lobbyId);
      return row === undefined ? undefined : parse(row);
    });
  }
}
