/**
 * A game's namespaces: created (name ids unique within the game, on one of the game's versions) and
 * published to the matchmaker, pointed at another version, and their matchmaker limits and CDN
 * settings changed.
 */
import { BCRYPT_COST, checkableHash } from '../core/bcrypt-hash.js';
import type { Problem } from '../core/config/index.js';
import { matchError, validationError, type MatchError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import { DEFAULT_NAMESPACE_SETTINGS } from '../core/world.js';
import type { NamespaceStore, VersionStore, NamespaceCdn, NamespaceRecord } from '../io/catalog.js';
import type { Clock, Random } from '../io/index.js';
import type { Matchmaker } from './matchmaker.js';
import { publishNamespace, type PublishDeps } from './publish.js';
import { gameVersion } from './versions.js';

/**
 * @example
 * { nameId: 'staging', displayName: 'Staging', versionId }
 */
export interface NewNamespace {
  readonly nameId: string;
  readonly displayName: string;
  readonly versionId: string;
}

/** What the domain says about a new namespace's fields, field by field (in Rivet's path style). */
export interface NamespaceProblems {
  /** `name-id.not-unique`: another namespace of the game has it. */
  readonly nameId: readonly Problem[];
  /** `version-id.not-found`: no such version, or another game's. */
  readonly versionId: readonly Problem[];
}

type Catalog = NamespaceStore & VersionStore;

export interface NamespaceDeps extends PublishDeps {
  readonly catalog: PublishDeps['catalog'] & Catalog & NamespaceStore;
  readonly clock: Clock;
  readonly random: Random;
}

/**
 * A namespace as first stored: default matchmaker limits, no CDN auth, public auth through its
 * domains on, no domains.
 *
 * @example
 * newNamespaceRecord(random.uuid(), gameId, { nameId: 'prod', displayName: 'Production', versionId }, clock.now())
 */
export const newNamespaceRecord = (id: string, gameId: string, fields: NewNamespace, now: number): NamespaceRecord => ({
  id, gameId, nameId: fields.nameId, displayName: fields.displayName, versionId: fields.versionId, createdAt: now,
  settings: DEFAULT_NAMESPACE_SETTINGS,
  cdn: { authType: 'none', authUsers: [], enableDomainPublicAuth: true },
  domains: [],
});

/**
 * The domain's problems with the fields given (absent ones are not checked).
 *
 * @effects catalog (listNamespaces when `nameId` is given, getVersion when `versionId` is)
 * @example
 * await namespaceProblems(deps, gameId, { nameId: 'prod' }) // { nameId: [{ path: ['name-id', 'not-unique'] }], versionId: [] }
 */
export async function namespaceProblems(
  deps: { readonly catalog: Catalog },
  gameId: string,
  fields: { readonly nameId?: string; readonly versionId?: string },
): Promise<NamespaceProblems> {
  const { catalog } = deps;
  const taken = fields.nameId !== undefined && (await catalog.listNamespaces(gameId)).some((n) => n.nameId === fields.nameId);
  const missing = fields.versionId !== undefined && (await gameVersion(catalog, gameId, fields.versionId)) === undefined;
  return {
    nameId: taken ? [{ path: ['name-id', 'not-unique'] }] : [],
    versionId: missing ? [{ path: ['version-id', 'not-found'] }] : [],
  };
}

/**
 * Creates a namespace of the game and publishes its version to the matchmaker. A name id the game
 * already uses or a version that is not the game's is a `VALIDATION_ERROR` (see
 * {@link namespaceProblems}); one taken in between by another request is `CLOUD_NAME_ID_TAKEN`.
 *
 * @effects catalog (listNamespaces, getVersion, createNamespace), clock, random, matchmaker (addNamespace, publish)
 * @example
 * const r = await createNamespace(deps, gameId, { nameId: 'staging', displayName: 'Staging', versionId });
 */
export async function createNamespace(deps: NamespaceDeps, gameId: string, fields: NewNamespace): Promise<Result<NamespaceRecord, MatchError>> {
  const problems = await namespaceProblems(deps, gameId, fields);
  if (problems.nameId.length + problems.versionId.length > 0) return err(validationError([...problems.nameId, ...problems.versionId]));
  const created = await deps.catalog.createNamespace(newNamespaceRecord(deps.random.uuid(), gameId, fields, deps.clock.now()));
  if (!created.ok) return err(matchError('CLOUD_NAME_ID_TAKEN', { name_id: fields.nameId }));
  await publishNamespace(deps, created.value);
  return created;
}

type Update = NamespaceStore;

/**
 * Deploys one of the game's versions to the namespace: the matchmaker makes it current and
 * reconciles idle lobbies (`VERSION_NOT_FOUND`, `NAMESPACE_NOT_FOUND` when it went away).
 *
 * @effects catalog (getVersion, updateNamespace), matchmaker (addNamespace, publish)
 * @example
 * const r = await setNamespaceVersion({ catalog, matchmaker }, ns, versionId);
 */
export async function setNamespaceVersion(
  deps: PublishDeps & { readonly catalog: Update },
  ns: NamespaceRecord,
  versionId: string,
): Promise<Result<NamespaceRecord, MatchError>> {
  const version = await gameVersion(deps.catalog, ns.gameId, versionId);
  if (version === undefined) return err(matchError('VERSION_NOT_FOUND'));
  const updated = await deps.catalog.updateNamespace(ns.id, { versionId: version.id });
  if (updated === undefined) return err(matchError('NAMESPACE_NOT_FOUND'));
  await publishNamespace(deps, updated);
  return ok(updated);
}

/** The matchmaker limits a developer sets (`mm-config`). */
export interface MatchmakerLimits {
  readonly lobbyCountMax: number;
  readonly maxPlayersPerClient: number;
}

/**
 * Replaces the namespace's lobby count limit and players per client, in the catalog and the
 * matchmaker (`NAMESPACE_NOT_FOUND` when it went away).
 *
 * @effects catalog (updateNamespace), matchmaker (addNamespace, updateSettings)
 * @example
 * await setMatchmakerLimits({ catalog, matchmaker }, ns, { lobbyCountMax: 100, maxPlayersPerClient: 4 });
 */
export async function setMatchmakerLimits(
  deps: { readonly catalog: Update; readonly matchmaker: Pick<Matchmaker, 'addNamespace' | 'updateSettings'> },
  ns: NamespaceRecord,
  limits: MatchmakerLimits,
): Promise<Result<NamespaceRecord, MatchError>> {
  const settings = { ...ns.settings, lobbyCountMax: limits.lobbyCountMax, maxPlayersPerClient: limits.maxPlayersPerClient };
  const updated = await deps.catalog.updateNamespace(ns.id, { settings });
  if (updated === undefined) return err(matchError('NAMESPACE_NOT_FOUND'));
  await deps.matchmaker.addNamespace(ns.id, settings);
  await deps.matchmaker.updateSettings(ns.id, settings);
  return ok(updated);
}

/**
 * Changes the namespace's CDN auth type or domain public auth (a namespace that went away is left alone).
 *
 * @effects catalog (updateNamespace)
 * @example
 * await setCdnSettings({ catalog }, ns, { authType: 'basic' });
 */
export async function setCdnSettings(
  deps: { readonly catalog: Update },
  ns: NamespaceRecord,
  change: Partial<Pick<NamespaceCdn, 'authType' | 'enableDomainPublicAuth'>>,
): Promise<void> {
  await deps.catalog.updateNamespace(ns.id, { cdn: { ...ns.cdn, ...change } });
}

/** At most this many CDN auth users per namespace (wire.md §6.3). */
export const MAX_CDN_AUTH_USERS = 32;

/**
 * Adds a CDN basic-auth user, or replaces the password hash of one with the same name:
 * `CDN_INVALID_AUTH_USER_PASSWORD` unless `passwordHash` is a bcrypt hash of a cost in
 * {@link BCRYPT_COST} (4 to 12), `CDN_TOO_MANY_AUTH_USERS` past {@link MAX_CDN_AUTH_USERS}. The
 * CDN checks them on the next request.
 *
 * @effects catalog (updateNamespace)
 * @example
 * await setCdnAuthUser({ catalog }, ns, 'alice', '$2b$10$...');
 */
export async function setCdnAuthUser(
  deps: { readonly catalog: Update },
  ns: NamespaceRecord,
  user: string,
  passwordHash: string,
): Promise<Result<void, MatchError>> {
  if (!checkableHash(passwordHash)) return err(matchError('CDN_INVALID_AUTH_USER_PASSWORD', { ...BCRYPT_COST }, { path: ['password'] }));
  const others = ns.cdn.authUsers.filter((u) => u.user !== user);
  if (others.length >= MAX_CDN_AUTH_USERS) return err(matchError('CDN_TOO_MANY_AUTH_USERS', { max: MAX_CDN_AUTH_USERS }));
  await deps.catalog.updateNamespace(ns.id, { cdn: { ...ns.cdn, authUsers: [...others, { user, passwordHash }] } });
  return ok(undefined);
}

/**
 * Removes a CDN auth user; nothing happens if there is none of that name.
 *
 * @effects catalog (updateNamespace)
 * @example
 * await removeCdnAuthUser({ catalog }, ns, 'alice');
 */
export async function removeCdnAuthUser(deps: { readonly catalog: Update }, ns: NamespaceRecord, user: string): Promise<void> {
  if (!ns.cdn.authUsers.some((u) => u.user === user)) return;
  await deps.catalog.updateNamespace(ns.id, { cdn: { ...ns.cdn, authUsers: ns.cdn.authUsers.filter((u) => u.user !== user) } });
}
