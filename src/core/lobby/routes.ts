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

/**
 * The game-proxy hostname of a lobby's port (wire.md §5.1): `<lobby>-<label>.lobby.<region>.<job domain>`,
 * lowercase (hostnames compare case-insensitively; the proxy looks them up lowercased).
 *
 * @example
 * routeHostname({ lobbyId: 'l1', label: 'default', region: 'local' }, 'example.test') // 'l1-default.lobby.local.example.test'
 */
export const routeHostname = (route: Pick<ProxyRoute, 'lobbyId' | 'label' | 'region'>, jobDomain: string): string =>
  `${route.lobbyId}-${route.label}.lobby.${route.region}.${jobDomain}`.toLowerCase();
