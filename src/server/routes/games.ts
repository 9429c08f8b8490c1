/**
 * Games: create (admin), list, get (`{game, watch}` with namespaces, versions and
 * `available_regions`), validate, and the caller's token (`auth/inspect`). A game's tokens: `game-tokens.ts`.
 */
import { createGame, gameDetails, gameNameIdProblems, listGames } from '../../services/games.js';
import { agentOf, requireAdmin, requireAgent, requireGame } from '../auth.js';
import { param, type Ctx, type Handler } from '../context.js';
import { fail, unwrap } from '../errors.js';
import { renderGameSummary, renderGroupSummary, renderNamespaceSummary, renderRegionSummary, renderVersionSummary } from '../render.js';
import type { Router } from '../router.js';
import { anyJson, collect, object, opt, req, uuid } from '../validate.js';
import { assertValid, displayNameProblems, field, nameIdProblems, wellFormedNameId } from './names.js';

const createBody = object({ name_id: opt(anyJson), display_name: opt(anyJson), developer_group_id: req(uuid) });

/** `POST /cloud/games` (admin): the games service adds its first version and namespaces. */
async function create(ctx: Ctx): Promise<unknown> {
  await requireAdmin(ctx);
  const raw = await ctx.body();
  const { value: body, problems } = collect(raw, createBody);
  assertValid([...nameIdProblems(field(raw, 'name_id')), ...displayNameProblems(field(raw, 'display_name')), ...problems]);
  if (body === undefined || typeof body.name_id !== 'string' || typeof body.display_name !== 'string') return fail('VALIDATION_ERROR', { error: 'body' });
  const game = unwrap(await createGame(ctx.services, { nameId: body.name_id, displayName: body.display_name, developerGroupId: body.developer_group_id }));
  return { game_id: game.id };
}

async function list(ctx: Ctx): Promise<unknown> {
  const agent = await requireAgent(ctx);
  if (agent.kind !== 'admin' && agent.kind !== 'cloud') fail('CLAIMS_MISSING_ENTITLEMENT', { entitlement: 'GameCloud' });
  const { settings, clock } = ctx.services;
  const games = await listGames(ctx.services, agent.kind === 'cloud' ? agent.gameId : undefined);
  return {
    games: games.map((g) => renderGameSummary(g.game, settings, g.playerCount)),
    groups: [...new Set(games.map((g) => g.game.developerGroupId))].map(renderGroupSummary),
    watch: { index: String(clock.now() + 1) },
  };
}

async function get(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const { namespaces, versions, playerCount } = await gameDetails(ctx.services, game);
  return {
    game: {
      game_id: game.id,
      create_ts: new Date(game.createdAt).toISOString(),
      name_id: game.nameId,
      display_name: game.displayName,
      developer_group_id: game.developerGroupId,
      total_player_count: playerCount,
      namespaces: namespaces.map(renderNamespaceSummary),
      versions: versions.map(renderVersionSummary),
      available_regions: ctx.services.regions.map(renderRegionSummary),
    },
    watch: { index: String(ctx.services.clock.now() + 1) },
  };
}

/** `POST /cloud/games/validate` → `{errors}` (no write). */
async function validate(ctx: Ctx): Promise<unknown> {
  await requireAgent(ctx);
  const raw = await ctx.body();
  const nameId = wellFormedNameId(field(raw, 'name_id'));
  const taken = nameId === undefined ? [] : await gameNameIdProblems(ctx.services, nameId);
  return { errors: [...displayNameProblems(field(raw, 'display_name')), ...nameIdProblems(field(raw, 'name_id')), ...taken] };
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
    .add('POST', '/cloud/games', create)
    .add('GET', '/cloud/games', list)
    .add('POST', '/cloud/games/validate', validate)
    .add('GET', '/cloud/games/{game_id:uuid}', get)
    .add('GET', '/cloud/auth/inspect', inspect)
    .add('GET', '/cloud/bootstrap', bootstrap);
}
