/**
 * The demand store in PostgreSQL (migration 8): facts in chunks, one row per namespace per append
 * (`demand-chunks.ts`), so a flush costs one insert whatever its size.
 */
import type pg from 'pg';
import type { DemandCursor, DemandFact, DemandRequestColumns, DemandStore, StoredDemandFact } from '../../io/demand.js';
import { readPage, toChunks, trimChunk, type ChunkRow } from '../demand-chunks.js';
import { inTransaction } from './schema.js';

interface Row {
  readonly seq: string;
  readonly namespace_id: string;
  readonly first_at: string;
  readonly facts: string;
}

const chunkOf = (r: Row): ChunkRow => ({ seq: Number(r.seq), namespaceId: r.namespace_id, firstAt: Number(r.first_at), facts: r.facts });

/**
 * @example
 * const demand = new PgDemandStore(pool);
 */
export class PgDemandStore implements DemandStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async appendDemand(facts: readonly DemandFact[], requests?: readonly DemandRequestColumns[]): Promise<void> {
    const chunks = toChunks(facts, requests);
    if (chunks.length === 0) return;
    await this.#pool.query(
      // WITH ORDINALITY keeps the chunks' order in their sequence numbers.
      `INSERT INTO demand_chunks (namespace_id, first_at, last_at, count, facts)
       SELECT ns, f, l, c, d FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::integer[], $5::text[]) WITH ORDINALITY AS x(ns, f, l, c, d, n) ORDER BY n`,
      [chunks.map((c) => c.namespaceId), chunks.map((c) => c.firstAt), chunks.map((c) => c.lastAt), chunks.map((c) => c.count), chunks.map((c) => c.facts)],
    );
  }

  readDemand(namespaceId: string, window: { readonly from: number; readonly to: number }, after: DemandCursor | undefined, limit: number): Promise<readonly StoredDemandFact[]> {
    return readPage(window, after, limit, async (fromFirstAt, afterChunk, n) => {
      const { rows } = await this.#pool.query<Row>(
        `SELECT seq, namespace_id, first_at, facts FROM demand_chunks
         WHERE namespace_id = $1 AND first_at >= $2 AND first_at < $3 AND (first_at, seq) > ($4::bigint, $5::bigint)
         ORDER BY first_at, seq LIMIT $6`,
        [namespaceId, fromFirstAt, window.to, afterChunk?.firstAt ?? fromFirstAt, afterChunk?.seq ?? 0, n],
      );
      return rows.map(chunkOf);
    });
  }

  pruneDemand(before: number): Promise<number> {
    return inTransaction(this.#pool, async (client) => {
      const { rows: old } = await client.query<{ n: string }>('DELETE FROM demand_chunks WHERE last_at < $1 RETURNING count AS n', [before]);
      let pruned = old.reduce((sum, r) => sum + Number(r.n), 0);
      const { rows } = await client.query<Row>('SELECT seq, namespace_id, first_at, facts FROM demand_chunks WHERE last_at >= $1 AND first_at < $1 FOR UPDATE', [before]);
      for (const row of rows) {
        const { kept, dropped } = trimChunk(chunkOf(row), before);
        pruned += dropped;
        if (kept !== undefined) await client.query('UPDATE demand_chunks SET first_at = $1, last_at = $2, count = $3, facts = $4 WHERE seq = $5', [kept.firstAt, kept.lastAt, kept.count, kept.facts, row.seq]);
      }
      return pruned;
    });
  }
}
