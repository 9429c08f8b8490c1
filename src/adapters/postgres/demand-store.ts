/** The demand store in PostgreSQL (migration 8): one row per fact, its document beside its key columns. */
import type pg from 'pg';
import type { DemandCursor, DemandFact, DemandStore, StoredDemandFact } from '../../io/demand.js';

/**
 * @example
 * const demand = new PgDemandStore(pool);
 */
export class PgDemandStore implements DemandStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async appendDemand(facts: readonly DemandFact[]): Promise<void> {
    if (facts.length === 0) return;
    await this.#pool.query(
      // WITH ORDINALITY keeps the batch's order in the sequence numbers.
      `INSERT INTO demand_facts (namespace_id, at, doc)
       SELECT ns, at, doc FROM unnest($1::text[], $2::bigint[], $3::json[]) WITH ORDINALITY AS f(ns, at, doc, n) ORDER BY n`,
      [facts.map((f) => f.namespaceId), facts.map((f) => f.at), facts.map((f) => JSON.stringify(f))],
    );
  }

  async readDemand(namespaceId: string, window: { readonly from: number; readonly to: number }, after: DemandCursor | undefined, limit: number): Promise<readonly StoredDemandFact[]> {
    const start = after ?? { at: window.from, seq: 0 };
    const { rows } = await this.#pool.query<{ seq: string; doc: DemandFact }>(
      `SELECT seq, doc FROM demand_facts WHERE namespace_id = $1 AND at >= $2 AND at < $3 AND (at, seq) > ($4::bigint, $5::bigint)
       ORDER BY at, seq LIMIT $6`,
      [namespaceId, window.from, window.to, start.at, start.seq, Math.max(0, Math.floor(limit))],
    );
    return rows.map((r) => ({ seq: Number(r.seq), fact: r.doc }));
  }

  async pruneDemand(before: number): Promise<number> {
    const { rowCount } = await this.#pool.query('DELETE FROM demand_facts WHERE at < $1', [before]);
    return rowCount ?? 0;
  }
}
