import type Database from 'better-sqlite3';
import type {
  BuildRecord,
  CatalogStore,
  CdnSiteRecord,
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


/** Runs synchronous database work as a promise: a thrown error becomes a rejection. */
const settle = <T>(work: () => T): Promise<T> => {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
};

const parse = <T>(row: unknown): T | undefined => (row === undefined ? undefined : (JSON.parse((row as { doc: string }).doc) as T));
const parseAll = <T>(rows: unknown[]): T[] => rows.map((r) => JSON.parse((r as { doc: string }).doc) as T);

type StoredNamespace = Omit<NamespaceRecord, 'domains'>;

const SQL = {
  gameById: 'SELECT doc FROM games WHERE id = ?',
  gameByNameId: 'SELECT 1 FROM games WHERE name_id = ?',
  insertGame: 'INSERT INTO games (id, name_id, doc) VALUES (?, ?, ?)',
  listGames: 'SELECT doc FROM games ORDER BY seq',
  nsById: 'SELECT doc FROM namespaces WHERE id = ?',
  nsByNameId: 'SELECT 1 FROM namespaces WHERE game_id = ? AND name_id = ?',
  insertNs: 'INSERT INTO namespaces (id, game_id, name_id, doc) VALUES (?, ?, ?, ?)',
  updateNs: 'UPDATE namespaces SET doc = ? WHERE id = ?',
  listNs: 'SELECT doc FROM namespaces WHERE game_id = ? ORDER BY seq',
  domainsOf: 'SELECT domain, created_at AS createdAt FROM namespace_domains WHERE namespace_id = ? ORDER BY seq',
  domainOwner: 'SELECT namespace_id AS id FROM namespace_domains WHERE domain = ?',
  insertDomain: 'INSERT INTO namespace_domains (domain, namespace_id, created_at) VALUES (?, ?, ?)',
  deleteDomain: 'DELETE FROM namespace_domains WHERE domain = ? AND namespace_id = ?',
  recordBuildImage: "UPDATE builds SET doc = json_set(doc, '$.image', ?) WHERE id = ? AND json_extract(doc, '$.image') IS NULL",
  uploadById: 'SELECT doc FROM uploads WHERE id = ?',
  insertUpload: 'INSERT INTO uploads (id, doc) VALUES (?, ?)',
  updateUpload: 'UPDATE uploads SET doc = ? WHERE id = ?',
  expiredUploads: `SELECT doc FROM uploads WHERE json_extract(doc, '$.completedAt') IS NULL AND json_extract(doc, '$.abandonedAt') IS NULL
    AND json_extract(doc, '$.expiresAt') < ? ORDER BY json_extract(doc, '$.expiresAt') LIMIT ?`,
  tokenById: 'SELECT doc FROM tokens WHERE jti = ?',
  insertToken: 'INSERT INTO tokens (jti, doc) VALUES (?, ?)',
  updateToken: 'UPDATE tokens SET doc = ? WHERE jti = ?',
  tokensOfGame: `SELECT doc FROM tokens WHERE json_extract(doc, '$.gameId') = ?
    ORDER BY json_extract(doc, '$.createdAt') DESC, jti DESC LIMIT ?`,
  getSetting: 'SELECT value FROM settings WHERE key = ?',
  insertSetting: 'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING',
  insertHost: 'INSERT INTO lobby_hosts (lobby_id, namespace_id, instance_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (lobby_id) DO NOTHING',
  hostsOf:
    'SELECT lobby_id AS lobbyId, namespace_id AS namespaceId, instance_id AS instanceId, created_at AS createdAt FROM lobby_hosts WHERE instance_id = ? ORDER BY created_at, lobby_id',
  deleteHost: 'DELETE FROM lobby_hosts WHERE lobby_id = ?',
  streamLast: 'SELECT last_seq AS last FROM log_streams WHERE lobby_id = ? AND stream = ?',
  upsertStream:
    'INSERT INTO log_streams (lobby_id, stream, last_seq) VALUES (?, ?, ?) ON CONFLICT (lobby_id, stream) DO UPDATE SET last_seq = excluded.last_seq',
  insertLine: 'INSERT INTO log_lines (lobby_id, stream, seq, at, line) VALUES (?, ?, ?, ?, ?)',
  readLines: 'SELECT seq, at, line FROM log_lines WHERE lobby_id = ? AND stream = ? AND seq > ? ORDER BY seq LIMIT ?',
  lastLines: 'SELECT seq, at, line FROM log_lines WHERE lobby_id = ? AND stream = ? ORDER BY seq DESC LIMIT ?',
} as const;

type Statements = { readonly [K in keyof typeof SQL]: Database.Statement };

/** The per-game document tables (versions, builds, CDN sites): create, get, list in creation order. */
class GameDocs<T extends { readonly id: string; readonly gameId: string }> {
  readonly #insert: Database.Statement;
  readonly #exists: Database.Statement;
  readonly #get: Database.Statement;
  readonly #list: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    table: 'versions' | 'builds' | 'cdn_sites',
  ) {
    this.#insert = db.prepare(`INSERT INTO ${table} (id, game_id, doc) VALUES (?, ?, ?)`);
    this.#exists = db.prepare(`SELECT 1 FROM ${table} WHERE id = ?`);
    this.#get = db.prepare(`SELECT doc FROM ${table} WHERE id = ?`);
    this.#list = db.prepare(`SELECT doc FROM ${table} WHERE game_id = ? ORDER BY seq`);
  }

  create(record: T): Created<T> {
    return this.db
      .transaction((): Created<T> => {
        if (this.#exists.get(record.id) !== undefined) return conflict('id', record.id);
        this.#insert.run(record.id, record.gameId, JSON.stringify(record));
        return created(record);
      })
      .immediate();
  }

  get(id: string): T | undefined {
    return parse<T>(this.#get.get(id));
  }

  list(gameId: string): T[] {
    return parseAll<T>(this.#list.all(gameId));
  }
}

/** Entries kept per read cache before it starts over. */
const CACHE_MAX = 10_000;

/**
 * The catalog in a SQLite database (see `schema.ts`). Every method is one synchronous transaction;
 * writes take the write lock up front (`BEGIN IMMEDIATE`), so a uniqueness check and the insert it
 * guards can never interleave with another process's, and the UNIQUE constraints back them up.
 *
 * The two reads of every matchmaker request, a namespace by id and a token by `jti` (revocation),
 * are served from memory while the file is unchanged: `PRAGMA data_version` moves whenever another
 * connection (another process) commits, and then both caches start over (looked at once per turn
 * of the event loop); this connection's own writes to namespaces and tokens update them as they go.
 *
 * @example
 * const catalog = new SqliteCatalogStore(openDatabase('.tavern'));
 */
export class SqliteCatalogStore implements CatalogStore {
  readonly #db: Database.Database;
  readonly #versions: GameDocs<VersionRecord>;
  readonly #builds: GameDocs<BuildRecord>;
  readonly #cdnSites: GameDocs<CdnSiteRecord>;
  readonly #q: Statements;
  /** The namespace and its domains, read in one transaction (made once: every matchmaker call reads it). */
  readonly #readNamespace: Database.Transaction<(id: string) => NamespaceRecord | undefined>;
  readonly #dataVersion: Database.Statement;
  #seenVersion: unknown;
  #looked = false;
  readonly #namespaces = new Map<string, NamespaceRecord | undefined>();
  readonly #tokens = new Map<string, TokenRecord | undefined>();

  constructor(db: Database.Database) {
    this.#db = db;
    this.#versions = new GameDocs(db, 'versions');
    this.#builds = new GameDocs(db, 'builds');
    this.#cdnSites = new GameDocs(db, 'cdn_sites');
    this.#q = Object.fromEntries(Object.entries(SQL).map(([k, v]) => [k, db.prepare(v)])) as Statements;
    this.#readNamespace = db.transaction((id: string) => this.#namespace(id));
    this.#dataVersion = db.prepare('PRAGMA data_version').pluck();
  }

  /**
   * Empties the read caches if another connection committed since the last look, which is taken
   * once per turn of the event loop: a write committed elsewhere is seen by every request this
   * process reads from its sockets afterwards.
   */
  #revalidate(): void {
    if (this.#looked) return;
    this.#looked = true;
    setImmediate(() => (this.#looked = false));
    const version = this.#dataVersion.get();
    if (version === this.#seenVersion) return;
    this.#seenVersion = version;
    this.#namespaces.clear();
    this.#tokens.clear();
  }

  #cached<V>(cache: Map<string, V>, key: string, load: () => V): V {
    this.#revalidate();
    if (cache.has(key)) return cache.get(key) as V;
    const value = load();
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(key, value);
    return value;
  }

  /** A namespace write: its cached record (and, for domain moves, any other) is stale. */
  #namespaceWrite<T>(work: () => T): Promise<T> {
    return this.#write(() => {
      this.#namespaces.clear();
      return work();
    });
  }

  #write<T>(work: () => T): Promise<T> {
    return settle(() => this.#db.transaction(work).immediate());
  }

  #namespace(id: string): NamespaceRecord | undefined {
    const ns = parse<StoredNamespace>(this.#q.nsById.get(id));
    if (ns === undefined) return undefined;
    return { ...ns, domains: this.#q.domainsOf.all(id) as DomainRecord[] };
  }

  createGame(game: GameRecord): Promise<Created<GameRecord>> {
    return this.#write(() => {
      if (this.#q.gameById.get(game.id) !== undefined) return conflict('id', game.id);
      if (this.#q.gameByNameId.get(game.nameId) !== undefined) return conflict('name-id', game.nameId);
      this.#q.insertGame.run(game.id, game.nameId, JSON.stringify(game));
      return created(game);
    });
  }

  getGame(id: string): Promise<GameRecord | undefined> {
    return settle(() => parse<GameRecord>(this.#q.gameById.get(id)));
  }

  listGames(): Promise<readonly GameRecord[]> {
    return settle(() => parseAll<GameRecord>(this.#q.listGames.all()));
  }

  createNamespace(ns: NamespaceRecord): Promise<Created<NamespaceRecord>> {
    return this.#namespaceWrite((): Created<NamespaceRecord> => {
      if (this.#q.nsById.get(ns.id) !== undefined) return conflict('id', ns.id);
      if (this.#q.nsByNameId.get(ns.gameId, ns.nameId) !== undefined) return conflict('name-id', ns.nameId);
      const domains = ns.domains.map((d) => ({ ...d, domain: d.domain.toLowerCase() }));
      const seen = new Set<string>();
      for (const { domain } of domains) {
        if (seen.has(domain) || this.#q.domainOwner.get(domain) !== undefined) return conflict('domain', domain);
        seen.add(domain);
      }
      const { domains: _, ...stored } = ns;
      this.#q.insertNs.run(ns.id, ns.gameId, ns.nameId, JSON.stringify(stored));
      for (const d of domains) this.#q.insertDomain.run(d.domain, ns.id, d.createdAt);
      return created({ ...ns, domains });
    });
  }

  getNamespace(id: string): Promise<NamespaceRecord | undefined> {
    return settle(() => this.#cached(this.#namespaces, id, () => this.#readNamespace.deferred(id)));
  }

  listNamespaces(gameId: string): Promise<readonly NamespaceRecord[]> {
    return settle(() =>
      this.#db
        .transaction(() =>
          parseAll<StoredNamespace>(this.#q.listNs.all(gameId)).map((ns) => ({ ...ns, domains: this.#q.domainsOf.all(ns.id) as DomainRecord[] })),
        )
        .deferred(),
    );
  }

  updateNamespace(id: string, patch: NamespacePatch): Promise<NamespaceRecord | undefined> {
    return this.#namespaceWrite(() => {
      const ns = parse<StoredNamespace>(this.#q.nsById.get(id));
      if (ns === undefined) return undefined;
      this.#q.updateNs.run(JSON.stringify({ ...ns, ...patch }), id);
      return this.#namespace(id);
    });
  }

  addDomain(namespaceId: string, domain: DomainRecord): Promise<Created<NamespaceRecord> | undefined> {
    return this.#namespaceWrite((): Created<NamespaceRecord> | undefined => {
      if (this.#q.nsById.get(namespaceId) === undefined) return undefined;
      const name = domain.domain.toLowerCase();
      if (this.#q.domainOwner.get(name) !== undefined) return conflict('domain', name);
      this.#q.insertDomain.run(name, namespaceId, domain.createdAt);
      const ns = this.#namespace(namespaceId);
      return ns === undefined ? undefined : created(ns);
    });
  }

  removeDomain(namespaceId: string, domain: string): Promise<NamespaceRecord | undefined> {
    return this.#namespaceWrite(() => {
      this.#q.deleteDomain.run(domain.toLowerCase(), namespaceId);
      return this.#namespace(namespaceId);
    });
  }

  namespaceByDomain(domain: string): Promise<NamespaceRecord | undefined> {
    return settle(() =>
      this.#db
        .transaction(() => {
          const owner = this.#q.domainOwner.get(domain.toLowerCase()) as { id: string } | undefined;
          return owner === undefined ? undefined : this.#namespace(owner.id);
        })
        .deferred(),
    );
  }

  createVersion(version: VersionRecord): Promise<Created<VersionRecord>> {
    return settle(() => this.#versions.create(version));
  }

  getVersion(id: string): Promise<VersionRecord | undefined> {
    return settle(() => this.#versions.get(id));
  }

  listVersions(gameId: string): Promise<readonly VersionRecord[]> {
    return settle(() => this.#versions.list(gameId));
  }

  createBuild(build: BuildRecord): Promise<Created<BuildRecord>> {
    return settle(() => this.#builds.create(build));
  }

  getBuild(id: string): Promise<BuildRecord | undefined> {
    return settle(() => this.#builds.get(id));
  }

  listBuilds(gameId: string): Promise<readonly BuildRecord[]> {
    return settle(() => this.#builds.list(gameId));
  }

  recordBuildImage(id: string, image: string): Promise<BuildRecord | undefined> {
    return settle(() => {
      this.#q.recordBuildImage.run(image, id);
      return this.#builds.get(id);
    });
  }

  createCdnSite(site: CdnSiteRecord): Promise<Created<CdnSiteRecord>> {
    return settle(() => this.#cdnSites.create(site));
  }

  getCdnSite(id: string): Promise<CdnSiteRecord | undefined> {
    return settle(() => this.#cdnSites.get(id));
  }

  listCdnSites(gameId: string): Promise<readonly CdnSiteRecord[]> {
    return settle(() => this.#cdnSites.list(gameId));
  }

  createUpload(upload: UploadRecord): Promise<Created<UploadRecord>> {
    return this.#write(() => {
      if (this.#q.uploadById.get(upload.id) !== undefined) return conflict('id', upload.id);
      this.#q.insertUpload.run(upload.id, JSON.stringify(upload));
      return created(upload);
    });
  }

  getUpload(id: string): Promise<UploadRecord | undefined> {
    return settle(() => parse<UploadRecord>(this.#q.uploadById.get(id)));
  }

  completeUpload(id: string, at: number): Promise<UploadRecord | undefined> {
    return this.#write(() => {
      const upload = parse<UploadRecord>(this.#q.uploadById.get(id));
      if (upload === undefined || upload.completedAt !== undefined || upload.abandonedAt !== undefined) return upload;
      const next: UploadRecord = { ...upload, completedAt: at };
      this.#q.updateUpload.run(JSON.stringify(next), id);
      return next;
    });
  }

  expiredUploads(before: number, limit: number): Promise<readonly UploadRecord[]> {
    return settle(() => this.#q.expiredUploads.all(before, limit).flatMap((row) => parse<UploadRecord>(row) ?? []));
  }

  abandonUpload(id: string, at: number): Promise<UploadRecord | undefined> {
    return this.#write(() => {
      const upload = parse<UploadRecord>(this.#q.uploadById.get(id));
      if (upload === undefined || upload.completedAt !== undefined || upload.abandonedAt !== undefined) return upload;
      const next: UploadRecord = { ...upload, abandonedAt: at };
      this.#q.updateUpload.run(JSON.stringify(next), id);
      return next;
    });
  }

  putToken(token: TokenRecord): Promise<Created<TokenRecord>> {
    return this.#write(() => {
      if (this.#q.tokenById.get(token.jti) !== undefined) return conflict('id', token.jti);
      this.#q.insertToken.run(token.jti, JSON.stringify(token));
      this.#tokens.delete(token.jti);
      return created(token);
    });
  }

  getToken(jti: string): Promise<TokenRecord | undefined> {
    return settle(() => this.#cached(this.#tokens, jti, () => parse<TokenRecord>(this.#q.tokenById.get(jti))));
  }

  revokeToken(jti: string, at: number): Promise<TokenRecord | undefined> {
    return this.#write(() => {
      const token = parse<TokenRecord>(this.#q.tokenById.get(jti));
      if (token === undefined || token.revokedAt !== undefined) return token;
      const next: TokenRecord = { ...token, revokedAt: at };
      this.#q.updateToken.run(JSON.stringify(next), jti);
      this.#tokens.delete(jti);
      return next;
    });
  }

  listTokens(gameId: string, limit: number): Promise<readonly TokenRecord[]> {
    return settle(() => parseAll<TokenRecord>(this.#q.tokensOfGame.all(gameId, Math.max(0, limit))));
  }

  getSetting(key: string): Promise<string | undefined> {
    return settle(() => (this.#q.getSetting.get(key) as { value: string } | undefined)?.value);
  }

  putSettingIfAbsent(key: string, value: string): Promise<string> {
    return this.#write(() => {
      this.#q.insertSetting.run(key, value);
      return (this.#q.getSetting.get(key) as { value: string }).value;
    });
  }

  claimLobbyHost(host: LobbyHostRecord): Promise<Created<LobbyHostRecord>> {
    return this.#write(() =>
      this.#q.insertHost.run(host.lobbyId, host.namespaceId, host.instanceId, host.createdAt).changes === 1 ? created(host) : conflict('id', host.lobbyId),
    );
  }

  lobbyHosts(instanceId: string): Promise<readonly LobbyHostRecord[]> {
    return settle(() => this.#q.hostsOf.all(instanceId) as LobbyHostRecord[]);
  }

  releaseLobbyHost(lobbyId: string): Promise<void> {
    return this.#write(() => {
      this.#q.deleteHost.run(lobbyId);
    });
  }

  appendLogs(lobbyId: string, stream: LogStream, lines: readonly LogLine[]): Promise<number> {
    return this.#write(() => {
      let seq = (this.#q.streamLast.get(lobbyId, stream) as { last: number } | undefined)?.last ?? 0;
      for (const l of lines) this.#q.insertLine.run(lobbyId, stream, ++seq, l.at, l.line);
      this.#q.upsertStream.run(lobbyId, stream, seq);
      return seq;
    });
  }

  lastLogs(lobbyId: string, stream: LogStream, limit: number): Promise<LogPage> {
    return settle(() =>
      this.#db
        .transaction(() => {
          const last = (this.#q.streamLast.get(lobbyId, stream) as { last: number } | undefined)?.last ?? 0;
          const rows = this.#q.lastLines.all(lobbyId, stream, Math.max(0, Math.floor(limit))) as { at: number; line: string }[];
          return { lines: rows.reverse().map((r) => ({ at: r.at, line: r.line })), last };
        })
        .deferred(),
    );
  }

  readLogs(lobbyId: string, stream: LogStream, after: number, limit: number): Promise<LogPage> {
    return settle(() => {
      const rows = this.#q.readLines.all(lobbyId, stream, after, Math.max(0, Math.floor(limit))) as { seq: number; at: number; line: string }[];
      const last = rows[rows.length - 1];
      return { lines: rows.map((r) => ({ at: r.at, line: r.line })), last: last === undefined ? after : last.seq };
    });
  }
}
