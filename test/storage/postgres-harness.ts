/**
 * PostgreSQL for tests: the URL (`DATABASE_URL`, default the local trust-auth server), whether it
 * answers, and fresh schemas that are dropped afterwards.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { openPostgres, type PostgresStores } from '../../src/adapters/postgres/index.js';
import type { RegionInfo } from '../../src/core/world.js';

export const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Whether the server answers a query within a few seconds; the reason when it does not. */
export const postgresProblem = async (): Promise<string | undefined> => {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
};

/** A fresh schema name (lowercase, unique). */
export const freshSchema = (): string => `tavern_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;

export const dropSchema = async (schema: string): Promise<void> => {
  const client = new pg.Client(DATABASE_URL);
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
};

/** A fresh schema; `open` opens stores on it, `close` closes them all and drops it. */
export const schemaUnderTest = (regions?: readonly RegionInfo[]) => {
  const schema = freshSchema();
  const stores: PostgresStores[] = [];
  const open = async () => {
    const s = await openPostgres(DATABASE_URL, { schema, ...(regions === undefined ? {} : { regions }) });
    stores.push(s);
    return s;
  };
  const close = async () => {
    for (const s of stores.splice(0)) await s.close();
    await dropSchema(schema);
  };
  return { schema, open, close };
};
