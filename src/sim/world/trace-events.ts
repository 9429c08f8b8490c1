import type { MatchEvent } from '../../core/events.js';

/**
 * The trace's compact form of a committed event: its type and the ids and values that matter, in
 * plain JSON with keys in sorted order (a `lobby-created` carries the lobby's placement, not the
 * whole record).
 *
 * @example
 * traceEvent({ type: 'lobby-ready', at, namespaceId: 'sim', lobbyId: 'l1' }) // { lobby: 'l1', type: 'lobby-ready' }
 */
export const traceEvent = (e: MatchEvent): Record<string, unknown> | undefined => {
  switch (e.type) {
    case 'lobby-created':
      return { lobby: e.lobby.id, mode: e.lobby.gameMode, origin: e.lobby.origin, ports: e.lobby.ports.map((p) => p.publicPort), region: e.lobby.region, type: e.type };
    case 'lobby-ready':
      return { lobby: e.lobbyId, type: e.type };
    case 'lobby-closed-set':
      return { closed: e.closed, lobby: e.lobbyId, type: e.type };
    case 'lobby-stopping':
      return { lobby: e.lobbyId, reason: e.reason, type: e.type };
    case 'lobby-stopped':
      return { failed: e.failed, lobby: e.lobbyId, reason: e.reason, type: e.type };
    case 'player-reserved':
      return { lobby: e.player.lobbyId, player: e.player.id, type: e.type };
    case 'player-connected':
      return { player: e.playerId, type: e.type };
    case 'player-removed':
      return { player: e.playerId, reason: e.reason, type: e.type };
    case 'seat-ready':
      return { player: e.playerId, type: e.type };
    case 'seat-failed':
      return { code: e.error.code, player: e.playerId, type: e.type };
    case 'version-published':
      return { type: e.type, version: e.versionId };
    case 'captcha-verified':
      return { source: e.source, type: e.type };
  }
};
