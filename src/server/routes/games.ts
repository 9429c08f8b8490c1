/**
 * Games: create (admin), list, get (`{game, watch}` with namespaces, versions and
 * `available_regions`), validate, and cloud tokens.
 */
import { DEFAULT_NAMESPACE_SETTINGS } from '../../core/world.js';
import type { GameRecord, NamespaceRecord, VersionRecord } from '../../io/catalog.js';
import { publishNamespace } from '../../services/publish.js';
import { agentOf, requireAdmin, requireAgent, requireGame } from '../auth.js';
import { param, type Ctx, type Handler, type Services } from '../context.js';
import { fail } from '../errors.js';
import { renderGameSummary, renderGroupSummary, renderNamespaceSummary, renderRegionSummary, renderVersionSummary } from '../render.js';
import type { Router } from '../router.js';
import { anyJson, collect, object, opt, req, uuid } from '../validate.js';
import { assertValid, displayNameProblems, field, nameIdProblems } from './names.js';

const createBody = object({ name_id: opt(anyJson), display_name: opt(anyJson), developer_group_id: req(uuid) });

/** Players holding a seat in any lobby of the game's namespaces. */
async function playerCount(services: Services, gameId: string): Promise<number> {
  const world = await services.matchmaker.snapshot();
  let n = 0;
  for (const ns of await services.catalog.listNamespaces(gameId)) {
    for (const lobby of world.namespaces.get(ns.id)?.lobbies.values() ?? []) n += lobby.playerCount;
  }
  return n;
}

const DEFAULT_NAMESPACES = [
  { nameId: 'prod', displayName: 'Production' },
  { nameId: 'staging', displayName: 'Staging' },
] as const;

/**
 * A new game gets an empty version `0.0.1` and the namespaces `prod` and `staging` pointing to it.
 *
 * @effects catalog, matchmaker, clock, random
 */
async function createGame(ctx: Ctx): Promise<unknown> {
  await requireAdmin(ctx);
  const raw = await ctx.body();
  const { value: body, problems } = collect(raw, createBody);
  assertValid([...nameIdProblems(field(raw, 'name_id')), ...displayNameProblems(field(raw, 'display_name')), ...problems]);
  if (body === undefined || typeof body.name_id !== 'string' || typeof body.display_name !== 'string') return fail('VALIDATION_ERROR', { error: 'body' });
  const { catalog, clock, random } = ctx.services;
  const now = clock.now();
  const game: GameRecord = { id: random.uuid(), nameId: body.name_id, displayName: body.display_name, developerGroupId: body.developer_group_id, createdAt: now };
  const created = await catalog.createGame(game);
  if (!created.ok) fail('CLOUD_NAME_ID_TAKEN', { name_id: body.name_id });
  const version: VersionRecord = { id: random.uuid(), gameId: game.id, displayName: '0.0.1', createdAt: now, config: {}, lobbyGroupIds: {} };
  await catalog.createVersion(version);
  for (const { nameId, displayName } of DEFAULT_NAMESPACES) {
    const ns: NamespaceRecord = {
      id: random.uuid(), gameId: game.id, nameId, displayName, versionId: version.id, createdAt: now,
      settings: DEFAULT_NAMESPACE_SETTINGS,
      cdn: { authType: 'none', authUsers: [], enableDomainPublicAuth: true },
      domains: [],
    };
    const made = await catalog.createNamespace(ns);
    if (made.ok) await publishNamespace(ctx.services, made.value);
  }
  return { game_id: game.id };
}

async function listGames(ctx: Ctx): Promise<unknown> {
  const agent = await requireAgent(ctx);
  const { catalog, settings } = ctx.services;
  let games: readonly GameRecord[];
  if (agent.kind === 'admin') games = await catalog.listGames();
  else if (agent.kind === 'cloud') {
    const game = await catalog.getGame(agent.gameId);
    games = game === undefined ? [] : [game];
  } else fail('CLAIMS_MISSING_ENTITLEMENT', { entitlement: 'GameCloud' });
  const summaries = [];
  for (const g of games) summaries.push(renderGameSummary(g, settings, await playerCount(ctx.services, g.id)));
  const groups = [...new Set(games.map((g) => g.developerGroupId))].map(renderGroupSummary);
  return { games: summaries, groups, watch: { index: String(ctx.services.clock.now() + 1) } };
}

async function getGame(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const { catalog, clock, regions } = ctx.services;
  const namespaces = await catalog.listNamespaces(game.id);
  const versions = [...(await catalog.listVersions(game.id))].reverse();
  return {
    game: {
      game_id: game.id,
      create_ts: new Date(game.createdAt).toISOString(),
      name_id: game.nameId,
      display_name: game.displayName,
      developer_group_id: game.developerGroupId,
      total_player_count: await playerCount(ctx.services, game.id),
      namespaces: namespaces.map(renderNamespaceSummary),
      versions: versions.map(renderVersionSummary),
      available_regions: regions.map(renderRegionSummary),
    },
    watch: { index: String(clock.now() + 1) },
  };
}

/** `POST /cloud/games/validate` → `{errors}` (no write). */
async function validateGame(ctx: Ctx): Promise<unknown> {
  await requireAgent(ctx);
  const raw = await ctx.body();
  const taken = new Set((await ctx.services.catalog.listGames()).map((g) => g.nameId));
  return { errors: [...displayNameProblems(field(raw, 'display_name')), ...nameIdProblems(field(raw, 'name_id'), taken)] };
}

async function createCloudToken(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  return { token: await ctx.services.tokens.issue({ kind: 'cloud', gameId: game.id }) };
}

/** `GET /cloud/auth/inspect`: what the caller's token is. */
async function inspect(ctx: Ctx): Promise<unknown> {
  const agent = await requireAgent(ctx);
  if (agent.kind === 'cloud') return { agent: { game_cloud: { game_id: agent.gameId } } };
  if (agent.kind === 'admin') return { agent: { identity: { identity_id: '00000000-0000-0000-0000-000000000000' } } };
  return fail('CLAIMS_MISSING_ENTITLEMENT', { entitlement: 'GameCloud' });
}

/** `GET /cloud/bootstrap` (optional auth; a present token must still be valid). */
async function bootstrap(ctx: Ctx): Promise<unknown> {
  await agentOf(ctx);
  return { cluster: 'oss', captcha: {} };
}

export function registerGames(router: Router<Handler>): void {
  router
    .add('POST', '/cloud/games', createGame)
    .add('GET', '/cloud/games', listGames)
    .add('POST', '/cloud/games/validate', validateGame)
    .add('GET', '/cloud/games/{game_id:uuid}', getGame)
    .add('POST', '/cloud/games/{game_id:uuid}/tokens/cloud', createCloudToken)
    .add('GET', '/cloud/auth/inspect', inspect)
    .add('GET', '/cloud/bootstrap', bootstrap);
}
