/**
 * The lobby-facing matchmaker (wire.md §3.1, §3.5, §3.7, §3.10): ready, closed (`lobbies.setClosed`),
 * state set/get, players connected/disconnected. A lobby token acts on its own lobby; a
 * development token gets mock answers.
 */
import type { PlayerRef } from '../../core/lobby/lifecycle.js';
import { requireLobby } from '../auth.js';
import { param, type Ctx, type Handler } from '../context.js';
import { done, fail, JsonText } from '../errors.js';
import type { Router } from '../router.js';
import type { Verified } from '../../services/tokens.js';
import { bool, object, parse, req, str } from '../validate.js';

type LobbyCaller = { readonly namespaceId: string; readonly lobbyId: string };

/** The lobby token's lobby, if the matchmaker still knows its namespace. */
async function knownLobby(ctx: Ctx, caller: LobbyCaller): Promise<LobbyCaller> {
  const world = await ctx.services.matchmaker.snapshot();
  if (world.namespaces.get(caller.namespaceId)?.lobbies.has(caller.lobbyId) !== true) fail('MATCHMAKER_LOBBY_NOT_FOUND');
  return caller;
}

async function ready(ctx: Ctx): Promise<unknown> {
  const caller = await requireLobby(ctx);
  await ctx.body();
  if (caller.kind === 'dev') return {};
  return done(await ctx.services.matchmaker.lobbyReady(await knownLobby(ctx, caller)));
}

/** `lobbies.setClosed`: closes or reopens routing; the lobby keeps running (interface.md #6). */
async function setClosed(ctx: Ctx): Promise<unknown> {
  const caller = await requireLobby(ctx);
  const body = parse(await ctx.body(), object({ is_closed: req(bool) }));
  if (caller.kind === 'dev') return {};
  return done(await ctx.services.matchmaker.setClosed(await knownLobby(ctx, caller), body.is_closed));
}

/**
 * Sets the lobby's state (an empty body or `null` clears it), stored with the lobby: every
 * instance sees it, a restart keeps it, and it goes when the lobby stops (a stopping or stopped
 * lobby's token gets `MATCHMAKER_LOBBY_STOPPED`).
 */
async function setState(ctx: Ctx): Promise<unknown> {
  const caller = await requireLobby(ctx);
  const value = await ctx.body();
  const empty = await ctx.bodyWasEmpty();
  if (caller.kind === 'dev') return {};
  return done(await ctx.services.matchmaker.setLobbyState(caller, empty || value === null ? undefined : JSON.stringify(value)));
}

/** Another lobby's state, within the caller's namespace (Rivet let any lobby token read any lobby's): its stored JSON as it is. */
async function getState(ctx: Ctx): Promise<unknown> {
  const caller = await requireLobby(ctx);
  if (caller.kind === 'dev') return {};
  const lobbyId = param(ctx, 'lobby_id');
  const world = await ctx.services.matchmaker.snapshot();
  if (world.namespaces.get(caller.namespaceId)?.lobbies.has(lobbyId) !== true) return null;
  return new JsonText((await ctx.services.matchmaker.lobbyState(lobbyId)) ?? 'null');
}

type PlayerGrant = Extract<Verified, { kind: 'player' }>;

/** The `player_token` of the body, verified (`TOKEN_ERROR` when it is not a valid player token). */
async function playerToken(ctx: Ctx): Promise<PlayerGrant> {
  const body = parse(await ctx.body(), object({ player_token: req(str) }));
  const verified = await ctx.services.tokens.verify(body.player_token);
  if (!verified.ok) fail('TOKEN_ERROR', { reason: verified.error.code === 'CLAIMS_ENTITLEMENT_EXPIRED' ? 'expired' : verified.error.code === 'TOKEN_REVOKED' ? 'revoked' : 'invalid' });
  if (verified.value.kind !== 'player') fail('TOKEN_ERROR', { reason: 'not a player token' });
  return verified.value;
}

async function playerRef(ctx: Ctx, caller: LobbyCaller, player: PlayerGrant): Promise<PlayerRef> {
  if (player.namespaceId !== caller.namespaceId || player.dev === true) fail('MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY');
  await knownLobby(ctx, caller);
  return {
    ...caller,
    playerId: player.playerId,
    issuedAt: player.issuedAt,
    ...(player.lobbyId === caller.lobbyId ? {} : { playerLobbyId: player.lobbyId }),
  };
}

async function playerEvent(ctx: Ctx, kind: 'connected' | 'disconnected'): Promise<unknown> {
  const caller = await requireLobby(ctx);
  const player = await playerToken(ctx);
  if (caller.kind === 'dev') {
    if (player.dev !== true || player.namespaceId !== caller.grant.namespaceId) fail('TOKEN_ERROR', { reason: 'not a development player token of this namespace' });
    return {};
  }
  const ref = await playerRef(ctx, caller, player);
  const mm = ctx.services.matchmaker;
  return done(kind === 'connected' ? await mm.playerConnected(ref) : await mm.playerDisconnected(ref));
}

export function registerMatchmakerLobbySide(router: Router<Handler>): void {
  router
    .add('POST', '/matchmaker/lobbies/ready', ready)
    .add('PUT', '/matchmaker/lobbies/closed', setClosed)
    .add('PUT', '/matchmaker/lobbies/state', setState)
    .add('GET', '/matchmaker/lobbies/{lobby_id:uuid}/state', getState)
    .add('POST', '/matchmaker/players/connected', (ctx) => playerEvent(ctx, 'connected'))
    .add('POST', '/matchmaker/players/disconnected', (ctx) => playerEvent(ctx, 'disconnected'));
}
