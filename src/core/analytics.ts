import type { MatchEvent } from './events.js';
import { isClosed, isIdle, isOutdated, isReady } from './lobby/flags.js';
import { type Lobby, reviseLobby, revisePlayer } from './lobby/lobby.js';
import { PMap } from './pmap.js';

/**
 * One element of `getAnalyticsMatchmakerLive`'s `lobbies` (camelCase; the edge renders snake_case
 * and RFC 3339).
 */
export interface LobbySummary {
  readonly lobbyId: string;
  readonly lobbyGroupId: string;
  readonly lobbyGroupNameId: string;
  readonly regionId: string;
  readonly createTs: number;
  readonly isReady: boolean;
  readonly isIdle: boolean;
  readonly isClosed: boolean;
  readonly isOutdated: boolean;
  readonly maxPlayersNormal: number;
  readonly maxPlayersDirect: number;
  readonly maxPlayersParty: number;
  /** Every player holding a seat, reserved or connected. */
  readonly totalPlayerCount: number;
  /** Players confirmed through `players/connected`. */
  readonly registeredPlayerCount: number;
}

/**
 * The summary of a lobby straight from its state, through the flag functions.
 *
 * @example
 * summarize(lobby, ns.currentVersionId).isOutdated
 */
export const summarize = (lobby: Lobby, currentVersionId: string | undefined): LobbySummary => ({
  lobbyId: lobby.id,
  lobbyGroupId: lobby.lobbyGroupId,
  lobbyGroupNameId: lobby.gameMode,
  regionId: lobby.region,
  createTs: lobby.createdAt,
  isReady: isReady(lobby),
  isIdle: isIdle(lobby),
  isClosed: isClosed(lobby),
  isOutdated: isOutdated(lobby, currentVersionId),
  maxPlayersNormal: lobby.maxPlayers.normal,
  maxPlayersDirect: lobby.maxPlayers.direct,
  maxPlayersParty: lobby.maxPlayers.party,
  totalPlayerCount: lobby.playerCount,
  registeredPlayerCount: lobby.connectedCount,
});

/** The live view built from events: the active lobbies of each namespace and its current version. */
export interface LiveAnalytics {
  readonly lobbies: PMap<string, PMap<string, Lobby>>;
  readonly currentVersion: PMap<string, string>;
}

export const EMPTY_LIVE: LiveAnalytics = Object.freeze({
  lobbies: PMap.empty<string, PMap<string, Lobby>>(),
  currentVersion: PMap.empty<string, string>(),
});

const mapLobby = (live: LiveAnalytics, namespaceId: string, lobbyId: string, f: (l: Lobby) => Lobby | undefined): LiveAnalytics => {
  const ns = live.lobbies.get(namespaceId);
  const lobby = ns?.get(lobbyId);
  if (ns === undefined || lobby === undefined) return live;
  const next = f(lobby);
  const lobbies = next === undefined ? ns.delete(lobbyId) : ns.set(lobbyId, next);
  return { lobbies: live.lobbies.set(namespaceId, lobbies), currentVersion: live.currentVersion };
};

/**
 * Fold one event into the live view. Only active lobbies are kept: a lobby leaves when it begins
 * to stop.
 *
 * @example
 * const live = events.reduce(foldLive, EMPTY_LIVE);
 */
export const foldLive = (live: LiveAnalytics, e: MatchEvent): LiveAnalytics => {
  switch (e.type) {
    case 'lobby-created': {
      const ns = live.lobbies.get(e.lobby.namespaceId) ?? PMap.empty<string, Lobby>();
      return { lobbies: live.lobbies.set(e.lobby.namespaceId, ns.set(e.lobby.id, e.lobby)), currentVersion: live.currentVersion };
    }
    case 'lobby-ready':
      return mapLobby(live, e.namespaceId, e.lobbyId, (l) => reviseLobby(l, { lifecycle: { status: 'ready', readyAt: e.at } }));
    case 'lobby-closed-set':
      return mapLobby(live, e.namespaceId, e.lobbyId, (l) => reviseLobby(l, { closed: e.closed }));
    case 'lobby-stopping':
    case 'lobby-stopped':
      return mapLobby(live, e.namespaceId, e.lobbyId, () => undefined);
    case 'player-reserved':
      return mapLobby(live, e.namespaceId, e.player.lobbyId, (l) => {
        const players = l.players.set(e.player.id, e.player);
        return reviseLobby(l, { players, playerCount: players.size });
      });
    case 'player-connected':
      return mapLobby(live, e.namespaceId, e.lobbyId, (l) => {
        const p = l.players.get(e.playerId);
        const players = p === undefined ? l.players : l.players.set(p.id, revisePlayer(p, 'connected', p.connectDeadline));
        return reviseLobby(l, { players, connectedCount: l.connectedCount + 1 });
      });
    case 'player-removed':
      return mapLobby(live, e.namespaceId, e.lobbyId, (l) => {
        const players = l.players.delete(e.playerId);
        return reviseLobby(l, { players, playerCount: players.size, connectedCount: l.connectedCount - (e.wasConnected ? 1 : 0) });
      });
    case 'version-published':
      return { lobbies: live.lobbies, currentVersion: live.currentVersion.set(e.namespaceId, e.versionId) };
    case 'seat-ready':
    case 'seat-failed':
    case 'captcha-verified':
      return live;
  }
};

/**
 * The `lobbies` of `getAnalyticsMatchmakerLive` for a namespace: every active lobby, oldest first.
 *
 * @example
 * liveSummaries(live, 'ns-1').length
 */
export const liveSummaries = (live: LiveAnalytics, namespaceId: string): LobbySummary[] => {
  const current = live.currentVersion.get(namespaceId);
  const lobbies = [...(live.lobbies.get(namespaceId)?.values() ?? [])];
  lobbies.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  return lobbies.map((l) => summarize(l, current));
};
