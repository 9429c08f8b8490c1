/**
 * The SQLite schema as ordered migrations, and the connection setup: WAL journaling (readers never
 * block the writer), a busy timeout (a process waits for another's write lock instead of failing),
 * `synchronous=NORMAL` by default (a commit survives a crash of the process; `full` also survives power loss).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/**
 * Migration `i + 1` is `MIGRATIONS[i]`. Applied ones are recorded in `schema_migrations`; never edit
 * one that has shipped, append a new one.
 *
 * @example
 * MIGRATIONS.length; // the schema version a fresh database reaches
 */
export const MIGRATIONS: readonly string[] = [
  // 1: the catalog. Records are JSON documents; the columns beside them carry what is unique or looked up.
  `CREATE TABLE games (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, name_id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL);
   CREATE TABLE namespaces (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, game_id TEXT NOT NULL, name_id TEXT NOT NULL, doc TEXT NOT NULL,
     UNIQUE (game_id, name_id));
   CREATE TABLE namespace_domains (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, domain TEXT NOT NULL UNIQUE, namespace_id TEXT NOT NULL, created_at INTEGER NOT NULL);
   CREATE INDEX namespace_domains_by_namespace ON namespace_domains (namespace_id, seq);
   CREATE TABLE versions (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, game_id TEXT NOT NULL, doc TEXT NOT NULL);
   CREATE INDEX versions_by_game ON versions (game_id, seq);
   CREATE TABLE builds (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, game_id TEXT NOT NULL, doc TEXT NOT NULL);
   CREATE INDEX builds_by_game ON builds (game_id, seq);
   CREATE TABLE cdn_sites (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, game_id TEXT NOT NULL, doc TEXT NOT NULL);
   CREATE INDEX cdn_sites_by_game ON cdn_sites (game_id, seq);
   CREATE TABLE uploads (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
   CREATE TABLE tokens (jti TEXT PRIMARY KEY, doc TEXT NOT NULL);
   CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE log_streams (lobby_id TEXT NOT NULL, stream TEXT NOT NULL, last_seq INTEGER NOT NULL, PRIMARY KEY (lobby_id, stream));
   CREATE TABLE log_lines (
     lobby_id TEXT NOT NULL, stream TEXT NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL, line TEXT NOT NULL,
     PRIMARY KEY (lobby_id, stream, seq)) WITHOUT ROWID;`,
  // 2: the matchmaker world: one row per namespace and per lobby, and a revision bumped by every decision.
  `CREATE TABLE match_meta (id INTEGER PRIMARY KEY CHECK (id = 1), revision INTEGER NOT NULL);
   INSERT INTO match_meta (id, revision) VALUES (1, 0);
   CREATE TABLE match_namespaces (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
   CREATE TABLE match_lobbies (id TEXT PRIMARY KEY, namespace_id TEXT NOT NULL, doc TEXT NOT NULL);
   CREATE INDEX match_lobbies_by_namespace ON match_lobbies (namespace_id);`,
  // 3: players get rows of their own (a seat writes one small row, not its lobby with every player).
  `CREATE TABLE match_players (lobby_id TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (lobby_id, id)) WITHOUT ROWID;
   INSERT INTO match_players (lobby_id, id, doc)
     SELECT l.id, json_extract(p.value, '$.id'), p.value FROM match_lobbies l, json_each(l.doc, '$.players') p;
   UPDATE match_lobbies SET doc = json_remove(doc, '$.players', '$.playerCount', '$.connectedCount');`,
  // 4: a player's document drops its key, which its columns hold (a seat's row is a third shorter).
  `UPDATE match_players SET doc = json_remove(doc, '$.id', '$.lobbyId');`,
  // 5: lobby states (up to 1 MiB of JSON each) beside their lobbies, with their UTF-8 size (a
  // listing budgets them without reading them); a rowid table, as large rows suit one better.
  `CREATE TABLE match_lobby_states (lobby_id TEXT PRIMARY KEY, namespace_id TEXT NOT NULL, state TEXT NOT NULL, bytes INTEGER NOT NULL);
   CREATE INDEX match_lobby_states_by_namespace ON match_lobby_states (namespace_id);`,
  // 6: which instance hosts each lobby's container (the runtime's reconciler).
  `CREATE TABLE lobby_hosts (lobby_id TEXT PRIMARY KEY, namespace_id TEXT NOT NULL, instance_id TEXT NOT NULL, created_at INTEGER NOT NULL);
   CREATE INDEX lobby_hosts_by_instance ON lobby_hosts (instance_id, created_at);`,
  // 7: uploads still open (neither completed nor abandoned) by expiry, for the sweep of expired ones.
  `CREATE INDEX uploads_open_by_expiry ON uploads (json_extract(doc, '$.expiresAt'))
     WHERE json_extract(doc, '$.completedAt') IS NULL AND json_extract(doc, '$.abandonedAt') IS NULL;`,
  // 8: recorded demand (requests, seats, lobbies) in chunks: one row per namespace per append, its
  // facts a JSON array spanning at most a minute (see demand-chunks.ts); read by time, pruned by time.
  `CREATE TABLE demand_chunks (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, namespace_id TEXT NOT NULL, first_at INTEGER NOT NULL, last_at INTEGER NOT NULL,
     count INTEGER NOT NULL, facts TEXT NOT NULL);
   CREATE INDEX demand_chunks_by_namespace ON demand_chunks (namespace_id, first_at, seq);
   CREATE INDEX demand_chunks_by_end ON demand_chunks (last_at);`,
  // 9: lobbies that stopped recently (src/io/stopped-lobbies.ts): listed per namespace newest
  // first, bounded per namespace and kind (failed or not) and by age.
  `CREATE TABLE stopped_lobbies (
     lobby_id TEXT PRIMARY KEY, namespace_id TEXT NOT NULL, stopped_at INTEGER NOT NULL, failed INTEGER NOT NULL, doc TEXT NOT NULL);
   CREATE INDEX stopped_lobbies_by_namespace ON stopped_lobbies (namespace_id, failed, stopped_at, lobby_id);
   CREATE INDEX stopped_lobbies_by_time ON stopped_lobbies (stopped_at);`,
  // 10: analytics history (src/io/analytics-history.ts): one row per namespace, minute and
  // instance; read by namespace and time, pruned by time.
  `CREATE TABLE analytics_minutes (
     namespace_id TEXT NOT NULL, minute INTEGER NOT NULL, instance_id TEXT NOT NULL, doc TEXT NOT NULL,
     PRIMARY KEY (namespace_id, minute, instance_id));
   CREATE INDEX analytics_minutes_by_minute ON analytics_minutes (minute);`,
  // 11: a game's tokens, newest first (the dashboard's list).
  `CREATE INDEX tokens_by_game ON tokens (json_extract(doc, '$.gameId'), json_extract(doc, '$.createdAt'));`,
];

/**
 * Applies the migrations `db` lacks, each with its `schema_migrations` row, in one write transaction
 * (so two processes opening a fresh file at once apply each migration once). Returns the version.
 *
 * @example
 * migrate(db); // 2
 */
export const migrate = (db: Database.Database, migrations: readonly string[] = MIGRATIONS): number =>
  db
    .transaction(() => {
      db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
      const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as { version: number | null };
      const current = row.version ?? 0;
      if (current > migrations.length) throw new Error(`the database is at schema version ${current}, newer than this Tavern (${migrations.length})`);
      const record = db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)');
      for (let v = current + 1; v <= migrations.length; v++) {
        db.exec(migrations[v - 1] ?? '');
        record.run(v, Date.now());
      }
      return migrations.length;
    })
    .immediate();

/**
 * Connection settings.
 *
 * @example
 * const options: SqliteConnectionOptions = { file: 'tavern.db', busyTimeoutMs: 5_000 };
 */
export interface SqliteConnectionOptions {
  /** The database file name inside the data dir (default `tavern.db`). */
  readonly file?: string;
  /** How long a write waits for another connection's lock before failing (default 10 s). */
  readonly busyTimeoutMs?: number;
  /**
   * `normal` (default): in WAL mode a commit survives a crash of the process (a `kill -9` loses no
   * acknowledged write and never corrupts the file) but not of the machine; commits skip the fsync,
   * which otherwise blocks the event loop about 0.7 ms per decision on a typical disk. `full`: every
   * commit also survives a power loss.
   */
  readonly synchronous?: 'normal' | 'full';
}

/** The connection's busy timeout in ms (default 10 s). */
export const busyTimeout = (options: SqliteConnectionOptions): number => Math.max(0, Math.floor(options.busyTimeoutMs ?? 10_000));

/**
 * Opens (creating the directory and file if needed) and migrates the database of a data dir.
 *
 * @example
 * const db = openDatabase('.tavern');
 */
export const openDatabase = (dataDir: string, options: SqliteConnectionOptions = {}): Database.Database => {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, options.file ?? 'tavern.db'));
  try {
    db.pragma(`busy_timeout = ${busyTimeout(options)}`);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
};
