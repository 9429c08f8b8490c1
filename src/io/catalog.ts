/**
 * The cloud side of Tavern, persisted: games, namespaces, versions, builds, CDN sites, uploads,
 * tokens, lobby logs and a few server settings. The matchmaker's own state (lobbies, players, ports)
 * lives in the {@link MatchStore}. Timestamps are epoch milliseconds; ids are lowercase UUIDs.
 *
 * Every method is atomic on its own. Uniqueness rules are enforced by the store (across processes
 * for a shared database) and reported as a {@link Conflict}, never thrown.
 */
import type { NamespaceSettings } from '../core/world.js';

export interface GameRecord {
  readonly id: string;
  /** Unique across games. */
  readonly nameId: string;
  readonly displayName: string;
  readonly developerGroupId: string;
  readonly createdAt: number;
}

export interface CdnAuthUser {
  readonly user: string;
  /** A password hash (never the password). */
  readonly passwordHash: string;
}

export interface NamespaceCdn {
  readonly authType: 'none' | 'basic';
  readonly authUsers: readonly CdnAuthUser[];
  readonly enableDomainPublicAuth: boolean;
}

export interface DomainRecord {
  /** Lowercase; unique across all namespaces. */
  readonly domain: string;
  readonly createdAt: number;
}

export interface NamespaceRecord {
  readonly id: string;
  readonly gameId: string;
  /** Unique within the game. */
  readonly nameId: string;
  readonly displayName: string;
  readonly versionId: string;
  readonly createdAt: number;
  readonly settings: NamespaceSettings;
  readonly cdn: NamespaceCdn;
  /** In the order they were added. */
  readonly domains: readonly DomainRecord[];
}

export interface VersionRecord {
  readonly id: string;
  readonly gameId: string;
  readonly displayName: string;
  readonly createdAt: number;
  /** The createGameVersion `config` as accepted (snake_case JSON, both spellings allowed by the parser). */
  readonly config: unknown;
  /** Per game mode name, its lobby group id (minted at creation). */
  readonly lobbyGroupIds: Readonly<Record<string, string>>;
}

export interface BuildRecord {
  readonly id: string;
  readonly gameId: string;
  readonly uploadId: string;
  readonly displayName: string;
  readonly imageTag: string;
  /** `docker_image` or `oci_bundle` (wire `kind`). */
  readonly kind: string;
  /** `none` or `lz4` (wire `compression`). */
  readonly compression: string;
  readonly createdAt: number;
  /**
   * The build's image in the operator's registry (`TAVERN_REGISTRY`), by digest, once pushed:
   * `registry.example:5000/games/tavern-build@sha256:…`. Recorded once ({@link CatalogStore.recordBuildImage}).
   */
  readonly image?: string;
}

export interface CdnSiteRecord {
  readonly id: string;
  readonly gameId: string;
  readonly uploadId: string;
  readonly displayName: string;
  readonly createdAt: number;
}

export interface UploadFile {
  /** Relative, normalised, never escaping the upload root. */
  readonly path: string;
  readonly contentLength: number;
  readonly contentType?: string;
  /** Number of multipart chunks (1 when not multipart). */
  readonly parts: number;
  /** The S3 multipart upload of a multipart file uploaded straight to the store. */
  readonly multipartId?: string;
}

export interface UploadRecord {
  readonly id: string;
  readonly gameId: string;
  readonly kind: 'build' | 'cdn';
  readonly files: readonly UploadFile[];
  readonly createdAt: number;
  /** Presigned URLs stop working after this time. */
  readonly expiresAt: number;
  readonly completedAt?: number;
  /** Expired before completion: its parts were discarded, it can never complete. */
  readonly abandonedAt?: number;
}

export type TokenKind = 'cloud' | 'namespace-public' | 'namespace-development' | 'lobby' | 'player';

/** A signed token Tavern issued, by its `jti`: what revocation looks up on every request. */
export interface TokenRecord {
  readonly jti: string;
  readonly kind: TokenKind;
  readonly gameId?: string;
  readonly namespaceId?: string;
  readonly createdAt: number;
  readonly expiresAt?: number;
  readonly revokedAt?: number;
}

/**
 * Which Tavern instance runs a lobby's container: recorded before the container is created, so
 * after a restart each instance knows its own lobbies (and never starts one twice), and removed
 * once the container is gone.
 */
export interface LobbyHostRecord {
  readonly lobbyId: string;
  readonly namespaceId: string;
  /** `TAVERN_INSTANCE_ID` of the instance that started it. */
  readonly instanceId: string;
  readonly createdAt: number;
}

/** A game server's output streams (the wire's). */
export type GameStream = 'std_out' | 'std_err';

/**
 * A lobby's log streams: its game server's two, and `tavern`, the lines Tavern writes about the
 * lobby itself (its exit code, why it stopped, a start back-off, the game proxy's failures).
 */
export type LogStream = GameStream | 'tavern';

/** Every stream of a lobby's log, in the order a merged view breaks a tie in time. */
export const LOG_STREAMS: readonly LogStream[] = Object.freeze(['std_out', 'std_err', 'tavern']);

export interface LogLine {
  /** Epoch ms. */
  readonly at: number;
  readonly line: string;
}

/** Lines of one lobby stream, old to new, and the `seq` to pass back to read only newer ones. */
export interface LogPage {
  readonly lines: readonly LogLine[];
  /** The sequence number of the last line returned (or the `after` given when none). */
  readonly last: number;
}

/** A uniqueness rule was broken: which field, and the value already taken. */
export interface Conflict {
  readonly conflict: 'name-id' | 'domain' | 'id';
  readonly value: string;
}

export type Created<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: Conflict };

/** @example return conflict('name-id', game.nameId); */
export const conflict = <T>(kind: Conflict['conflict'], value: string): Created<T> => ({ ok: false, error: { conflict: kind, value } });

/** @example return created(game); */
export const created = <T>(value: T): Created<T> => ({ ok: true, value });

/** The fields of a namespace that can change after creation. */
export type NamespacePatch = Partial<Pick<NamespaceRecord, 'displayName' | 'versionId' | 'settings' | 'cdn'>>;

/** Games (one port per aggregate: a caller takes the ports it uses, the adapters implement them all as {@link CatalogStore}). */
export interface GameStore {
  createGame(game: GameRecord): Promise<Created<GameRecord>>;
  getGame(id: string): Promise<GameRecord | undefined>;
  /** In creation order. */
  listGames(): Promise<readonly GameRecord[]>;
}

export interface NamespaceStore {
  createNamespace(ns: NamespaceRecord): Promise<Created<NamespaceRecord>>;
  getNamespace(id: string): Promise<NamespaceRecord | undefined>;
  /** In creation order. */
  listNamespaces(gameId: string): Promise<readonly NamespaceRecord[]>;
  /** The updated namespace, or undefined if there is none with this id. */
  updateNamespace(id: string, patch: NamespacePatch): Promise<NamespaceRecord | undefined>;
}

/** A namespace's custom domains (kept on its record). */
export interface DomainStore {
  /** Adds a domain (`domain` conflict if any namespace has it); undefined if the namespace is unknown. */
  addDomain(namespaceId: string, domain: DomainRecord): Promise<Created<NamespaceRecord> | undefined>;
  removeDomain(namespaceId: string, domain: string): Promise<NamespaceRecord | undefined>;
  /** The namespace that owns `domain` (origin auth). */
  namespaceByDomain(domain: string): Promise<NamespaceRecord | undefined>;
}

export interface VersionStore {
  createVersion(version: VersionRecord): Promise<Created<VersionRecord>>;
  getVersion(id: string): Promise<VersionRecord | undefined>;
  /** In creation order. */
  listVersions(gameId: string): Promise<readonly VersionRecord[]>;
}

export interface BuildStore {
  createBuild(build: BuildRecord): Promise<Created<BuildRecord>>;
  getBuild(id: string): Promise<BuildRecord | undefined>;
  listBuilds(gameId: string): Promise<readonly BuildRecord[]>;
  /**
   * Records where the build's image was pushed (`image`) unless a reference is recorded already
   * (the first one stays: two instances pushing one build agree on it); the build as stored, or
   * undefined if there is no such build.
   */
  recordBuildImage(id: string, image: string): Promise<BuildRecord | undefined>;
}

/** CDN sites. */
export interface SiteStore {
  createCdnSite(site: CdnSiteRecord): Promise<Created<CdnSiteRecord>>;
  getCdnSite(id: string): Promise<CdnSiteRecord | undefined>;
  listCdnSites(gameId: string): Promise<readonly CdnSiteRecord[]>;
}

export interface UploadStore {
  createUpload(upload: UploadRecord): Promise<Created<UploadRecord>>;
  getUpload(id: string): Promise<UploadRecord | undefined>;
  /** Marks it complete at `at` (once: a second call, or one after it was abandoned, returns the record unchanged). */
  completeUpload(id: string, at: number): Promise<UploadRecord | undefined>;
  /** Uploads neither completed nor abandoned that expired before `before`, oldest expiry first, at most `limit`. */
  expiredUploads(before: number, limit: number): Promise<readonly UploadRecord[]>;
  /** Marks it abandoned at `at` unless it completed (then, or if already abandoned, the record is returned unchanged). */
  abandonUpload(id: string, at: number): Promise<UploadRecord | undefined>;
}

export interface TokenStore {
  putToken(token: TokenRecord): Promise<Created<TokenRecord>>;
  getToken(jti: string): Promise<TokenRecord | undefined>;
  revokeToken(jti: string, at: number): Promise<TokenRecord | undefined>;
  /**
   * A game's tokens (those recorded with its `gameId`: cloud, public and development ones), revoked
   * ones too, newest first (by `createdAt`, then `jti` descending), at most `limit`.
   */
  listTokens(gameId: string, limit: number): Promise<readonly TokenRecord[]>;
}

/** Server settings (the token signing key, the generated admin token): set once, then read. */
export interface SettingStore {
  getSetting(key: string): Promise<string | undefined>;
  /** Stores `value` unless the key already has one; returns the value that is now stored. */
  putSettingIfAbsent(key: string, value: string): Promise<string>;
}

/** Which instance hosts which lobby's container. */
export interface LobbyHostStore {
  /** Records who hosts a lobby; an `id` conflict when the lobby is claimed already (by any instance). */
  claimLobbyHost(host: LobbyHostRecord): Promise<Created<LobbyHostRecord>>;
  /** The lobbies an instance hosts, oldest first. */
  lobbyHosts(instanceId: string): Promise<readonly LobbyHostRecord[]>;
  /** Forgets a lobby's host (its container is gone); nothing if there is none. */
  releaseLobbyHost(lobbyId: string): Promise<void>;
}

/** Lobby log streams. */
export interface LogStore {
  /** Appends lines (in order) to a lobby stream; returns the sequence number of the last one. */
  appendLogs(lobbyId: string, stream: LogStream, lines: readonly LogLine[]): Promise<number>;
  /** Lines with a sequence number above `after` (0: from the start), at most `limit`, old to new. */
  readLogs(lobbyId: string, stream: LogStream, after: number, limit: number): Promise<LogPage>;
  /** The newest `limit` lines of a stream, old to new; `last` is the stream's last sequence number (0 when it has none). */
  lastLogs(lobbyId: string, stream: LogStream, limit: number): Promise<LogPage>;
}

/**
 * Every aggregate's port: what one database (memory, SQLite, PostgreSQL) implements, and what the
 * composition root hands out. Services and routes name only the ports they use.
 */
export interface CatalogStore
  extends GameStore, NamespaceStore, DomainStore, VersionStore, BuildStore, SiteStore, UploadStore, TokenStore, SettingStore, LobbyHostStore, LogStore {}
