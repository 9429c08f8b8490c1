import { matchError } from '../errors.js';
import { releaseLobbyPorts } from '../ports/index.js';
import type { Tx } from '../tx.js';
import { isActive } from './flags.js';
import { type Lobby, reviseLobby, type StopReason } from './lobby.js';
import { proxyRoutes } from './routes.js';
import { optional } from '../optional.js';

const FAILURES: ReadonlySet<StopReason> = new Set(['ready-timeout', 'crashed', 'start-failed']);

const WHY: Readonly<Record<StopReason, string>> = {
  'ready-timeout': 'the lobby did not call ready before its ready deadline',
  idle: 'the lobby was idle above the idle_lobbies maximum',
  outdated: 'the lobby runs an outdated version and had no players',
  exited: 'the lobby process exited',
  crashed: 'the lobby process crashed',
  'start-failed': 'the lobby container could not be started',
  requested: 'the lobby was stopped on request',
};

/**
 * Begin stopping an active lobby: it leaves routing, every player is removed (a seat still waiting
 * for the lobby to be ready fails with `MATCHMAKER_LOBBY_STOPPED`), its proxy routes are unbound
 * and its container is asked to stop. Its ports stay held until the container is gone.
 *
 * @example
 * beginStop(tx, lobby, 'idle');
 */
export const beginStop = (tx: Tx, lobby: Lobby, reason: StopReason): Lobby => {
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
      tx.emit({ type: 'seat-failed', at: tx.now, namespaceId, playerId, lobbyId: lobby.id, error: matchError('MATCHMAKER_LOBBY_STOPPED') });
    }
  }
  for (const route of proxyRoutes(lobby)) tx.perform({ type: 'unbind-route', route });
  tx.perform({ type: 'stop-lobby', lobbyId: lobby.id, region: lobby.region, reason, force: false });
  tx.perform({ type: 'append-log', lobbyId: lobby.id, at: tx.now, line: `stopping: ${WHY[reason]}` });
  tx.emit({ type: 'lobby-stopping', at: tx.now, namespaceId, lobbyId: lobby.id, reason });
  return tx.lobby(lobby.id) ?? next;
};

/**
 * The container is gone: mark the lobby stopped and give its ports back. Stops it first if it was
 * still active (a crash or an exit nobody asked for).
 *
 * @example
 * finishStop(tx, lobby, 'crashed');
 */
export const finishStop = (tx: Tx, lobby: Lobby, reason: StopReason): void => {
  // Stryker disable next-line ConditionalExpression: a fast path; beginStop leaves a stopped lobby as it is, and the check below returns
  if (lobby.lifecycle.status === 'stopped') return;
  const stopping = beginStop(tx, lobby, reason);
  if (stopping.lifecycle.status !== 'stopping') return;
  const { readyAt } = stopping.lifecycle;
  const why = stopping.lifecycle.reason;
  tx.putLobby(
    reviseLobby(stopping, {
      lifecycle: {
        status: 'stopped',
        ...optional('readyAt', readyAt),
        stoppedAt: tx.now,
        reason: why,
        failed: FAILURES.has(why),
      },
    }),
  );
  const space = tx.portSpace(lobby.region);
  if (space !== undefined) tx.setPortSpace(lobby.region, releaseLobbyPorts(space, lobby.ports));
  tx.emit({ type: 'lobby-stopped', at: tx.now, namespaceId: lobby.namespaceId, lobbyId: lobby.id, reason: why, failed: FAILURES.has(why) });
};
