import { type Admission, type Credentials, actionGate, passGates, refusedAfterGates, rejected } from '../admission/gate.js';
import type { Ctx } from '../context.js';
import { matchError } from '../errors.js';
import { stoppedRefusal } from '../lobby/why.js';
import { Tx } from '../tx.js';
import type { World } from '../world.js';
import { currentVersion, namespaceOf } from '../world.js';
import type { Client } from './request.js';
import { reserveSeats, type Seat } from './seat.js';
import { optional } from '../optional.js';

export interface JoinCommand extends Credentials {
  readonly namespaceId: string;
  readonly lobbyId: string;
  /** One fresh id per seat. */
  readonly playerIds: readonly string[];
  readonly client: Client;
  /** The lobby's state JSON (for the verification payload). */
  readonly lobbyState?: unknown;
}

/**
 * `POST /matchmaker/lobbies/join`: a direct join by lobby id, bounded by `max_players_direct`.
 * Closed and private lobbies can be joined by id; outdated ones too (their own version's rules
 * apply). An unknown id is `MATCHMAKER_LOBBY_NOT_FOUND` (Rivet failed internally there).
 *
 * @example
 * join(world, { namespaceId, lobbyId, playerIds: [pid], client }, { now, seed })
 */
export const join = (world: World, cmd: JoinCommand, ctx: Ctx): Admission<Seat> => {
  const ns = namespaceOf(world, cmd.namespaceId);
  const lobby = ns.lobbies.get(cmd.lobbyId);
  if (lobby === undefined) return rejected(matchError('MATCHMAKER_LOBBY_NOT_FOUND', undefined, { path: ['lobby_id'] }));
  const stopped = stoppedRefusal(lobby);
  if (stopped !== undefined) return rejected(stopped);
  const version = ns.versions.get(lobby.versionId);
  const mode = version?.modes.get(lobby.gameMode);
  if (version === undefined || mode === undefined) throw new Error(`lobby ${lobby.id} lost its version or mode`);
  const disabled = actionGate(mode, 'join');
  if (disabled) return rejected(disabled);
  if (cmd.playerIds.length === 0) throw new Error('join: at least one player id is required');
  const tx = new Tx(world, ns, ctx.now);
  const payload = {
    namespaceId: ns.id,
    kind: 'Join' as const,
    client: cmd.client,
    verificationData: cmd.verificationData,
    lobby,
    lobbyState: cmd.lobbyState,
    lobbyConfig: lobby.lobbyConfig,
    tags: lobby.tags,
    ...optional('dynamicMaxPlayers', lobby.dynamicMaxPlayers),
    party: cmd.playerIds.length > 1,
  };
  const stop = passGates(tx, {
    version,
    current: currentVersion(ns) ?? version,
    client: cmd.client,
    seats: cmd.playerIds.length,
    credentials: cmd,
    verify: [{ mode, payload }],
    action: 'join',
  });
  if (stop) return stop;
  if (lobby.playerCount + cmd.playerIds.length > lobby.maxPlayers.direct) {
    return refusedAfterGates(tx, matchError('MATCHMAKER_LOBBY_FULL'));
  }
  return { kind: 'admitted', decision: tx.commit(reserveSeats(tx, lobby, cmd.playerIds, cmd.client, false)) };
};
