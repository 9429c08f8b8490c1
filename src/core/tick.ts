import { milliseconds } from 'date-fns';
import type { Ctx } from './context.js';
import { beginStop, finishStop } from './lobby/stop.js';
import { liveVersions } from './namespace.js';
import type { Player } from './lobby/lobby.js';
import { type Decision, Tx } from './tx.js';
import { namespaceOf, type World } from './world.js';

/** How long a stopping lobby's container gets before Tavern forces it and frees its ports. */
export const STOP_GRACE_MS = milliseconds({ seconds: 30 });
/** How long a stopped lobby stays in the working set (join answers `LOBBY_STOPPED` meanwhile). */
export const STOPPED_RETENTION_MS = milliseconds({ minutes: 10 });
/** How often the server and the simulator run {@link tick}. */
export const TICK_INTERVAL_MS = milliseconds({ seconds: 15 });

export interface TickSummary {
  readonly readyTimeouts: number;
  readonly connectExpired: number;
  readonly lifetimeExpired: number;
  readonly forcedStops: number;
}

/**
 * The timers of one namespace, due at `ctx.now`: lobbies not ready by their ready deadline are
 * stopped (their waiting finds fail with `MATCHMAKER_LOBBY_STOPPED`); reserved players past their
 * connect deadline are removed; players older than the mode's `player_max_lifetime` are removed
 * only when one is configured (Rivet removed everyone after 8 h); stopping lobbies past the grace
 * are forced; stopped lobbies past retention are forgotten.
 *
 * @example
 * const d = tick(world, 'ns-1', { now, seed: 0 });
 */
export const tick = (world: World, namespaceId: string, ctx: Ctx): Decision<TickSummary> => {
  const ns = namespaceOf(world, namespaceId);
  const tx = new Tx(world, ns, ctx.now);
  const now = ctx.now;
  let readyTimeouts = 0;
  let forcedStops = 0;
  for (const lobby of ns.lobbies.values()) {
    const lc = lobby.lifecycle;
    if (lc.status === 'creating' && now >= lobby.readyDeadline) {
      beginStop(tx, lobby, 'ready-timeout');
      readyTimeouts++;
    } else if (lc.status === 'stopping' && now >= lc.stoppingAt + STOP_GRACE_MS) {
      tx.perform({ type: 'stop-lobby', lobbyId: lobby.id, region: lobby.region, reason: lc.reason, force: true });
      finishStop(tx, lobby, lc.reason);
      forcedStops++;
    } else if (lc.status === 'stopped' && now >= lc.stoppedAt + STOPPED_RETENTION_MS) {
      tx.forgetLobby(lobby.id);
    }
  }
  let connectExpired = 0;
  let lifetimeExpired = 0;
  // Only lobbies with a reserved seat or a player lifetime can have a due player: a busy namespace
  // is mostly connected players, so this skips nearly every lobby.
  const due: Player[] = [];
  for (const lobby of tx.ns.lobbies.values()) {
    const lifetime = lobby.timeouts.playerMaxLifetimeMs;
    if (lobby.playerCount === lobby.connectedCount && lifetime === undefined) continue;
    for (const player of lobby.players.values()) {
      const expired = player.status === 'reserved' && now > player.connectDeadline;
      if (expired || (lifetime !== undefined && now >= player.createdAt + lifetime)) due.push(player);
    }
  }
  for (const player of due) {
    const expired = player.status === 'reserved' && now > player.connectDeadline;
    tx.removePlayer(player.lobbyId, player.id);
    if (expired) connectExpired++;
    else lifetimeExpired++;
    tx.emit({
      type: 'player-removed',
      at: now,
      namespaceId,
      playerId: player.id,
      lobbyId: player.lobbyId,
      wasConnected: player.status === 'connected',
      reason: expired ? 'connect-expired' : 'lifetime',
    });
  }
  tx.patch({ versions: liveVersions(tx.ns) });
  return tx.commit({ readyTimeouts, connectExpired, lifetimeExpired, forcedStops });
};
