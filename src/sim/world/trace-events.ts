import type { MatchEvent } from '../../core/events.js';

/**
 * The trace's compact form of a committed event: its type and the ids and values that matter, in
 * plain JSON (a `lobby-created` carries the lobby's placement, not the whole record).
 *
 * @example
 * traceEvent({ type: 'lobby-ready', at, namespaceId: 'sim', lobbyId: 'l1' }) // { type: 'lobby-ready', lobby: 'l1' }
 */
export const traceEvent = (e: MatchEvent): Record<string, unknown> | undefined => {
  switch (e.type) {
    case 'lobby-created':
      return { type: e.type, lobby: e.lobby.id, mode: e.lobby.gameMode, region: e.lobby.region, origin: e.lobby.origin, ports: e.lobby.ports.map((p) => p.publicPort) };
    case 'lobby-ready':
      return { type: e.type, lobby: e.lobbyId };
    case 'lobby-closed-set':
      return { type: e.type, lobby: e.lobbyId, closed: e.closed };
    case 'lobby-stopping':
      return { type: e.type, lobby: e.lobbyId, reason: e.reason };
    case 'lobby-stopped':
      return { type: e.type, lobby: e.lobbyId, reason: e.reason, failed: e.failed };
    case 'player-reserved':
      return { type: e.type, player: e.player.id, lobby: e.player.lobbyId };
    case 'player-connected':
      return { type: e.type, player: e.playerId };
    case 'player-removed':
      return { type: e.type, player: e.playerId, reason: e.reason };
    case 'seat-ready':
      return { type: e.type, player: e.playerId };
    case 'seat-failed':
      return { type: e.type, player: e.playerId, code: e.error.code };
    case 'version-published':
      return { type: e.type, version: e.versionId };
    case 'captcha-verified':
      return { type: e.type, source: e.source };
  }
};
