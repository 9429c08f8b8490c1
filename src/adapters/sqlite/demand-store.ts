/**
 * The demand store in SQLite (migration 8): facts in chunks, one row per namespace per append
 * (`demand-chunks.ts`), so a flush costs a few inserts whatever its size.
 */
import type Database from 'better-sqlite3';
import type { DemandCursor, DemandFact, DemandRequestColumns, DemandStore, StoredDemandFact } from '../../io/demand.js';
import { readPage, toChunks, trimChunk, type ChunkRow } from '../demand-chunks.js';

const settle = <T>(work: () => T): Promise<T> => {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
};

const COLUMNS = 'seq, namespace_id AS namespaceId, first_at AS firstAt, facts';

/**
 * @example
 * const demand = new SqliteDemandStore(openDatabase('.tavern'));
 */
export class SqliteDemandStore implements DemandStore {
  readonly #db: Database.Database;
  readonly #insert: Database.Statement;
  readonly #first: Database.Statement;
  readonly #next: Database.Statement;
  readonly #old: Database.Statement;
  readonly #straddling: Database.Statement;
  readonly #delete: Database.Statement;
  readonly #update: Database.Statement;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#insert = db.prepare('INSERT INTO demand_chunks (namespace_id, first_at, last_at, count, facts) VALUES (?, ?, ?, ?, ?)');
    const page = `SELECT ${COLUMNS} FROM demand_chunks WHERE namespace_id = ? AND first_at >= ? AND first_at < ?`;
    this.#first = db.prepare(`${page} ORDER BY first_at, seq LIMIT ?`);
    this.#next = db.prepare(`${page} AND (first_at, seq) > (?, ?) ORDER BY first_at, seq LIMIT ?`);
    this.#old = db.prepare('SELECT COALESCE(SUM(count), 0) AS n FROM demand_chunks WHERE last_at < ?');
    this.#straddling = db.prepare(`SELECT ${COLUMNS} FROM demand_chunks WHERE last_at >= ? AND first_at < ?`);
    this.#delete = db.prepare('DELETE FROM demand_chunks WHERE last_at < ?');
    this.#update = db.prepare('UPDATE demand_chunks SET first_at = ?, last_at = ?, count = ?, facts = ? WHERE seq = ?');
  }

  appendDemand(facts: readonly DemandFact[], requests?: readonly DemandRequestColumns[]): Promise<void> {
    return settle(() => {
      const chunks = toChunks(facts, requests);
      if (chunks.length === 0) return;
      this.#db
        .transaction(() => {
          for (const c of chunks) this.#insert.run(c.namespaceId, c.firstAt, c.lastAt, c.count, c.facts);
        })
        .immediate();
    });
  }

  readDemand(namespaceId: string, window: { readonly from: number; readonly to: number }, after: DemandCursor | undefined, limit: number): Promise<readonly StoredDemandFact[]> {
    return readPage(window, after, limit, (fromFirstAt, afterChunk, n) =>
      settle(() => (afterChunk === undefined
        ? this.#first.all(namespaceId, fromFirstAt, window.to, n)
        : this.#next.all(namespaceId, fromFirstAt, window.to, afterChunk.firstAt, afterChunk.seq, n)) as ChunkRow[]),
    );
  }

  pruneDemand(before: number): Promise<number> {
    return settle(() =>
      this.#db
        .transaction(() => {
          let pruned = (this.#old.get(before) as { n: number }).n;
          this.#delete.run(before);
          for (const row of this.#straddling.all(before, before) as ChunkRow[]) {
            const { kept, dropped } = trimChunk(row, before);
            pruned += dropped;
            if (kept !== undefined) this.#update.run(kept.firstAt, kept.lastAt, kept.count, kept.facts, row.seq);
          }
          return pruned;
        })
        .immediate(),
    );
  }
}
