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

const byGame = <T extends { readonly gameId: string }>(records: Map<string, T>, gameId: string): readonly T[] =>
  [...records.values()].filter((r) => r.gameId === gameId);

/**
 * The catalog in process memory (tests, the simulator, `tavern dev` without a data dir). Maps keep
 * insertion order, which is creation order; every uniqueness rule of {@link CatalogStore} holds.
 *
 * @example
 * const catalog = new MemoryCatalogStore();
 * await catalog.createGame({ id, nameId: 'my-game', displayName: 'My game', developerGroupId, createdAt: now });
 */
export class MemoryCatalogStore implements CatalogStore {
  readonly #games = new Map<string, GameRecord>();
  readonly #namespaces = new Map<string, NamespaceRecord>();
  /** Lowercase domain → namespace id. */
  readonly #domains = new Map<string, string>();
  readonly #versions = new Map<string, VersionRecord>();
  readonly #builds = new Map<string, BuildRecord>();
  readonly #cdnSites = new Map<string, CdnSiteRecord>();
  readonly #uploads = new Map<string, UploadRecord>();
  readonly #tokens = new Map<string, TokenRecord>();
  readonly #settings = new Map<string, string>();
  readonly #hosts = new Map<string, LobbyHostRecord>();
  /** `lobbyId stream` → lines; a line's sequence number is its index + 1. */
  readonly #logs = new Map<string, LogLine[]>();

  createGame(game: GameRecord): Promise<Created<GameRecord>> {
    if (this.#games.has(game.id)) return Promise.resolve(conflict('id', game.id));
    for (const g of this.#games.values()) if (g.nameId === game.nameId) return Promise.resolve(conflict('name-id', game.nameId));
    this.#games.set(game.id, game);
    return Promise.resolve(created(game));
  }

  getGame(id: string): Promise<GameRecord | undefined> {
    return Promise.resolve(this.#games.get(id));
  }

  listGames(): Promise<readonly GameRecord[]> {
    return Promise.resolve([...this.#games.values()]);
  }

  createNamespace(ns: NamespaceRecord): Promise<Created<NamespaceRecord>> {
    if (this.#namespaces.has(ns.id)) return Promise.resolve(conflict('id', ns.id));
    for (const n of this.#namespaces.values()) {
      if (n.gameId === ns.gameId && n.nameId === ns.nameId) return Promise.resolve(conflict('name-id', ns.nameId));
    }
    const domains = ns.domains.map((d) => ({ ...d, domain: d.domain.toLowerCase() }));
    const seen = new Set<string>();
    for (const { domain } of domains) {
      if (this.#domains.has(domain) || seen.has(domain)) return Promise.resolve(conflict('domain', domain));
      seen.add(domain);
    }
    const record = { ...ns, domains };
    this.#namespaces.set(ns.id, record);
    for (const domain of seen) this.#domains.set(domain, ns.id);
    return Promise.resolve(created(record));
  }

  getNamespace(id: string): Promise<NamespaceRecord | undefined> {
    return Promise.resolve(this.#namespaces.get(id));
  }

  listNamespaces(gameId: string): Promise<readonly NamespaceRecord[]> {
    return Promise.resolve(byGame(this.#namespaces, gameId));
  }

  updateNamespace(id: string, patch: NamespacePatch): Promise<NamespaceRecord | undefined> {
    const ns = this.#namespaces.get(id);
    if (ns === undefined) return Promise.resolve(undefined);
    const next: NamespaceRecord = { ...ns, ...patch };
    this.#namespaces.set(id, next);
    return Promise.resolve(next);
  }

  addDomain(namespaceId: string, domain: DomainRecord): Promise<Created<NamespaceRecord> | undefined> {
    const ns = this.#namespaces.get(namespaceId);
    if (ns === undefined) return Promise.resolve(undefined);
    const name = domain.domain.toLowerCase();
    if (this.#domains.has(name)) return Promise.resolve(conflict('domain', name));
    const next: NamespaceRecord = { ...ns, domains: [...ns.domains, { ...domain, domain: name }] };
    this.#namespaces.set(namespaceId, next);
    this.#domains.set(name, namespaceId);
    return Promise.resolve(created(next));
  }

  removeDomain(namespaceId: string, domain: string): Promise<NamespaceRecord | undefined> {
    const ns = this.#namespaces.get(namespaceId);
    if (ns === undefined) return Promise.resolve(undefined);
    const name = domain.toLowerCase();
    if (this.#domains.get(name) !== namespaceId) return Promise.resolve(ns);
    const next: NamespaceRecord = { ...ns, domains: ns.domains.filter((d) => d.domain !== name) };
    this.#namespaces.set(namespaceId, next);
    this.#domains.delete(name);
    return Promise.resolve(next);
  }

  namespaceByDomain(domain: string): Promise<NamespaceRecord | undefined> {
    const id = this.#domains.get(domain.toLowerCase());
    return Promise.resolve(id === undefined ? undefined : this.#namespaces.get(id));
  }

  createVersion(version: VersionRecord): Promise<Created<VersionRecord>> {
    return Promise.resolve(insert(this.#versions, version.id, version));
  }

  getVersion(id: string): Promise<VersionRecord | undefined> {
    return Promise.resolve(this.#versions.get(id));
  }

  listVersions(gameId: string): Promise<readonly VersionRecord[]> {
    return Promise.resolve(byGame(this.#versions, gameId));
  }

  createBuild(build: BuildRecord): Promise<Created<BuildRecord>> {
    return Promise.resolve(insert(this.#builds, build.id, build));
  }

  getBuild(id: string): Promise<BuildRecord | undefined> {
    return Promise.resolve(this.#builds.get(id));
  }

  listBuilds(gameId: string): Promise<readonly BuildRecord[]> {
    return Promise.resolve(byGame(this.#builds, gameId));
  }

  recordBuildImage(id: string, image: string): Promise<BuildRecord | undefined> {
    const build = this.#builds.get(id);
    if (build === undefined || build.image !== undefined) return Promise.resolve(build);
    const recorded = { ...build, image };
    this.#builds.set(id, recorded);
    return Promise.resolve(recorded);
  }

  createCdnSite(site: CdnSiteRecord): Promise<Created<CdnSiteRecord>> {
    return Promise.resolve(insert(this.#cdnSites, site.id, site));
  }

  getCdnSite(id: string): Promise<CdnSiteRecord | undefined> {
    return Promise.resolve(this.#cdnSites.get(id));
  }

  listCdnSites(gameId: string): Promise<readonly CdnSiteRecord[]> {
    return Promise.resolve(byGame(this.#cdnSites, gameId));
  }

  createUpload(upload: UploadRecord): Promise<Created<UploadRecord>> {
    return Promise.resolve(insert(this.#uploads, upload.id, upload));
  }

  getUpload(id: string): Promise<UploadRecord | undefined> {
    return Promise.resolve(this.#uploads.get(id));
  }

  completeUpload(id: string, at: number): Promise<UploadRecord | undefined> {
    const upload = this.#uploads.get(id);
    if (upload === undefined || upload.completedAt !== undefined || upload.abandonedAt !== undefined) return Promise.resolve(upload);
    const next: UploadRecord = { ...upload, completedAt: at };
    this.#uploads.set(id, next);
    return Promise.resolve(next);
  }

  expiredUploads(before: number, limit: number): Promise<readonly UploadRecord[]> {
    const open = [...this.#uploads.values()].filter((u) => u.completedAt === undefined && u.abandonedAt === undefined && u.expiresAt < before);
    return Promise.resolve(open.sort((a, b) => a.expiresAt - b.expiresAt).slice(0, limit));
  }

  abandonUpload(id: string, at: number): Promise<UploadRecord | undefined> {
    const upload = this.#uploads.get(id);
    if (upload === undefined || upload.completedAt !== undefined || upload.abandonedAt !== undefined) return Promise.resolve(upload);
    const next: UploadRecord = { ...upload, abandonedAt: at };
    this.#uploads.set(id, next);
    return Promise.resolve(next);
  }

  putToken(token: TokenRecord): Promise<Created<TokenRecord>> {
    return Promise.resolve(insert(this.#tokens, token.jti, token));
  }

  getToken(jti: string): Promise<TokenRecord | undefined> {
    return Promise.resolve(this.#tokens.get(jti));
  }

  revokeToken(jti: string, at: number): Promise<TokenRecord | undefined> {
    const token = this.#tokens.get(jti);
    if (token === undefined || token.revokedAt !== undefined) return Promise.resolve(token);
    const next: TokenRecord = { ...token, revokedAt: at };
    this.#tokens.set(jti, next);
    return Promise.resolve(next);
  }

  listTokens(gameId: string, limit: number): Promise<readonly TokenRecord[]> {
    const mine = [...this.#tokens.values()].filter((t) => t.gameId === gameId);
    mine.sort((a, b) => b.createdAt - a.createdAt || (a.jti < b.jti ? 1 : a.jti > b.jti ? -1 : 0));
    return Promise.resolve(mine.slice(0, Math.max(0, limit)));
  }

  getSetting(key: string): Promise<string | undefined> {
    return Promise.resolve(this.#settings.get(key));
  }

  putSettingIfAbsent(key: string, value: string): Promise<string> {
    const stored = this.#settings.get(key);
    if (stored !== undefined) return Promise.resolve(stored);
    this.#settings.set(key, value);
    return Promise.resolve(value);
  }

  claimLobbyHost(host: LobbyHostRecord): Promise<Created<LobbyHostRecord>> {
    return Promise.resolve(insert(this.#hosts, host.lobbyId, host));
  }

  lobbyHosts(instanceId: string): Promise<readonly LobbyHostRecord[]> {
    const mine = [...this.#hosts.values()].filter((h) => h.instanceId === instanceId);
    return Promise.resolve(mine.sort((a, b) => a.createdAt - b.createdAt || (a.lobbyId < b.lobbyId ? -1 : a.lobbyId > b.lobbyId ? 1 : 0)));
  }

  releaseLobbyHost(lobbyId: string): Promise<void> {
    this.#hosts.delete(lobbyId);
    return Promise.resolve();
  }

  appendLogs(lobbyId: string, stream: LogStream, lines: readonly LogLine[]): Promise<number> {
    const key = `${lobbyId} ${stream}`;
    const log = this.#logs.get(key) ?? [];
    log.push(...lines.map((l) => ({ at: l.at, line: l.line })));
    this.#logs.set(key, log);
    return Promise.resolve(log.length);
  }

  lastLogs(lobbyId: string, stream: LogStream, limit: number): Promise<LogPage> {
    const log = this.#logs.get(`${lobbyId} ${stream}`) ?? [];
    const n = Math.max(0, Math.floor(limit));
    return Promise.resolve({ lines: n === 0 ? [] : log.slice(-n), last: log.length });
  }

  readLogs(lobbyId: string, stream: LogStream, after: number, limit: number): Promise<LogPage> {
    const from = Math.max(0, after);
    const lines = (this.#logs.get(`${lobbyId} ${stream}`) ?? []).slice(from, from + Math.max(0, limit));
    return Promise.resolve({ lines, last: lines.length === 0 ? after : from + lines.length });
  }
}

/** Stores `record` under `key` unless the key is taken (an `id` conflict). */
const insert = <T>(records: Map<string, T>, key: string, record: T): Created<T> => {
  if (records.has(key)) return conflict('id', key);
  records.set(key, record);
  return created(record);
};
