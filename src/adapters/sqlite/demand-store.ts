/** The demand store in SQLite (migration 8): one row per fact, its document beside its key columns. */
import type Database from 'better-sqlite3';
import type { DemandCursor, DemandFact, DemandStore, StoredDemandFact } from '../../io/demand.js';

const settle = <T>(work: () => T): Promise<T> => {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
};

/**
 * @example
 * const demand = new SqliteDemandStore(openDatabase('.tavern'));
 */
export class SqliteDemandStore implements DemandStore {
  readonly #db: Database.Database;
  readonly #insert: Database.Statement;
  readonly #read: Database.Statement;
  readonly #prune: Database.Statement;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#insert = db.prepare('INSERT INTO demand_facts (namespace_id, at, doc) VALUES (?, ?, ?)');
    this.#read = db.prepare(
      'SELECT seq, doc FROM demand_facts WHERE namespace_id = ? AND at >= ? AND at < ? AND (at, seq) > (?, ?) ORDER BY at, seq LIMIT ?',
    );
    this.#prune = db.prepare('DELETE FROM demand_facts WHERE at < ?');
  }

  appendDemand(facts: readonly DemandFact[]): Promise<void> {
    return settle(() =>
      this.#db
        .transaction(() => {
          for (const f of facts) this.#insert.run(f.namespaceId, f.at, JSON.stringify(f));
        })
        .immediate(),
    );
  }

  readDemand(namespaceId: string, window: { readonly from: number; readonly to: number }, after: DemandCursor | undefined, limit: number): Promise<readonly StoredDemandFact[]> {
    const start = after ?? { at: window.from, seq: 0 };
    return settle(() => {
      const rows = this.#read.all(namespaceId, window.from, window.to, start.at, start.seq, Math.max(0, Math.floor(limit))) as { seq: number; doc: string }[];
      return rows.map((r) => ({ seq: r.seq, fact: JSON.parse(r.doc) as DemandFact }));
    });
  }

  pruneDemand(before: number): Promise<number> {
    return settle(() => this.#prune.run(before).changes);
  }
}
