import type { ProxyRoute } from '../effects.js';
import type { Lobby } from './lobby.js';

/**
 * The game-proxy routes of a lobby: one per port proxied through the game proxy.
 *
 * @example
 * proxyRoutes(lobby).map((r) => r.publicPort) // e.g. [443, 27015]
 */
export const proxyRoutes = (lobby: Lobby): ProxyRoute[] =>
  lobby.ports.flatMap((p) =>
    p.proxy === 'game_guard' && p.publicPort !== undefined && p.hostPort !== undefined
      ? [{ lobbyId: lobby.id, region: lobby.region, label: p.label, protocol: p.protocol, publicPort: p.publicPort, hostPort: p.hostPort }]
      : [],
  );
