/**
 * A game's versions: `createGameVersion` (wire.md §2.1: the whole request parsed, validated and
 * resolved by the core against what the catalog holds; every problem reported as one
 * `VALIDATION_ERROR`), its dry run, and a version looked up within its game.
 */
import { parseVersion, parseVersionConfig, renderVersionConfig, type Problem, type ValidationContext, type VersionConfig } from '../core/config/index.js';
import type { PortProtocol } from '../core/config/types.js';
import { matchError, validationError, type MatchError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import type { RegionInfo } from '../core/world.js';
import type { BuildStore, SiteStore, UploadStore, VersionStore, VersionRecord } from '../io/catalog.js';
import type { Clock, Random } from '../io/index.js';

/** What validating a version reads: the game's versions, builds, sites and uploads, and the operator's settings. */
export interface VersionCheckDeps {
  readonly catalog: VersionStore & BuildStore & SiteStore & UploadStore;
  /** The operator's regions (a game mode may only use these). */
  readonly regions: readonly RegionInfo[];
  /** Verification hosts the operator allows although they are not public (`TAVERN_EGRESS_ALLOW`). */
  readonly settings: {
    readonly egressAllow: readonly string[];
    /** What the game proxy serves (HTTPS only with a certificate); absent: every protocol. */
    readonly proxyProtocols?: ReadonlySet<PortProtocol>;
    /** Whether the operator allows host networking (`TAVERN_DOCKER_ALLOW_HOST_NETWORK`); absent: no check. */
    readonly hostNetworkAllowed?: boolean;
    /** Why the proxy refuses each protocol it does not serve, in words (shown with the problem). */
    readonly protocolRefusals?: Readonly<Partial<Record<PortProtocol, string>>>;
  };
}

export interface VersionDeps extends VersionCheckDeps {
  readonly catalog: VersionCheckDeps['catalog'] & VersionStore;
  readonly clock: Clock;
  readonly random: Random;
}

type Status = 'complete' | 'incomplete' | 'missing';

/** The build and site ids a config refers to. */
function referencedIds(config: VersionConfig): { builds: Set<string>; sites: Set<string> } {
  const builds = new Set<string>();
  const mm = config.matchmaker;
  if (mm?.container?.imageId !== undefined) builds.add(mm.container.imageId);
  for (const mode of Object.values(mm?.gameModes ?? {})) if (mode.container?.imageId !== undefined) builds.add(mode.container.imageId);
  const sites = new Set<string>();
  if (config.cdn?.siteId !== undefined) sites.add(config.cdn.siteId);
  return { builds, sites };
}

/** Whether the game's build or site `id` exists and its upload is complete. */
async function uploadStatus(catalog: VersionCheckDeps['catalog'], gameId: string, kind: 'build' | 'site', id: string): Promise<Status> {
  const record = kind === 'build' ? await catalog.getBuild(id) : await catalog.getCdnSite(id);
  if (record === undefined || record.gameId !== gameId) return 'missing';
  const upload = await catalog.getUpload(record.uploadId);
  return upload?.completedAt !== undefined ? 'complete' : 'incomplete';
}

/** The request's `config` member, if the request is an object. */
const configOf = (request: unknown): unknown =>
  typeof request === 'object' && request !== null && !Array.isArray(request) ? (request as Record<string, unknown>)['config'] : undefined;

/** What validation needs from the stores, loaded up front (the core's lookups are synchronous). */
async function validationContext(deps: VersionCheckDeps, gameId: string, request: unknown): Promise<ValidationContext> {
  const versions = await deps.catalog.listVersions(gameId);
  const builds = new Map<string, Status>();
  const sites = new Map<string, Status>();
  const parsed = parseVersionConfig(configOf(request));
  if (parsed.ok) {
    const ids = referencedIds(parsed.value);
    for (const id of ids.builds) builds.set(id, await uploadStatus(deps.catalog, gameId, 'build', id));
    for (const id of ids.sites) sites.set(id, await uploadStatus(deps.catalog, gameId, 'site', id));
  }
  return {
    regions: new Set(deps.regions.map((r) => r.id)),
    versionDisplayNames: new Set(versions.map((v) => v.displayName)),
    verificationHostsAllowed: deps.settings.egressAllow,
    ...(deps.settings.proxyProtocols === undefined ? {} : { proxyProtocols: deps.settings.proxyProtocols }),
    ...(deps.settings.hostNetworkAllowed === undefined ? {} : { hostNetworkAllowed: deps.settings.hostNetworkAllowed }),
    ...(deps.settings.protocolRefusals === undefined ? {} : { protocolRefusals: deps.settings.protocolRefusals }),
    build: (id) => builds.get(id) ?? 'missing',
    site: (id) => sites.get(id) ?? 'missing',
  };
}

/**
 * Creates a version of the game from a createGameVersion request `{display_name, config}` (its
 * JSON as received: the core parses it), with a fresh lobby group id per game mode. Every problem
 * (bad fields, unknown regions, builds or sites missing or not uploaded, a display name the game
 * already uses) is one `VALIDATION_ERROR`.
 *
 * @effects catalog (listVersions, getBuild, getCdnSite, getUpload, createVersion), clock, random
 * @example
 * const r = await createVersion(deps, gameId, { display_name: 'v2', config: { matchmaker: {...} } });
 * if (r.ok) r.value.lobbyGroupIds // { default: '…' }
 */
export async function createVersion(deps: VersionDeps, gameId: string, request: unknown): Promise<Result<VersionRecord, MatchError>> {
  const parsed = parseVersion(request, await validationContext(deps, gameId, request));
  if (!parsed.ok) return err(validationError(parsed.error));
  const { catalog, clock, random } = deps;
  const lobbyGroupIds: Record<string, string> = {};
  for (const mode of parsed.value.resolved.gameModes) lobbyGroupIds[mode.name] = random.uuid();
  const created = await catalog.createVersion({
    id: random.uuid(),
    gameId,
    displayName: parsed.value.displayName,
    createdAt: clock.now(),
    config: renderVersionConfig(parsed.value.config),
    lobbyGroupIds,
  });
  return created.ok ? created : err(validationError([{ path: ['display-name', 'not-unique'] }]));
}

/**
 * What {@link createVersion} would object to, without creating anything (`[]`: it would succeed).
 *
 * @effects catalog (listVersions, getBuild, getCdnSite, getUpload)
 * @example
 * await versionProblems(deps, gameId, { display_name: 'v1', config: {} }) // [{ path: ['display-name', 'not-unique'] }] once v1 exists
 */
export async function versionProblems(deps: VersionCheckDeps, gameId: string, request: unknown): Promise<readonly Problem[]> {
  const parsed = parseVersion(request, await validationContext(deps, gameId, request));
  return parsed.ok ? [] : parsed.error;
}

/**
 * The version, if it exists and belongs to the game.
 *
 * @effects catalog (getVersion)
 * @example
 * if ((await gameVersion(catalog, game.id, versionId)) === undefined) problems.push(notFound)
 */
export async function gameVersion(catalog: VersionStore, gameId: string, versionId: string): Promise<VersionRecord | undefined> {
  const version = await catalog.getVersion(versionId);
  return version !== undefined && version.gameId === gameId ? version : undefined;
}

/**
 * One of the game's versions (`VERSION_NOT_FOUND` for an unknown id or another game's).
 *
 * @effects catalog (getVersion)
 * @example
 * const r = await findVersion({ catalog }, gameId, versionId); if (r.ok) r.value.config
 */
export async function findVersion(deps: { readonly catalog: VersionStore }, gameId: string, versionId: string): Promise<Result<VersionRecord, MatchError>> {
  const version = await gameVersion(deps.catalog, gameId, versionId);
  return version === undefined ? err(matchError('VERSION_NOT_FOUND')) : ok(version);
}
