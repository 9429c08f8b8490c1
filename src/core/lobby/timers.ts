import { milliseconds } from 'date-fns';
import type { Lobby } from './lobby.js';

/** How long a stopping lobby's container gets before Tavern forces it and frees its ports. */
export const STOP_GRACE_MS = milliseconds({ seconds: 30 });
/** How long a stopped lobby stays in the working set (join answers `LOBBY_STOPPED` meanwhile). */
export const STOPPED_RETENTION_MS = milliseconds({ minutes: 10 });

/**
 * When `tick` acts on the lobby's lifecycle: its ready deadline while starting, the end of the stop
 * grace while stopping, the end of retention once stopped; undefined while ready.
 *
 * @example
 * lifecycleDue(startingLobby) // startingLobby.readyDeadline
 */
export const lifecycleDue = (lobby: Lobby): number | undefined => {
  const lc = lobby.lifecycle;
  switch (lc.status) {
    case 'creating':
      return lobby.readyDeadline;
    case 'ready':
      return undefined;
    case 'stopping':
      return lc.stoppingAt + STOP_GRACE_MS;
    case 'stopped':
      return lc.stoppedAt + STOPPED_RETENTION_MS;
  }
};

/**
 * Whether a seat of this lobby has a timer `tick` checks: a reserved seat (its connect window), or
 * any seat under the mode's `player_max_lifetime`.
 *
 * @example
 * hasSeatTimer(lobby) // true while a player has not connected yet
 */
export const hasSeatTimer = (lobby: Lobby): boolean =>
  lobby.playerCount > lobby.connectedCount || (lobby.playerCount > 0 && lobby.timeouts.playerMaxLifetimeMs !== undefined);
