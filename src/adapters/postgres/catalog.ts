import type pg from 'pg';
import type {
  BuildRecord,
  CatalogStore,
  CdnSiteRecord,
  Conflict,
  Created,
  DomainRecord,
  GameRecord,
  LobbyHostRecord,
  LogLine,
  LogPage,
  LogStream,
  NamespacePatch,
  NamespaceRecord,
  TokenRecord,
  UploadRecord,
  VersionRecord,
} from '../../io/catalog.js';
import { conflict, created } from '../../io/catalog.js';
import { inTransaction } from './schema.js';


type StoredNamespace = Omit<NamespaceRecord, 'domains'>;

/** A namespace's document with its domains in the order they were added. */
const NAMESPACE_COLUMNS = `n.doc, COALESCE((
    SELECT json_agg(json_build_object('domain', d.domain, 'createdAt', d.created_at) ORDER BY d.seq)
    FROM namespace_domains d WHERE d.namespace_id = n.id), '[]'::json) AS domains`;

interface NamespaceRow {
  doc: StoredNamespace;
  domains: DomainRecord[];
}

const namespaceOf = (row: NamespaceRow | undefined): NamespaceRecord | undefined =>
  row === undefined ? undefined : { ...row.doc, domains: row.domains };

/** Thrown inside a transaction to roll it back and answer a conflict. */
class ConflictAbort extends Error {
  constructor(readonly conflict: Conflict) {
    super(`${conflict.conflict} ${conflict.value} is taken`);
  }
}

/** Runs `work` in a transaction; a {@link ConflictAbort} rolls it back and becomes the answer. */
const createIn = async <T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<Created<T>> => {
  try {
    return created(await inTransaction(pool, work));
  } catch (error) {
    if (error instanceof ConflictAbort) return { ok: false, error: error.conflict };
    throw error;
  }
};

/**
 * The catalog in PostgreSQL (see `schema.ts`). Uniqueness is the database's: inserts skip on any
 * UNIQUE constraint (`ON CONFLICT DO NOTHING`, which waits for a concurrent insert of the same key
 * to commit), and a skipped insert is then attributed to the constraint it hit, checked in the
 * order id, name id, domain. Read-modify-write updates lock their row (`FOR UPDATE`).
 *
 * @example
 * const catalog = new PgCatalogStore(pool);
 */
export class PgCatalogStore implements CatalogStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async #doc<T>(sql: string, params: readonly unknown[]): Promise<T | undefined> {
    const { rows } = await this.#pool.query<{ doc: T }>(sql, [...params]);
    return rows[0]?.doc;
  }

  async #docs<T>(sql: string, params: readonly unknown[]): Promise<T[]> {
    const { rows } = await this.#pool.query<{ doc: T }>(sql, [...params]);
    return rows.map((r) => r.doc);
  }

  /** Inserts a per-game document (versions, builds, CDN sites); an `id` conflict if the id is taken. */
  async #createGameDoc<T extends { readonly id: string; readonly gameId: string }>(table: string, record: T): Promise<Created<T>> {
    const { rowCount } = await this.#pool.query(
      `INSERT INTO ${table} (id, game_id, doc) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [record.id, record.gameId, JSON.stringify(record)],
    );
    return rowCount === 1 ? created(record) : conflict('id', record.id);
  }

  async #namespace(client: pg.Pool | pg.PoolClient, id: string): Promise<NamespaceRecord | undefined> {
    const { rows } = await client.query<NamespaceRow>(`SELECT ${NAMESPACE_COLUMNS} FROM namespaces n WHERE n.id = $1`, [id]);
    return namespaceOf(rows[0]);
  }

  async createGame(game: GameRecord): Promise<Created<GameRecord>> {
    const { rowCount } = await this.#pool.query('INSERT INTO games (id, name_id, doc) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      game.id,
      game.nameId,
      JSON.stringify(game),
    ]);
    if (rowCount === 1) return created(game);
    const { rowCount: taken } = await this.#pool.query('SELECT 1 FROM games WHERE id = $1', [game.id]);
    return taken === 1 ? conflict('id', game.id) : conflict('name-id', game.nameId);
  }

  getGame(id: string): Promise<GameRecord | undefined> {
    return this.#doc('SELECT doc FROM games WHERE id = $1', [id]);
  }

  listGames(): Promise<readonly GameRecord[]> {
    return this.#docs('SELECT doc FROM games ORDER BY seq', []);
  }

  createNamespace(ns: NamespaceRecord): Promise<Created<NamespaceRecord>> {
    const domains = ns.domains.map((d) => ({ ...d, domain: d.domain.toLowerCase() }));
    return createIn(this.#pool, async (client) => {
      const { domains: _, ...stored } = ns;
      const { rowCount } = await client.query(
        'INSERT INTO namespaces (id, game_id, name_id, doc) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
        [ns.id, ns.gameId, ns.nameId, JSON.stringify(stored)],
      );
      if (rowCount !== 1) {
        const { rowCount: taken } = await client.query('SELECT 1 FROM namespaces WHERE id = $1', [ns.id]);
        throw new ConflictAbort(taken === 1 ? { conflict: 'id', value: ns.id } : { conflict: 'name-id', value: ns.nameId });
      }
      for (const d of domains) {
        const inserted = await client.query(
          'INSERT INTO namespace_domains (domain, namespace_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
          [d.domain, ns.id, d.createdAt],
        );
        if (inserted.rowCount !== 1) throw new ConflictAbort({ conflict: 'domain', value: d.domain });
      }
      return { ...ns, domains };
    });
  }

  getNamespace(id: string): Promise<NamespaceRecord | undefined> {
    return this.#namespace(this.#pool, id);
  }

  async listNamespaces(gameId: string): Promise<readonly NamespaceRecord[]> {
    const { rows } = await this.#pool.query<NamespaceRow>(`SELECT ${NAMESPACE_COLUMNS} FROM namespaces n WHERE n.game_id = $1 ORDER BY n.seq`, [gameId]);
    return rows.map((r) => ({ ...r.doc, domains: r.domains }));
  }

  updateNamespace(id: string, patch: NamespacePatch): Promise<NamespaceRecord | undefined> {
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<{ doc: StoredNamespace }>('SELECT doc FROM namespaces WHERE id = $1 FOR UPDATE', [id]);
      const ns = rows[0]?.doc;
      if (ns === undefined) return undefined;
      await client.query('UPDATE namespaces SET doc = $2 WHERE id = $1', [id, JSON.stringify({ ...ns, ...patch })]);
      return this.#namespace(client, id);
    });
  }

  async addDomain(namespaceId: string, domain: DomainRecord): Promise<Created<NamespaceRecord> | undefined> {
    const name = domain.domain.toLowerCase();
    const result = await createIn(this.#pool, async (client) => {
      const { rowCount } = await client.query('SELECT 1 FROM namespaces WHERE id = $1', [namespaceId]);
      if (rowCount !== 1) return undefined;
      const inserted = await client.query(
        'INSERT INTO namespace_domains (domain, namespace_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [name, namespaceId, domain.createdAt],
      );
      if (inserted.rowCount !== 1) throw new ConflictAbort({ conflict: 'domain', value: name });
      return this.#namespace(client, namespaceId);
    });
    if (!result.ok) return result;
    return result.value === undefined ? undefined : created(result.value);
  }

  async removeDomain(namespaceId: string, domain: string): Promise<NamespaceRecord | undefined> {
    await this.#pool.query('DELETE FROM namespace_domains WHERE domain = $1 AND namespace_id = $2', [domain.toLowerCase(), namespaceId]);
    return this.#namespace(this.#pool, namespaceId);
  }

  async namespaceByDomain(domain: string): Promise<NamespaceRecord | undefined> {
    const { rows } = await this.#pool.query<NamespaceRow>(
      `SELECT ${NAMESPACE_COLUMNS} FROM namespaces n JOIN namespace_domains o ON o.namespace_id = n.id WHERE o.domain = $1`,
      [domain.toLowerCase()],
    );
    return namespaceOf(rows[0]);
  }

  createVersion(version: VersionRecord): Promise<Created<VersionRecord>> {
    return this.#createGameDoc('versions', version);
  }

  getVersion(id: string): Promise<VersionRecord | undefined> {
    return this.#doc('SELECT doc FROM versions WHERE id = $1', [id]);
  }

  listVersions(gameId: string): Promise<readonly VersionRecord[]> {
    return this.#docs('SELECT doc FROM versions WHERE game_id = $1 ORDER BY seq', [gameId]);
  }

  createBuild(build: BuildRecord): Promise<Created<BuildRecord>> {
    return this.#createGameDoc('builds', build);
  }

  getBuild(id: string): Promise<BuildRecord | undefined> {
    return this.#doc('SELECT doc FROM builds WHERE id = $1', [id]);
  }

  listBuilds(gameId: string): Promise<readonly BuildRecord[]> {
    return this.#docs('SELECT doc FROM builds WHERE game_id = $1 ORDER BY seq', [gameId]);
  }

  async recordBuildImage(id: string, image: string): Promise<BuildRecord | undefined> {
    // The row lock of the UPDATE orders two instances recording at once: the second finds `image` set.
    await this.#pool.query(
      "UPDATE builds SET doc = (doc::jsonb || jsonb_build_object('image', $2::text))::json WHERE id = $1 AND doc->>'image' IS NULL",
      [id, image],
    );
    return this.getBuild(id);
  }

  createCdnSite(site: CdnSiteRecord): Promise<Created<CdnSiteRecord>> {
    return this.#createGameDoc('cdn_sites', site);
  }

  getCdnSite(id: string): Promise<CdnSiteRecord | undefined> {
    return this.#doc('SELECT doc FROM cdn_sites WHERE id = $1', [id]);
  }

  listCdnSites(gameId: string): Promise<readonly CdnSiteRecord[]> {
    return this.#docs('SELECT doc FROM cdn_sites WHERE game_id = $1 ORDER BY seq', [gameId]);
  }

  async createUpload(upload: UploadRecord): Promise<Created<UploadRecord>> {
    const { rowCount } = await this.#pool.query('INSERT INTO uploads (id, doc) VALUES ($1, $2) ON CONFLICT DO NOTHING', [upload.id, JSON.stringify(upload)]);
    return rowCount === 1 ? created(upload) : conflict('id', upload.id);
  }

  getUpload(id: string): Promise<UploadRecord | undefined> {
    return this.#doc('SELECT doc FROM uploads WHERE id = $1', [id]);
  }

  completeUpload(id: string, at: number): Promise<UploadRecord | undefined> {
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<{ doc: UploadRecord }>('SELECT doc FROM uploads WHERE id = $1 FOR UPDATE', [id]);
      const upload = rows[0]?.doc;
      if (upload === undefined || upload.completedAt !== undefined || upload.abandonedAt !== undefined) return upload;
      const next: UploadRecord = { ...upload, completedAt: at };
      await client.query('UPDATE uploads SET doc = $2 WHERE id = $1', [id, JSON.stringify(next)]);
      return next;
    });
  }

  expiredUploads(before: number, limit: number): Promise<readonly UploadRecord[]> {
    return this.#docs(
      `SELECT doc FROM uploads WHERE doc->>'completedAt' IS NULL AND doc->>'abandonedAt' IS NULL AND (doc->>'expiresAt')::bigint < $1
       ORDER BY (doc->>'expiresAt')::bigint LIMIT $2`,
      [before, limit],
    );
  }

  abandonUpload(id: string, at: number): Promise<UploadRecord | undefined> {
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<{ doc: UploadRecord }>('SELECT doc FROM uploads WHERE id = $1 FOR UPDATE', [id]);
      const upload = rows[0]?.doc;
      if (upload === undefined || upload.completedAt !== undefined || upload.abandonedAt !== undefined) return upload;
      const next: UploadRecord = { ...upload, abandonedAt: at };
      await client.query('UPDATE uploads SET doc = $2 WHERE id = $1', [id, JSON.stringify(next)]);
      return next;
    });
  }

  async putToken(token: TokenRecord): Promise<Created<TokenRecord>> {
    const { rowCount } = await this.#pool.query('INSERT INTO tokens (jti, doc) VALUES ($1, $2) ON CONFLICT DO NOTHING', [token.jti, JSON.stringify(token)]);
    return rowCount === 1 ? created(token) : conflict('id', token.jti);
  }

  getToken(jti: string): Promise<TokenRecord | undefined> {
    return this.#doc('SELECT doc FROM tokens WHERE jti = $1', [jti]);
  }

  revokeToken(jti: string, at: number): Promise<TokenRecord | undefined> {
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<{ doc: TokenRecord }>('SELECT doc FROM tokens WHERE jti = $1 FOR UPDATE', [jti]);
      const token = rows[0]?.doc;
      if (token === undefined || token.revokedAt !== undefined) return token;
      const next: TokenRecord = { ...token, revokedAt: at };
      await client.query('UPDATE tokens SET doc = $2 WHERE jti = $1', [jti, JSON.stringify(next)]);
      return next;
    });
  }

  async listTokens(gameId: string, limit: number): Promise<readonly TokenRecord[]> {
    const { rows } = await this.#pool.query<{ doc: TokenRecord }>(
      `SELECT doc FROM tokens WHERE doc->>'gameId' = $1 ORDER BY (doc->>'createdAt')::bigint DESC, jti COLLATE "C" DESC LIMIT $2`,
      [gameId, Math.max(0, limit)],
    );
    return rows.map((r) => r.doc);
  }

  async getSetting(key: string): Promise<string | undefined> {
    const { rows } = await this.#pool.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]);
    return rows[0]?.value;
  }

  async putSettingIfAbsent(key: string, value: string): Promise<string> {
    // A concurrent insert of the same key makes this one wait for it to commit, then skip; the
    // read after it (a new statement, a new snapshot) sees the winner.
    const { rowCount } = await this.#pool.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, value]);
    if (rowCount === 1) return value;
    const stored = await this.getSetting(key);
    if (stored === undefined) throw new Error(`setting ${key} vanished`);
    return stored;
  }

  async claimLobbyHost(host: LobbyHostRecord): Promise<Created<LobbyHostRecord>> {
    const { rowCount } = await this.#pool.query(
      'INSERT INTO lobby_hosts (lobby_id, namespace_id, instance_id, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
      [host.lobbyId, host.namespaceId, host.instanceId, host.createdAt],
    );
    return rowCount === 1 ? created(host) : conflict('id', host.lobbyId);
  }

  async lobbyHosts(instanceId: string): Promise<readonly LobbyHostRecord[]> {
    const { rows } = await this.#pool.query<{ lobby_id: string; namespace_id: string; instance_id: string; created_at: string }>(
      'SELECT lobby_id, namespace_id, instance_id, created_at FROM lobby_hosts WHERE instance_id = $1 ORDER BY created_at, lobby_id',
      [instanceId],
    );
    return rows.map((r) => ({ lobbyId: r.lobby_id, namespaceId: r.namespace_id, instanceId: r.instance_id, createdAt: Number(r.created_at) }));
  }

  async releaseLobbyHost(lobbyId: string): Promise<void> {
    await this.#pool.query('DELETE FROM lobby_hosts WHERE lobby_id = $1', [lobbyId]);
  }

  appendLogs(lobbyId: string, stream: LogStream, lines: readonly LogLine[]): Promise<number> {
    // The stream's counter row is locked until commit, so appends to one stream commit in sequence order.
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<{ last: string }>(
        `INSERT INTO log_streams (lobby_id, stream, last_seq) VALUES ($1, $2, $3)
         ON CONFLICT (lobby_id, stream) DO UPDATE SET last_seq = log_streams.last_seq + EXCLUDED.last_seq
         RETURNING last_seq AS last`,
        [lobbyId, stream, lines.length],
      );
      const last = Number(rows[0]?.last ?? 0);
      if (lines.length > 0) {
        await client.query(
          `INSERT INTO log_lines (lobby_id, stream, seq, at, line)
           SELECT $1, $2, $3::bigint + n, at, line FROM unnest($4::bigint[], $5::bytea[]) WITH ORDINALITY AS l(at, line, n)`,
          [lobbyId, stream, last - lines.length, lines.map((l) => l.at), lines.map((l) => Buffer.from(l.line, 'utf8'))],
        );
      }
      return last;
    });
  }

  async lastLogs(lobbyId: string, stream: LogStream, limit: number): Promise<LogPage> {
    // One statement, one snapshot: the stream's counter and its newest lines agree (no row: no stream;
    // one row without a line: the limit was 0).
    const { rows } = await this.#pool.query<{ last: string; at: string | null; line: Buffer | null }>(
      `SELECT s.last_seq AS last, l.at, l.line FROM log_streams s
       LEFT JOIN LATERAL (SELECT seq, at, line FROM log_lines WHERE lobby_id = $1 AND stream = $2 ORDER BY seq DESC LIMIT $3) l ON true
       WHERE s.lobby_id = $1 AND s.stream = $2 ORDER BY l.seq`,
      [lobbyId, stream, Math.max(0, Math.floor(limit))],
    );
    const lines = rows.flatMap((r) => (r.at === null || r.line === null ? [] : [{ at: Number(r.at), line: r.line.toString('utf8') }]));
    return { lines, last: Number(rows[0]?.last ?? 0) };
  }

  async readLogs(lobbyId: string, stream: LogStream, after: number, limit: number): Promise<LogPage> {
    const { rows } = await this.#pool.query<{ seq: string; at: string; line: Buffer }>(
      'SELECT seq, at, line FROM log_lines WHERE lobby_id = $1 AND stream = $2 AND seq > $3 ORDER BY seq LIMIT $4',
      [lobbyId, stream, after, Math.max(0, Math.floor(limit))],
    );
    const last = rows[rows.length - 1];
    return { lines: rows.map((r) => ({ at: Number(r.at), line: r.line.toString('utf8') })), last: last === undefined ? after : Number(last.seq) };
  }
}
