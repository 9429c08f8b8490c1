import { isReady } from '../lobby/flags.js';
import type { Lobby, Player } from '../lobby/lobby.js';
import type { Tx } from '../tx.js';
import type { Client } from './request.js';

/** Where an admitted request's players sit. `ready: false` means: wait for `seat-ready`/`seat-failed`. */
export interface Seat {
  readonly lobbyId: string;
  readonly playerIds: readonly string[];
  readonly ready: boolean;
  /** The lobby was created for this request. */
  readonly created: boolean;
}

/**
 * The connect deadline of a seat reserved now: the connect window counts from the reservation in a
 * ready lobby, and from the ready deadline in a lobby still starting (it is reset when the lobby
 * becomes ready).
 */
export const connectDeadline = (lobby: Lobby, now: number): number =>
  (isReady(lobby) ? now : lobby.readyDeadline) + lobby.timeouts.playerConnectMs;

/**
 * Reserve one seat per player id in `lobby`. The caller has checked that they fit.
 *
 * @example
 * const seat = reserveSeats(tx, lobby, ['player-1'], client, false);
 */
export const reserveSeats = (
  tx: Tx,
  lobby: Lobby,
  playerIds: readonly string[],
  client: Client,
  created: boolean,
): Seat => {
  for (const id of playerIds) {
    const player: Player = {
      id,
      lobbyId: lobby.id,
      source: client.ip,
      createdAt: tx.now,
      status: 'reserved',
      connectDeadline: connectDeadline(lobby, tx.now),
    };
    tx.addPlayer(player);
    tx.emit({ type: 'player-reserved', at: tx.now, namespaceId: lobby.namespaceId, player });
  }
  return { lobbyId: lobby.id, playerIds, ready: isReady(lobby), created };
};
