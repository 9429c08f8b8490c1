/**
 * The analytics history store in PostgreSQL (migration 10): one row per namespace, minute and
 * instance, the row JSON text beside the key columns. A write of several rows is one statement.
 */
import type pg from 'pg';
import type { AnalyticsMinute } from '../../core/history/minute.js';
import type { AnalyticsHistoryStore } from '../../io/analytics-history.js';

/**
 * @example
 * const history = new PgAnalyticsHistoryStore(pool);
 */
export class PgAnalyticsHistoryStore implements AnalyticsHistoryStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async putMinutes(rows: readonly AnalyticsMinute[]): Promise<void> {
    if (rows.length === 0) return;
    // One row per key in a statement (ON CONFLICT cannot touch a row twice): the last one given wins.
    const unique = [...new Map(rows.map((r) => [JSON.stringify([r.namespaceId, r.minute, r.instanceId]), r])).values()];
    await this.#pool.query(
      `INSERT INTO analytics_minutes (namespace_id, minute, instance_id, doc)
       SELECT * FROM UNNEST($1::text[], $2::bigint[], $3::text[], $4::text[])
       ON CONFLICT (namespace_id, minute, instance_id) DO UPDATE SET doc = EXCLUDED.doc`,
      [unique.map((r) => r.namespaceId), unique.map((r) => r.minute), unique.map((r) => r.instanceId), unique.map((r) => JSON.stringify(r))],
    );
  }

  async minutes(namespaceId: string, from: number, to: number): Promise<readonly AnalyticsMinute[]> {
    const { rows } = await this.#pool.query<{ doc: string }>(
      'SELECT doc FROM analytics_minutes WHERE namespace_id = $1 AND minute >= $2 AND minute < $3 ORDER BY minute, instance_id COLLATE "C"',
      [namespaceId, from, to],
    );
    return rows.map((r) => JSON.parse(r.doc) as AnalyticsMinute);
  }

  async pruneMinutes(before: number): Promise<number> {
    const { rowCount } = await this.#pool.query('DELETE FROM analytics_minutes WHERE minute < $1', [before]);
    return rowCount ?? 0;
  }
}
