/**
 * The analytics history store in SQLite (migration 10): one row per namespace, minute and
 * instance, the row a JSON document beside the key columns.
 */
import type Database from 'better-sqlite3';
import type { AnalyticsMinute } from '../../core/history/minute.js';
import type { AnalyticsHistoryStore } from '../../io/analytics-history.js';

const settle = <T>(work: () => T): Promise<T> => {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
};

/**
 * @example
 * const history = new SqliteAnalyticsHistoryStore(openDatabase('.tavern'));
 */
export class SqliteAnalyticsHistoryStore implements AnalyticsHistoryStore {
  readonly #db: Database.Database;
  readonly #upsert: Database.Statement;
  readonly #list: Database.Statement;
  readonly #prune: Database.Statement;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#upsert = db.prepare(`INSERT INTO analytics_minutes (namespace_id, minute, instance_id, doc) VALUES (?, ?, ?, ?)
      ON CONFLICT (namespace_id, minute, instance_id) DO UPDATE SET doc = excluded.doc`);
    this.#list = db.prepare('SELECT doc FROM analytics_minutes WHERE namespace_id = ? AND minute >= ? AND minute < ? ORDER BY minute, instance_id');
    this.#prune = db.prepare('DELETE FROM analytics_minutes WHERE minute < ?');
  }

  putMinutes(rows: readonly AnalyticsMinute[]): Promise<void> {
    return settle(() =>
      this.#db
        .transaction(() => {
          for (const r of rows) this.#upsert.run(r.namespaceId, r.minute, r.instanceId, JSON.stringify(r));
        })
        .immediate(),
    );
  }

  minutes(namespaceId: string, from: number, to: number): Promise<readonly AnalyticsMinute[]> {
    return settle(() => this.#list.all(namespaceId, from, to).map((row) => JSON.parse((row as { doc: string }).doc) as AnalyticsMinute));
  }

  pruneMinutes(before: number): Promise<number> {
    return settle(() => this.#prune.run(before).changes);
  }
}
