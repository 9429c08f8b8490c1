/**
 * Versions: `createGameVersion` (wire.md §2.1; the versions service validates and stores it),
 * validate, and get.
 */
import { parseVersionConfig, renderVersionConfig } from '../../core/config/index.js';
import type { VersionRecord } from '../../io/catalog.js';
import { createVersion, findVersion, versionProblems } from '../../services/versions.js';
import { requireGame } from '../auth.js';
import { param, ts, type Ctx, type Handler } from '../context.js';
import { unwrap } from '../errors.js';
import type { Router } from '../router.js';

async function create(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const version = unwrap(await createVersion(ctx.services, game.id, await ctx.body()));
  return { version_id: version.id };
}

async function validate(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const problems = await versionProblems(ctx.services, game.id, await ctx.body());
  return { errors: problems.map((p) => (p.message === undefined ? { path: [...p.path] } : { path: [...p.path], message: p.message })) };
}

/** The config as GET version returns it: re-rendered from storage, without `engine` (Rivet did not store it). */
function storedConfig(record: VersionRecord): unknown {
  const parsed = parseVersionConfig(record.config);
  if (!parsed.ok) return {};
  const rendered = renderVersionConfig(parsed.value) as Record<string, unknown>;
  delete rendered['engine'];
  return rendered;
}

async function get(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const record = unwrap(await findVersion(ctx.services, game.id, param(ctx, 'version_id')));
  return {
    version: { version_id: record.id, create_ts: ts(record.createdAt), display_name: record.displayName, config: storedConfig(record) },
  };
}

const VERSIONS = '/cloud/games/{game_id:uuid}/versions';

export function registerVersions(router: Router<Handler>): void {
  router
    .add('POST', VERSIONS, create)
    .add('POST', `${VERSIONS}/validate`, validate)
    .add('GET', `${VERSIONS}/{version_id:uuid}`, get);
}
