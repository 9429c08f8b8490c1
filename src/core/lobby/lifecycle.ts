import type { CaptchaCheck, CaptchaVerdict } from '../admission/captcha.js';
import type { Ctx } from '../context.js';
import { type MatchError, matchError } from '../errors.js';
import { err, ok, type Result } from '../result.js';
import { type Decision, Tx } from '../tx.js';
import { namespaceOf, type World } from '../world.js';
import { type Lobby, revisePlayer, reviseLobby, type StopReason } from './lobby.js';
import { planIdle } from '../idle.js';
import { isIdle } from './flags.js';
import { beginStop, finishStop } from './stop.js';
import { stoppedRefusal } from './why.js';

export interface LobbyRef {
  readonly namespaceId: string;
  readonly lobbyId: string;
}

type Step = Result<Decision<undefined>, MatchError>;

const withLobby = (world: World, ref: LobbyRef, ctx: Ctx, f: (tx: Tx, lobby: Lobby) => MatchError | undefined): Step => {
  const tx = new Tx(world, namespaceOf(world, ref.namespaceId), ctx.now);
  const lobby = tx.lobby(ref.lobbyId);
  if (lobby === undefined) return err(matchError('MATCHMAKER_LOBBY_NOT_FOUND'));
  const problem = f(tx, lobby);
  return problem ? err(problem) : ok(tx.commit(undefined));
};

/**
 * `POST /matchmaker/lobbies/ready`: the first call marks the lobby ready, restarts the connect
 * window of every reserved player and releases the finds waiting on it (`seat-ready`); later
 * calls change nothing. A stopping or stopped lobby answers `MATCHMAKER_LOBBY_STOPPED`.
 *
 * @example
 * const r = lobbyReady(world, { namespaceId, lobbyId }, { now, seed: 0 });
 */
export const lobbyReady = (world: World, ref: LobbyRef, ctx: Ctx): Step =>
  withLobby(world, ref, ctx, (tx, lobby) => {
    const stopped = stoppedRefusal(lobby);
    if (stopped !== undefined) return stopped;
    if (lobby.lifecycle.status === 'ready') return undefined;
    tx.putLobby(reviseLobby(lobby, { lifecycle: { status: 'ready', readyAt: tx.now } }));
    tx.emit({ type: 'lobby-ready', at: tx.now, namespaceId: lobby.namespaceId, lobbyId: lobby.id });
    for (const player of tx.playersOf(lobby.id)) {
      if (player.status !== 'reserved') continue;
      tx.updatePlayer(revisePlayer(player, player.status, tx.now + lobby.timeouts.playerConnectMs));
      tx.emit({ type: 'seat-ready', at: tx.now, namespaceId: lobby.namespaceId, playerId: player.id, lobbyId: lobby.id });
    }
    return undefined;
  });

/**
 * `PUT /matchmaker/lobbies/closed`: close or reopen routing. A closed lobby gets no finds but can
 * still be joined by id; it keeps running.
 *
 * @example
 * setClosed(world, { namespaceId, lobbyId, closed: true }, ctx)
 */
export const setClosed = (world: World, ref: LobbyRef & { readonly closed: boolean }, ctx: Ctx): Step =>
  withLobby(world, ref, ctx, (tx, lobby) => {
    if (lobby.closed === ref.closed) return undefined;
    tx.putLobby(reviseLobby(lobby, { closed: ref.closed }));
    tx.emit({ type: 'lobby-closed-set', at: tx.now, namespaceId: lobby.namespaceId, lobbyId: lobby.id, closed: ref.closed });
    return undefined;
  });

/**
 * Ask a lobby to stop (idle plan, ready timeout, an operator). Stopping twice changes nothing.
 *
 * @example
 * stopLobby(world, { namespaceId, lobbyId, reason: 'requested' }, ctx)
 */
export const stopLobby = (world: World, ref: LobbyRef & { readonly reason: StopReason }, ctx: Ctx): Step =>
  withLobby(world, ref, ctx, (tx, lobby) => {
    beginStop(tx, lobby, ref.reason);
    return undefined;
  });

/**
 * The runtime reports the lobby's container gone (it exited, crashed, could not start, or its host
 * was lost), with its exit code when it has one. A container that goes away before its lobby
 * called ready failed to start, unless its host was lost: that is no fault of its version, so it
 * never counts toward the version's start back-off.
 *
 * @example
 * lobbyExited(world, { namespaceId, lobbyId, reason: 'crashed', exitCode: 1 }, ctx)
 */
export const lobbyExited = (
  world: World,
  ref: LobbyRef & { readonly reason: 'exited' | 'crashed' | 'start-failed' | 'lost'; readonly exitCode?: number },
  ctx: Ctx,
): Step =>
  withLobby(world, ref, ctx, (tx, lobby) => {
    finishStop(tx, lobby, lobby.lifecycle.status === 'creating' && ref.reason !== 'lost' ? 'start-failed' : ref.reason, ref.exitCode);
    return undefined;
  });

export interface PlayerRef extends LobbyRef {
  readonly playerId: string;
  /** The lobby the player's token was issued for, when it differs from the calling lobby's. */
  readonly playerLobbyId?: string;
  /** When the player's token was issued: tells an expired registration from a removed player. */
  readonly issuedAt?: number;
}


/**
 * `POST /matchmaker/players/connected` from the lobby the player was seated in. Tavern checks the
 * connect deadline (extended when the lobby became ready), where Rivet checked the reservation time.
 *
 * @example
 * playerConnected(world, { namespaceId, lobbyId, playerId }, ctx)
 */
export const playerConnected = (world: World, ref: PlayerRef, ctx: Ctx): Step =>
  withLobby(world, ref, ctx, (tx, lobby) => {
    // A lobby never touches another lobby's players (Rivet freed the other seat here).
    if (ref.playerLobbyId !== undefined && ref.playerLobbyId !== lobby.id) return matchError('MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY');
    const player = lobby.players.get(ref.playerId);
    if (player === undefined) {
      const expired = ref.issuedAt !== undefined && tx.now > ref.issuedAt + lobby.timeouts.playerConnectMs;
      return matchError(expired ? 'MATCHMAKER_PLAYER_REGISTRATION_EXPIRED' : 'MATCHMAKER_PLAYER_REMOVED');
    }
    if (player.status === 'connected') return matchError('MATCHMAKER_PLAYER_ALREADY_CONNECTED');
    if (tx.now > player.connectDeadline) return matchError('MATCHMAKER_PLAYER_REGISTRATION_EXPIRED');
    tx.updatePlayer(revisePlayer(player, 'connected', player.connectDeadline));
    tx.emit({ type: 'player-connected', at: tx.now, namespaceId: lobby.namespaceId, playerId: player.id, lobbyId: lobby.id });
    return undefined;
  });

/** Frees a player's seat (nothing if it holds none). */
const removeSeat = (tx: Tx, lobby: Lobby, playerId: string): void => {
  const player = tx.removePlayer(lobby.id, playerId);
  if (player === undefined) return;
  tx.emit({
    type: 'player-removed',
    at: tx.now,
    namespaceId: lobby.namespaceId,
    playerId: player.id,
    lobbyId: lobby.id,
    wasConnected: player.status === 'connected',
    reason: 'disconnected',
  });
};

/**
 * `POST /matchmaker/players/disconnected`: free the player's seat. Idempotent; a lobby may only
 * remove its own players.
 *
 * @example
 * playerDisconnected(world, { namespaceId, lobbyId, playerId }, ctx)
 */
export const playerDisconnected = (world: World, ref: PlayerRef, ctx: Ctx): Step =>
  withLobby(world, ref, ctx, (tx, lobby) => {
    if (ref.playerLobbyId !== undefined && ref.playerLobbyId !== lobby.id) return matchError('MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY');
    removeSeat(tx, lobby, ref.playerId);
    return undefined;
  });

/**
 * A find, join or create gave up waiting for its seat's lobby to become ready (the server's seat
 * wait): the seat is given back. A lobby still not ready that the idle plan now stops (with the
 * default `idle_lobbies.max` of 0, any lobby left without players) stops as `ready-timeout`, not
 * as idle: its game server never called ready, and its log says what it must do. A lobby the
 * idle pool keeps waits for its own ready deadline.
 *
 * @example
 * seatWaitExpired(world, { namespaceId, lobbyId, playerId }, ctx)
 */
export const seatWaitExpired = (world: World, ref: PlayerRef, ctx: Ctx): Step =>
  withLobby(world, ref, ctx, (tx, lobby) => {
    removeSeat(tx, lobby, ref.playerId);
    const left = tx.lobby(lobby.id);
    if (left?.lifecycle.status === 'creating' && isIdle(left) && planIdle(tx.ns).stop.includes(left.id)) beginStop(tx, left, 'ready-timeout');
    return undefined;
  });

/**
 * The captcha provider's verdict on a {@link CaptchaCheck}: a success starts a new verification
 * period for the client (then repeat the request); a failure is `CAPTCHA_CAPTCHA_FAILED`.
 *
 * @example
 * recordCaptcha(world, check, { success: true }, ctx)
 */
export const recordCaptcha = (world: World, check: CaptchaCheck, verdict: CaptchaVerdict, ctx: Ctx): Step => {
  if (!verdict.success) return err(matchError('CAPTCHA_CAPTCHA_FAILED', { reason: verdict.reason }, { path: ['captcha'] }));
  const ns = namespaceOf(world, check.namespaceId);
  const tx = new Tx(world, ns, ctx.now);
  tx.patch({ captcha: ns.captcha.set(check.remoteIp, { verifiedAt: ctx.now, requestsSince: 0 }) });
  tx.emit({ type: 'captcha-verified', at: ctx.now, namespaceId: ns.id, source: check.remoteIp });
  return ok(tx.commit(undefined));
};
