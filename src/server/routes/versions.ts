/**
 * Versions: `createGameVersion` (wire.md §2.1: the whole body parsed, validated and resolved by the
 * core; every problem reported as one `VALIDATION_ERROR`), validate, and get.
 */
import { parseVersion, parseVersionConfig, renderVersionConfig, type ValidationContext, type VersionConfig } from '../../core/config/index.js';
import { validationError } from '../../core/errors.js';
import type { GameRecord, VersionRecord } from '../../io/catalog.js';
import { requireGame } from '../auth.js';
import { param, ts, type Ctx, type Handler, type Services } from '../context.js';
import { fail, failWith } from '../errors.js';
import type { Router } from '../router.js';
import { isRecord } from '../validate.js';

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

async function uploadStatus(services: Services, gameId: string, kind: 'build' | 'site', id: string): Promise<Status> {
  const { catalog } = services;
  const record = kind === 'build' ? await catalog.getBuild(id) : await catalog.getCdnSite(id);
  if (record === undefined || record.gameId !== gameId) return 'missing';
  const upload = await catalog.getUpload(record.uploadId);
  return upload?.completedAt !== undefined ? 'complete' : 'incomplete';
}

/** What validation needs from the stores, loaded up front (the core's lookups are synchronous). */
async function validationContext(services: Services, game: GameRecord, body: unknown): Promise<ValidationContext> {
  const versions = await services.catalog.listVersions(game.id);
  const builds = new Map<string, Status>();
  const sites = new Map<string, Status>();
  const parsed = parseVersionConfig(isRecord(body) ? body['config'] : undefined);
  if (parsed.ok) {
    const ids = referencedIds(parsed.value);
    for (const id of ids.builds) builds.set(id, await uploadStatus(services, game.id, 'build', id));
    for (const id of ids.sites) sites.set(id, await uploadStatus(services, game.id, 'site', id));
  }
  return {
    regions: new Set(services.regions.map((r) => r.id)),
    versionDisplayNames: new Set(versions.map((v) => v.displayName)),
    verificationHostsAllowed: services.settings.egressAllow,
    build: (id) => builds.get(id) ?? 'missing',
    site: (id) => sites.get(id) ?? 'missing',
  };
}

async function createVersion(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const body = await ctx.body();
  const parsed = parseVersion(body, await validationContext(ctx.services, game, body));
  if (!parsed.ok) failWith(validationError(parsed.error));
  const { catalog, clock, random } = ctx.services;
  const lobbyGroupIds: Record<string, string> = {};
  for (const mode of parsed.value.resolved.gameModes) lobbyGroupIds[mode.name] = random.uuid();
  const version: VersionRecord = {
    id: random.uuid(),
    gameId: game.id,
    displayName: parsed.value.displayName,
    createdAt: clock.now(),
    config: renderVersionConfig(parsed.value.config),
    lobbyGroupIds,
  };
  const created = await catalog.createVersion(version);
  if (!created.ok) failWith(validationError([{ path: ['display-name', 'not-unique'] }]));
  return { version_id: version.id };
}

async function validateVersion(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const body = await ctx.body();
  const parsed = parseVersion(body, await validationContext(ctx.services, game, body));
  return { errors: parsed.ok ? [] : parsed.error.map((p) => ({ path: [...p.path] })) };
}

/** The config as GET version returns it: re-rendered from storage, without `engine` (Rivet did not store it). */
function storedConfig(record: VersionRecord): unknown {
  const parsed = parseVersionConfig(record.config);
  if (!parsed.ok) return {};
  const rendered = renderVersionConfig(parsed.value) as Record<string, unknown>;
  delete rendered['engine'];
  return rendered;
}

async function getVersion(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const record = await ctx.services.catalog.getVersion(param(ctx, 'version_id'));
  if (record === undefined || record.gameId !== game.id) fail('VERSION_NOT_FOUND');
  return {
    version: { version_id: record.id, create_ts: ts(record.createdAt), display_name: record.displayName, config: storedConfig(record) },
  };
}

const VERSIONS = '/cloud/games/{game_id:uuid}/versions';

export function registerVersions(router: Router<Handler>): void {
  router
    .add('POST', VERSIONS, createVersion)
    .add('POST', `${VERSIONS}/validate`, validateVersion)
    .add('GET', `${VERSIONS}/{version_id:uuid}`, getVersion);
}
