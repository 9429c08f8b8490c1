import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { MemoryMatchStore } from '../../src/adapters/memory/match-store.js';
import { MIGRATIONS, migrate, PgMatchStore } from '../../src/adapters/postgres/index.js';
import { createWorld } from '../../src/core/world.js';
import { DATABASE_URL, dropSchema, freshSchema, postgresProblem, schemaUnderTest } from '../storage/postgres-harness.js';
import { analyticsHistoryContract } from './analytics-history.contract.js';
import { catalogContract } from './catalog.contract.js';
import { demandStoreContract } from './demand-store.contract.js';
import { canonicalRows, inconsistencies, legacyWorld } from './fakes.js';
import { matchStoreContract } from './match-store.contract.js';
import { stoppedLobbiesContract } from './stopped-lobbies.contract.js';

const problem = await postgresProblem();

if (problem !== undefined && process.env['CI'] !== undefined) {
  // In CI the database is part of the environment: its absence is a failure, never a skip.
  describe('PostgreSQL adapters', () => {
    it(`needs PostgreSQL at ${DATABASE_URL}`, () => {
      throw new Error(`PostgreSQL is unreachable at ${DATABASE_URL}: ${problem}`);
    });
  });
} else if (problem !== undefined) {
  console.warn(`PostgreSQL is unreachable at ${DATABASE_URL} (${problem}): the PostgreSQL adapter tests are SKIPPED`);
  describe.skip(`PostgreSQL adapters: SKIPPED, PostgreSQL is unreachable at ${DATABASE_URL} (${problem}); set DATABASE_URL, or CI to make this fail`, () => {
    it('contract', () => undefined);
  });
} else {
  catalogContract('postgres', async () => {
    const s = schemaUnderTest();
    return { catalog: (await s.open()).catalog, twin: (await s.open()).catalog, close: s.close };
  });

  demandStoreContract('postgres', async () => {
    const s = schemaUnderTest();
    return { demand: (await s.open()).demand, twin: (await s.open()).demand, close: s.close };
  });

  stoppedLobbiesContract('postgres', async () => {
    const s = schemaUnderTest();
    return { stopped: (await s.open()).stopped, twin: (await s.open()).stopped, close: s.close };
  });

  analyticsHistoryContract('postgres', async () => {
    const s = schemaUnderTest();
    return { history: (await s.open()).history, twin: (await s.open()).history, close: s.close };
  });

  matchStoreContract('postgres', async () => {
    const s = schemaUnderTest();
    return { match: (await s.open()).match, reopen: async () => (await s.open()).match, close: s.close };
  });

  describe('PostgreSQL schema', () => {
    it('processes migrating one fresh schema at once apply each migration once', async () => {
      const schema = freshSchema();
      const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: DATABASE_URL, options: `-c search_path=${schema}` }));
      try {
        expect(await Promise.all(pools.map((p) => migrate(p, schema)))).toEqual(pools.map(() => MIGRATIONS.length));
        const { rows } = await pools[0]!.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
        expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
        // A later migration is applied on top; an older Tavern refuses the newer schema.
        expect(await migrate(pools[1]!, schema, [...MIGRATIONS, 'CREATE TABLE extra (x int)'])).toBe(MIGRATIONS.length + 1);
        await expect(migrate(pools[2]!, schema)).rejects.toThrow(/newer than this Tavern/);
      } finally {
        await Promise.all(pools.map((p) => p.end()));
        await dropSchema(schema);
      }
    });

    it('migrations 3 and 4 move the players out of version 2 lobby documents: the same world, stored row by row, keys in columns', async () => {
      const { world, namespaces, lobbies } = await legacyWorld(new MemoryMatchStore(createWorld()));
      const schema = freshSchema();
      const pool = new pg.Pool({ connectionString: DATABASE_URL, options: `-c search_path=${schema}` });
      try {
        await migrate(pool, schema, MIGRATIONS.slice(0, 2));
        for (const n of namespaces) await pool.query('INSERT INTO match_namespaces (id, doc) VALUES ($1, $2)', [n.id, JSON.stringify(n.doc)]);
        for (const l of lobbies) await pool.query('INSERT INTO match_lobbies (id, namespace_id, doc) VALUES ($1, $2, $3)', [l.id, l.namespaceId, JSON.stringify(l.doc)]);
        await pool.query('UPDATE match_meta SET revision = 1');
        expect(await migrate(pool, schema)).toBe(MIGRATIONS.length);
        const migrated = await new PgMatchStore(pool, world.regions).snapshot();
        expect(inconsistencies(migrated)).toEqual([]);
        expect(canonicalRows(migrated)).toEqual(canonicalRows(world));
        const { rows } = await pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM match_players');
        expect(Number(rows[0]?.n)).toBe(7);
        const docs = await pool.query<{ doc: Record<string, unknown> }>('SELECT doc FROM match_lobbies');
        expect(docs.rows.filter((r) => 'players' in r.doc || 'playerCount' in r.doc || 'connectedCount' in r.doc)).toEqual([]);
        const seats = await pool.query<{ doc: Record<string, unknown> }>('SELECT doc FROM match_players');
        expect(seats.rows.filter((r) => 'id' in r.doc || 'lobbyId' in r.doc)).toEqual([]);
      } finally {
        await pool.end();
        await dropSchema(schema);
      }
    });
  });
}
