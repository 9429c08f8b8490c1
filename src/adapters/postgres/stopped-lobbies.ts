/**
 * The stopped-lobby store in PostgreSQL (migration 9): one row per lobby, its record JSON text
 * beside the columns a listing and the bounds look up. A write prunes in its own transaction,
 * under a lock per namespace, so writers racing in one namespace never keep more than the bound.
 */
import type pg from 'pg';
import type { StoppedKeep, StoppedLobbyRecord, StoppedLobbyStore, StoppedQuery } from '../../io/stopped-lobbies.js';
import { inTransaction } from './schema.js';

const parse = (row: { doc: string }): StoppedLobbyRecord => JSON.parse(row.doc) as StoppedLobbyRecord;

/** Newest first; ids compared byte by byte (as SQLite and the memory store do), whatever the database's collation. */
const NEWEST = 'stopped_at DESC, lobby_id COLLATE "C" DESC';

/**
 * @example
 * const stopped = new PgStoppedLobbyStore(pool);
 */
export class PgStoppedLobbyStore implements StoppedLobbyStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  putStoppedLobby(record: StoppedLobbyRecord, keep: StoppedKeep): Promise<void> {
    return inTransaction(this.#pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`tavern:stopped-lobbies:${record.namespaceId}`]);
      await client.query(
        `INSERT INTO stopped_lobbies (lobby_id, namespace_id, stopped_at, failed, doc) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (lobby_id) DO UPDATE SET namespace_id = EXCLUDED.namespace_id, stopped_at = EXCLUDED.stopped_at, failed = EXCLUDED.failed, doc = EXCLUDED.doc`,
        [record.lobbyId, record.namespaceId, record.stoppedAt, record.failed, JSON.stringify(record)],
      );
      await client.query('DELETE FROM stopped_lobbies WHERE stopped_at < $1', [keep.since]);
      for (const failed of [true, false]) {
        await client.query(
          `DELETE FROM stopped_lobbies WHERE lobby_id IN (
             SELECT lobby_id FROM stopped_lobbies WHERE namespace_id = $1 AND failed = $2 ORDER BY ${NEWEST} OFFSET $3)`,
          [record.namespaceId, failed, Math.max(0, Math.floor(keep.perNamespace))],
        );
      }
    });
  }

  async stoppedLobbies(namespaceId: string, query: StoppedQuery): Promise<readonly StoppedLobbyRecord[]> {
    const { rows } = await this.#pool.query<{ doc: string }>(
      `SELECT doc FROM stopped_lobbies WHERE namespace_id = $1 AND stopped_at >= $2 AND (failed OR NOT $3) ORDER BY ${NEWEST} LIMIT $4`,
      [namespaceId, query.since, query.failedOnly, Math.max(0, Math.floor(query.limit))],
    );
    return rows.map(parse);
  }

  async stoppedLobby(lobbyId: string): Promise<StoppedLobbyRecord | undefined> {
    const { rows } = await this.#pool.query<{ doc: string }>('SELECT doc FROM stopped_lobbies WHERE lobby_id = $1', [lobbyId]);
    const row = rows[0];
    return row === undefined ? undefined : parse(row);
  }
}
