import { milliseconds } from 'date-fns';
import type { Ctx } from './context.js';
import { beginStop, finishStop } from './lobby/stop.js';
import { STOP_GRACE_MS, STOPPED_RETENTION_MS } from './lobby/timers.js';
import { liveVersions } from './namespace.js';
import type { Lobby, Player } from './lobby/lobby.js';
import type { PMap } from './pmap.js';
import { type Decision, Tx } from './tx.js';
import { namespaceOf, type NamespaceState, type World } from './world.js';

export { STOP_GRACE_MS, STOPPED_RETENTION_MS };
/** How often the server and the simulator run {@link tick}. */
export const TICK_INTERVAL_MS = milliseconds({ seconds: 15 });

export interface TickSummary {
  readonly readyTimeouts: number;
  readonly connectExpired: number;
  readonly lifetimeExpired: number;
  readonly forcedStops: number;
}

/** The lobbies of `ids` (in their order, the order of `ns.lobbies`) for which `keep(value)` holds. */
const lobbiesOf = <V>(ns: NamespaceState, ids: PMap<string, V>, keep: (value: V) => boolean): Lobby[] => {
  const out: Lobby[] = [];
  ids.forEach((value, id) => {
    if (!keep(value)) return;
    const lobby = ns.lobbies.get(id);
    if (lobby === undefined) throw new Error(`indexed lobby ${id} is not in the namespace`);
    out.push(lobby);
  });
  return out;
};

const always = (): boolean => true;

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
  // Only the lobbies whose lifecycle deadline passed, then those holding a seat with a timer (the
  // indexes keep the order of `lobbies`): a busy namespace is mostly ready lobbies whose players
  // all connected, which have neither.
  // A lobby's due time is its lifecycle deadline (`lifecycleDue`): past it, its status says what is due.
  for (const lobby of lobbiesOf(ns, ns.timedLobbies, (due) => due <= now)) {
    const lc = lobby.lifecycle;
    if (lc.status === 'creating') {
      beginStop(tx, lobby, 'ready-timeout');
      readyTimeouts++;
    } else if (lc.status === 'stopping') {
      tx.perform({ type: 'stop-lobby', lobbyId: lobby.id, region: lobby.region, reason: lc.reason, force: true });
      finishStop(tx, lobby, lc.reason);
      forcedStops++;
    } else {
      // Stopped: the only other status with a due time (a ready lobby has none).
      tx.forgetLobby(lobby.id);
    }
  }
  let connectExpired = 0;
  let lifetimeExpired = 0;
  const due: { readonly player: Player; readonly expired: boolean }[] = [];
  const after = tx.ns;
  for (const lobby of lobbiesOf(after, after.seatTimedLobbies, always)) {
    const lifetime = lobby.timeouts.playerMaxLifetimeMs;
    for (const player of lobby.players.values()) {
      const expired = player.status === 'reserved' && now > player.connectDeadline;
      if (expired || (lifetime !== undefined && now >= player.createdAt + lifetime)) due.push({ player, expired });
    }
  }
  for (const { player, expired } of due) {
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
