/**
 * Every route of the API, and the share of them the lobbies' listener serves. Lobby containers
 * reach Tavern at their network's gateway (`RIVET_API_ENDPOINT`); there Tavern answers the
 * matchmaker API only (`/matchmaker/…`: lobby ready, closed and state, players connected and
 * disconnected, and the player-facing find, join, create, list, regions and statistics). The cloud
 * API, the admin calls, the dashboard, uploads, `/health` and `/metrics` are 404 `API_NOT_FOUND`
 * there, as a path that does not exist.
 */
import type { Handler } from '../context.js';
import type { Route } from '../router.js';
import { Router } from '../router.js';
import { registerDashboard } from './dashboard.js';
import { registerDemand } from './demand.js';
import { registerDevices } from './devices.js';
import { registerDomains } from './domains.js';
import { registerGames } from './games.js';
import { registerGameTokens } from './game-tokens.js';
import { registerCloudLobbies } from './lobbies-cloud.js';
import { registerMatchmakerInfo } from './mm-info.js';
import { registerMatchmakerLobbies } from './mm-lobbies.js';
import { registerMatchmakerLobbySide } from './mm-lobby-side.js';
import { registerNamespaceTokens } from './namespace-tokens.js';
import { registerNamespaces } from './namespaces.js';
import { registerNodes } from './nodes.js';
import { registerOps } from './ops.js';
import { registerPreview } from './preview.js';
import { registerUploads } from './uploads.js';
import { registerVersions } from './versions.js';

/**
 * The whole API, as the public listener serves it.
 *
 * @example
 * buildRouter().match('GET', '/cloud/bootstrap').kind; // 'found'
 */
export const buildRouter = (): Router<Handler> => {
  const router = new Router<Handler>();
  for (const register of [
    registerOps, registerGames, registerGameTokens, registerNamespaces, registerNamespaceTokens, registerDomains, registerVersions, registerCloudLobbies,
    registerUploads, registerDevices, registerMatchmakerLobbies, registerMatchmakerLobbySide, registerMatchmakerInfo, registerDashboard,
    registerDemand, registerPreview, registerNodes,
  ]) register(router);
  return router;
};

/**
 * Whether the lobbies' listener serves a route: the matchmaker API only.
 *
 * @example
 * isLobbyRoute({ method: 'POST', pattern: '/matchmaker/lobbies/ready', handler }); // true
 * isLobbyRoute({ method: 'GET', pattern: '/metrics', handler }); // false
 */
export const isLobbyRoute = (route: Route<Handler>): boolean => route.pattern.startsWith('/matchmaker/');
