/**
 * Tavern's shared storage: the catalog and the matchmaker world in one PostgreSQL schema, which any
 * number of Tavern processes may share (their matchmaker decisions are serialised by the database).
 */
import pg from 'pg';
import { LOCAL_REGION, type RegionInfo } from '../../core/world.js';
import { PgCatalogStore } from './catalog.js';
import { PgDemandStore } from './demand-store.js';
import { PgMatchStore } from './match-store.js';
import { PgStoppedLobbyStore } from './stopped-lobbies.js';
import { PgAnalyticsHistoryStore } from './analytics-history.js';
import { checkSchemaName, migrate } from './schema.js';

export { PgCatalogStore } from './catalog.js';
export { PgMatchStore } from './match-store.js';
export { PgDemandStore } from './demand-store.js';
export { PgStoppedLobbyStore } from './stopped-lobbies.js';
export { PgAnalyticsHistoryStore } from './analytics-history.js';
export { MIGRATIONS, checkSchemaName, inTransaction, migrate } from './schema.js';

/**
 * {@link openPostgres}'s options.
 *
 * @example
 * const options: PostgresOptions = { schema: 'tavern', regions: [LOCAL_REGION] };
 */
export interface PostgresOptions {
  /** The schema holding Tavern's tables, created if needed (default `public`); a lowercase identifier. */
  readonly schema?: string;
  /** The regions the matchmaker world runs (default `[LOCAL_REGION]`). */
  readonly regions?: readonly RegionInfo[];
  /** Pool size (default 10). */
  readonly maxConnections?: number;
}

/**
 * The stores of one connection pool, and how to close it.
 *
 * @example
 * const { catalog, match, close }: PostgresStores = await openPostgres(url);
 */
export interface PostgresStores {
  readonly catalog: PgCatalogStore;
  readonly match: PgMatchStore;
  /** Recorded demand (`src/io/demand.ts`). */
  readonly demand: PgDemandStore;
  /** Lobbies that stopped recently (`src/io/stopped-lobbies.ts`). */
  readonly stopped: PgStoppedLobbyStore;
  /** Analytics history (`src/io/analytics-history.ts`). */
  readonly history: PgAnalyticsHistoryStore;
  readonly close: () => Promise<void>;
}

/**
 * Connects to `url`, creates and migrates the schema if needed, and returns the stores.
 *
 * @example
 * const { catalog, match, close } = await openPostgres('postgres://tavern@db/tavern', { schema: 'tavern' });
 */
export const openPostgres = async (url: string, options: PostgresOptions = {}): Promise<PostgresStores> => {
  const schema = checkSchemaName(options.schema ?? 'public');
  const pool = new pg.Pool({ connectionString: url, max: options.maxConnections ?? 10, options: `-c search_path=${schema}` });
  // An idle connection that breaks (a server restart) is dropped by the pool; the next query reconnects.
  pool.on('error', () => undefined);
  try {
    await migrate(pool, schema);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return {
    catalog: new PgCatalogStore(pool),
    match: new PgMatchStore(pool, options.regions ?? [LOCAL_REGION]),
    demand: new PgDemandStore(pool),
    stopped: new PgStoppedLobbyStore(pool),
    history: new PgAnalyticsHistoryStore(pool),
    close: () => pool.end(),
  };
};
