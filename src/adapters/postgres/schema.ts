/**
 * The PostgreSQL schema as ordered migrations. Documents are `json` rather than `jsonb`: `json`
 * keeps the text as written, and the order of object keys carries meaning in stored version
 * configs (region priority, game mode and port order). Log lines are `bytea`, since container
 * output may hold NUL bytes, which `text` refuses.
 */
import type pg from 'pg';

/**
 * Migration `i + 1` is `MIGRATIONS[i]`, run with the schema on the search path. Never edit one that
 * has shipped; append a new one.
 *
 * @example
 * MIGRATIONS.length; // the schema version a fresh database reaches
 */
export const MIGRATIONS: readonly string[] = [
  // 1: the catalog. Constraint names map to the catalog's conflict kinds (see catalog.ts).
  `CREATE TABLE games (
     seq bigserial PRIMARY KEY, id text NOT NULL CONSTRAINT games_id_key UNIQUE,
     name_id text NOT NULL CONSTRAINT games_name_id_key UNIQUE, doc json NOT NULL);
   CREATE TABLE namespaces (
     seq bigserial PRIMARY KEY, id text NOT NULL CONSTRAINT namespaces_id_key UNIQUE, game_id text NOT NULL, name_id text NOT NULL,
     doc json NOT NULL, CONSTRAINT namespaces_name_id_key UNIQUE (game_id, name_id));
   CREATE TABLE namespace_domains (
     seq bigserial PRIMARY KEY, domain text NOT NULL CONSTRAINT namespace_domains_domain_key UNIQUE,
     namespace_id text NOT NULL, created_at bigint NOT NULL);
   CREATE INDEX namespace_domains_by_namespace ON namespace_domains (namespace_id, seq);
   CREATE TABLE versions (seq bigserial PRIMARY KEY, id text NOT NULL CONSTRAINT versions_id_key UNIQUE, game_id text NOT NULL, doc json NOT NULL);
   CREATE INDEX versions_by_game ON versions (game_id, seq);
   CREATE TABLE builds (seq bigserial PRIMARY KEY, id text NOT NULL CONSTRAINT builds_id_key UNIQUE, game_id text NOT NULL, doc json NOT NULL);
   CREATE INDEX builds_by_game ON builds (game_id, seq);
   CREATE TABLE cdn_sites (seq bigserial PRIMARY KEY, id text NOT NULL CONSTRAINT cdn_sites_id_key UNIQUE, game_id text NOT NULL, doc json NOT NULL);
   CREATE INDEX cdn_sites_by_game ON cdn_sites (game_id, seq);
   CREATE TABLE uploads (id text PRIMARY KEY, doc json NOT NULL);
   CREATE TABLE tokens (jti text PRIMARY KEY, doc json NOT NULL);
   CREATE TABLE settings (key text PRIMARY KEY, value text NOT NULL);
   CREATE TABLE log_streams (lobby_id text NOT NULL, stream text NOT NULL, last_seq bigint NOT NULL, PRIMARY KEY (lobby_id, stream));
   CREATE TABLE log_lines (
     lobby_id text NOT NULL, stream text NOT NULL, seq bigint NOT NULL, at bigint NOT NULL, line bytea NOT NULL,
     PRIMARY KEY (lobby_id, stream, seq));`,
  // 2: the matchmaker world: one row per namespace and per lobby, and the revision every decision bumps.
  `CREATE TABLE match_meta (id integer PRIMARY KEY CHECK (id = 1), revision bigint NOT NULL);
   INSERT INTO match_meta (id, revision) VALUES (1, 0);
   CREATE TABLE match_namespaces (id text PRIMARY KEY, doc json NOT NULL);
   CREATE TABLE match_lobbies (id text PRIMARY KEY, namespace_id text NOT NULL, doc json NOT NULL);
   CREATE INDEX match_lobbies_by_namespace ON match_lobbies (namespace_id);`,
  // 3: players get rows of their own (a seat writes one small row, not its lobby with every player).
  `CREATE TABLE match_players (lobby_id text NOT NULL, id text NOT NULL, doc json NOT NULL, PRIMARY KEY (lobby_id, id));
   INSERT INTO match_players (lobby_id, id, doc)
     SELECT l.id, p->>'id', p FROM match_lobbies l, json_array_elements(l.doc->'players') p;
   UPDATE match_lobbies SET doc = (doc::jsonb - 'players' - 'playerCount' - 'connectedCount')::json;`,
  // 4: a player's document drops its key, which its columns hold (as SQLite's migration 4).
  `UPDATE match_players SET doc = (doc::jsonb - 'id' - 'lobbyId')::json;`,
  // 5: lobby states (up to 1 MiB of JSON each) beside their lobbies, with their UTF-8 size (a
  // listing budgets them without reading them). \`text\`: the JSON as written, returned as is.
  `CREATE TABLE match_lobby_states (lobby_id text PRIMARY KEY, namespace_id text NOT NULL, state text NOT NULL, bytes integer NOT NULL);
   CREATE INDEX match_lobby_states_by_namespace ON match_lobby_states (namespace_id);`,
  // 6: which instance hosts each lobby's container (the runtime's reconciler).
  `CREATE TABLE lobby_hosts (lobby_id text PRIMARY KEY, namespace_id text NOT NULL, instance_id text NOT NULL, created_at bigint NOT NULL);
   CREATE INDEX lobby_hosts_by_instance ON lobby_hosts (instance_id, created_at);`,
  // 7: uploads still open (neither completed nor abandoned) by expiry, for the sweep of expired ones.
  `CREATE INDEX uploads_open_by_expiry ON uploads (((doc->>'expiresAt')::bigint))
     WHERE doc->>'completedAt' IS NULL AND doc->>'abandonedAt' IS NULL;`,
  // 8: recorded demand (requests, seats, lobbies) in chunks: one row per namespace per append, its
  // facts a JSON array spanning at most a minute (see demand-chunks.ts); read by time, pruned by time.
  `CREATE TABLE demand_chunks (
     seq bigserial PRIMARY KEY, namespace_id text NOT NULL, first_at bigint NOT NULL, last_at bigint NOT NULL,
     count integer NOT NULL, facts text NOT NULL);
   CREATE INDEX demand_chunks_by_namespace ON demand_chunks (namespace_id, first_at, seq);
   CREATE INDEX demand_chunks_by_end ON demand_chunks (last_at);`,
  // 9: lobbies that stopped recently (src/io/stopped-lobbies.ts): listed per namespace newest
  // first, bounded per namespace and kind (failed or not) and by age. The record is JSON text
  // (its log lines may hold a NUL, which \`json\` would refuse to process).
  `CREATE TABLE stopped_lobbies (
     lobby_id text PRIMARY KEY, namespace_id text NOT NULL, stopped_at bigint NOT NULL, failed boolean NOT NULL, doc text NOT NULL);
   CREATE INDEX stopped_lobbies_by_namespace ON stopped_lobbies (namespace_id, failed, stopped_at);
   CREATE INDEX stopped_lobbies_by_time ON stopped_lobbies (stopped_at);`,
  // 10: analytics history (src/io/analytics-history.ts): one row per namespace, minute and
  // instance; read by namespace and time, pruned by time.
  `CREATE TABLE analytics_minutes (
     namespace_id text NOT NULL, minute bigint NOT NULL, instance_id text NOT NULL, doc text NOT NULL,
     PRIMARY KEY (namespace_id, minute, instance_id));
   CREATE INDEX analytics_minutes_by_minute ON analytics_minutes (minute);`,
  // 11: a game's tokens, newest first (the dashboard's list).
  `CREATE INDEX tokens_by_game ON tokens ((doc->>'gameId'), ((doc->>'createdAt')::bigint));`,
];

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Throws unless `schema` is a plain lowercase identifier (it is put on the search path unquoted).
 *
 * @example
 * checkSchemaName('tavern'); // 'tavern'
 */
export const checkSchemaName = (schema: string): string => {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`schema name ${JSON.stringify(schema)} must match ${String(SCHEMA_NAME)}`);
  return schema;
};

/**
 * Creates `schema` if needed and applies the migrations it lacks, in one transaction under an
 * advisory lock per schema: processes starting at once wait for each other, and each migration runs
 * once. The pool's connections must have `schema` on their search path. Returns the version.
 *
 * @example
 * await migrate(pool, 'tavern'); // 2
 */
export const migrate = (pool: pg.Pool, schema: string, migrations: readonly string[] = MIGRATIONS): Promise<number> =>
  inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`tavern:migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${checkSchemaName(schema)}"`);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)');
    const { rows } = await client.query<{ version: number | null }>('SELECT MAX(version) AS version FROM schema_migrations');
    const current = rows[0]?.version ?? 0;
    if (current > migrations.length) throw new Error(`the database is at schema version ${current}, newer than this Tavern (${migrations.length})`);
    for (let v = current + 1; v <= migrations.length; v++) {
      await client.query(migrations[v - 1] ?? '');
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [v, Date.now()]);
    }
    return migrations.length;
  });

/**
 * Runs `work` in a transaction on one pooled connection: COMMIT when it resolves, ROLLBACK when it
 * throws (the error is rethrown). `begin` may ask for another isolation level.
 *
 * @example
 * await inTransaction(pool, async (c) => c.query('UPDATE ...'));
 */
export const inTransaction = async <T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> => {
  const client = await pool.connect();
  // A connection whose ROLLBACK failed is broken: it is destroyed rather than returned to the pool.
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((e: unknown) => {
      broken = e instanceof Error ? e : new Error(String(e));
    });
    throw error;
  } finally {
    client.release(broken);
  }
};
