import { releaseLobbyPorts } from '../ports/index.js';
import type { Tx } from '../tx.js';
import { isActive } from './flags.js';
import { type Lobby, reviseLobby, type StopReason } from './lobby.js';
import { proxyRoutes } from './routes.js';
import { lobbyStopped, stopWhy } from './why.js';
import { optional } from '../optional.js';

const FAILURES: ReadonlySet<StopReason> = new Set(['ready-timeout', 'crashed', 'start-failed', 'lost']);

/**
 * Begin stopping an active lobby: it leaves routing, every player is removed (a seat still waiting
 * for the lobby to be ready fails with `MATCHMAKER_LOBBY_STOPPED`, naming the lobby and the
 * reason), its proxy routes are unbound, its container is asked to stop and its log says why.
 * Its ports stay held until the container is gone. `exitCode`: its container's, when it is gone
 * already.
 *
 * @example
 * beginStop(tx, lobby, 'idle');
 */
export const beginStop = (tx: Tx, lobby: Lobby, reason: StopReason, exitCode?: number): Lobby => {
  if (!isActive(lobby)) return lobby;
  const readyAt = lobby.lifecycle.status === 'ready' ? lobby.lifecycle.readyAt : undefined;
  const next = reviseLobby(lobby, {
    lifecycle: { status: 'stopping', ...optional('readyAt', readyAt), stoppingAt: tx.now, reason },
  });
  tx.putLobby(next);
  const namespaceId = lobby.namespaceId;
  for (const seated of tx.playersOf(lobby.id)) {
    const player = tx.removePlayer(lobby.id, seated.id);
    if (player === undefined) continue;
    const playerId = player.id;
    const wasConnected = player.status === 'connected';
    tx.emit({ type: 'player-removed', at: tx.now, namespaceId, playerId, lobbyId: lobby.id, wasConnected, reason: 'lobby-stopped' });
    if (readyAt === undefined) {
      tx.emit({ type: 'seat-failed', at: tx.now, namespaceId, playerId, lobbyId: lobby.id, error: lobbyStopped(lobby.id, reason, exitCode) });
    }
  }
  for (const route of proxyRoutes(lobby)) tx.perform({ type: 'unbind-route', route });
  tx.perform({ type: 'stop-lobby', lobbyId: lobby.id, region: lobby.region, reason, force: false });
  tx.perform({ type: 'append-log', lobbyId: lobby.id, at: tx.now, line: `stopping: ${stopWhy(reason, lobby, tx.now, exitCode)}` });
  tx.emit({ type: 'lobby-stopping', at: tx.now, namespaceId, lobbyId: lobby.id, reason });
  return tx.lobby(lobby.id) ?? next;
};

/**
 * The container is gone: mark the lobby stopped and give its ports back. Stops it first if it was
 * still active (a crash or an exit nobody asked for). `exitCode`: the container's, when the
 * runtime reported one (the `lobby-stopped` event carries it).
 *
 * @example
 * finishStop(tx, lobby, 'crashed', 1);
 */
export const finishStop = (tx: Tx, lobby: Lobby, reason: StopReason, exitCode?: number): void => {
  // Stryker disable next-line ConditionalExpression: a fast path; beginStop leaves a stopped lobby as it is, and the check below returns
  if (lobby.lifecycle.status === 'stopped') return;
  const stopping = beginStop(tx, lobby, reason, exitCode);
  if (stopping.lifecycle.status !== 'stopping') return;
  const { readyAt } = stopping.lifecycle;
  const why = stopping.lifecycle.reason;
  const failed = FAILURES.has(why);
  tx.putLobby(
    reviseLobby(stopping, {
      lifecycle: { status: 'stopped', ...optional('readyAt', readyAt), stoppedAt: tx.now, reason: why, failed },
    }),
  );
  const space = tx.portSpace(lobby.region);
  if (space !== undefined) tx.setPortSpace(lobby.region, releaseLobbyPorts(space, lobby.ports));
  tx.emit({ type: 'lobby-stopped', at: tx.now, namespaceId: lobby.namespaceId, lobbyId: lobby.id, reason: why, failed, ...optional('exitCode', exitCode) });
};
