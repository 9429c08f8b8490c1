/**
 * Tavern's single-node storage: the catalog and the matchmaker world in one SQLite file in the data
 * dir. Several processes may open the same file; their matchmaker decisions are serialised.
 */
import { LOCAL_REGION, type RegionInfo } from '../../core/world.js';
import { SqliteCatalogStore } from './catalog.js';
import { SqliteDemandStore } from './demand-store.js';
import { startCheckpointer } from './checkpointer.js';
import { SqliteMatchStore } from './match-store.js';
import { SqliteStoppedLobbyStore } from './stopped-lobbies.js';
import { SqliteAnalyticsHistoryStore } from './analytics-history.js';
import { busyTimeout, openDatabase, type SqliteConnectionOptions } from './schema.js';

export { SqliteCatalogStore } from './catalog.js';
export { SqliteMatchStore } from './match-store.js';
export { SqliteDemandStore } from './demand-store.js';
export { SqliteStoppedLobbyStore } from './stopped-lobbies.js';
export { SqliteAnalyticsHistoryStore } from './analytics-history.js';
export { startCheckpointer, type CheckpointerOptions } from './checkpointer.js';
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
  /**
   * Where WAL checkpoints run: `background` (default) on a worker thread, so no commit on the event
   * loop waits for their fsyncs (`checkpointer.ts`); `inline`: SQLite's automatic checkpoint in the
   * commit that crosses 1,000 WAL pages.
   */
  readonly checkpoints?: 'background' | 'inline';
  /** Called if the background checkpointer fails (checkpoints are then inline again). */
  readonly onCheckpointError?: (error: Error) => void;
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
  /** Recorded demand (`src/io/demand.ts`). */
  readonly demand: SqliteDemandStore;
  /** Lobbies that stopped recently (`src/io/stopped-lobbies.ts`). */
  readonly stopped: SqliteStoppedLobbyStore;
  /** Analytics history (`src/io/analytics-history.ts`). */
  readonly history: SqliteAnalyticsHistoryStore;
  /** Commits what is queued, stops the checkpointer and closes the database. */
  readonly close: () => Promise<void>;
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
  const checkpointer = options.checkpoints === 'inline'
    ? undefined
    : startCheckpointer(db, {
        busyTimeoutMs: busyTimeout(options),
        synchronous: options.synchronous ?? 'normal',
        ...(options.onCheckpointError === undefined ? {} : { onError: options.onCheckpointError }),
      });
  let closing: Promise<void> | undefined;
  return {
    catalog: new SqliteCatalogStore(db),
    match,
    demand: new SqliteDemandStore(db),
    stopped: new SqliteStoppedLobbyStore(db),
    history: new SqliteAnalyticsHistoryStore(db),
    close: () => {
      closing ??= (async () => {
        match.flush();
        // The worker's connection closes first, so this one is the last and folds the WAL back in.
        await checkpointer?.stop();
        db.close();
      })();
      return closing;
    },
  };
};
