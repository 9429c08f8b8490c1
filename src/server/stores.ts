/**
 * The server's stores: PostgreSQL when `DATABASE_URL` is set, else SQLite under `TAVERN_DATA_DIR`.
 * Loaded on demand, so a SQLite server never loads `pg` and vice versa.
 */
import type { AnalyticsHistoryStore } from '../io/analytics-history.js';
import type { CatalogStore } from '../io/catalog.js';
import type { DemandStore } from '../io/demand.js';
import type { MatchStore } from '../io/index.js';
import type { Logger } from '../io/log.js';
import type { StoppedLobbyStore } from '../io/stopped-lobbies.js';
import type { ServerEnv } from './env.js';

export interface Stores {
  readonly catalog: CatalogStore;
  readonly match: MatchStore;
  readonly demand: DemandStore;
  readonly stopped: StoppedLobbyStore;
  readonly history: AnalyticsHistoryStore;
  close(): void | Promise<void>;
}

/**
 * @example
 * const stores = await openStores(parseEnv(process.env), logger);
 */
export async function openStores(env: ServerEnv, logger: Pick<Logger, 'warn'>): Promise<Stores> {
  if (env.databaseUrl !== undefined) {
    const { openPostgres } = await import('../adapters/postgres/index.js');
    return openPostgres(env.databaseUrl, { regions: env.regions, ...(env.postgresSchema === undefined ? {} : { schema: env.postgresSchema }) });
  }
  const { openSqlite } = await import('../adapters/sqlite/index.js');
  return openSqlite(env.dataDir, {
    regions: env.regions,
    synchronous: env.sqliteSync,
    onCheckpointError: (error) => logger.warn({ err: error }, 'the WAL checkpointer failed: checkpoints run in commits again'),
  });
}
