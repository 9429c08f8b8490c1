/**
 * Tavern's single-node storage: the catalog and the matchmaker world in one SQLite file in the data
 * dir. Several processes may open the same file; their matchmaker decisions are serialised.
 */
import { LOCAL_REGION, type RegionInfo } from '../../core/world.js';
import { SqliteCatalogStore } from './catalog.js';
import { SqliteMatchStore } from './match-store.js';
import { openDatabase, type SqliteConnectionOptions } from './schema.js';

export { SqliteCatalogStore } from './catalog.js';
export { SqliteMatchStore } from './match-store.js';
export { MIGRATIONS, migrate, openDatabase, type SqliteConnectionOptions } from './schema.js';

/**
 * {@link openSqlite}'s options: the connection's, and the regions the matchmaker world runs.
 *
 * @example
 * const options: SqliteOptions = { regions: [LOCAL_REGION], busyTimeoutMs: 5_000 };
 */
export interface SqliteOptions extends SqliteConnectionOptions {
  /** Default `[LOCAL_REGION]`. */
  readonly regions?: readonly RegionInfo[];
}

/**
 * The stores of one open database, and how to close it.
 *
 * @example
 * const { catalog, match, close }: SqliteStores = openSqlite('.tavern');
 */
export interface SqliteStores {
  readonly catalog: SqliteCatalogStore;
  readonly match: SqliteMatchStore;
  readonly close: () => void;
}

/**
 * Opens (creating and migrating it if needed) the database `tavern.db` in `dataDir`.
 *
 * @example
 * const { catalog, match, close } = openSqlite('.tavern', { regions: [LOCAL_REGION] });
 */
export const openSqlite = (dataDir: string, options: SqliteOptions = {}): SqliteStores => {
  const db = openDatabase(dataDir, options);
  const match = new SqliteMatchStore(db, options.regions ?? [LOCAL_REGION]);
  return {
    catalog: new SqliteCatalogStore(db),
    match,
    close: () => {
      match.flush();
      db.close();
    },
  };
};
