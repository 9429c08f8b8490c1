import type { GameMode } from '../config/types.js';
import { type MatchError, matchError } from '../errors.js';
import type { Lobby, LobbyOrigin, Publicity } from '../lobby/lobby.js';
import { proxyRoutes } from '../lobby/routes.js';
import { allocateLobbyPorts, type LobbyPortAllocation, portEnv } from '../ports/index.js';
import { PMap } from '../pmap.js';
import { err, ok, type Result } from '../result.js';
import type { Rng } from '../rng.js';
import type { Tx } from '../tx.js';
import type { Version } from '../world.js';
import { optional } from '../optional.js';

export interface SpawnSpec {
  readonly lobbyId: string;
  readonly version: Version;
  readonly mode: GameMode;
  readonly region: string;
  readonly origin: LobbyOrigin;
  readonly publicity: Publicity;
  readonly tags: Readonly<Record<string, string>>;
  readonly dynamicMaxPlayers?: number;
  readonly lobbyConfig?: unknown;
}

/** The environment Tavern gives a lobby (wire.md §5.4), over the developer's own env. */
const lobbyEnv = (lobby: Lobby, spec: SpawnSpec, ports: readonly LobbyPortAllocation[]): Record<string, string> => {
  const groupId = lobby.lobbyGroupId;
  return {
    ...spec.mode.container?.env,
    RIVET_LOBBY_ID: lobby.id,
    RIVET_NAMESPACE_ID: lobby.namespaceId,
    RIVET_VERSION_ID: lobby.versionId,
    RIVET_GAME_MODE_ID: groupId,
    RIVET_GAME_MODE_NAME: lobby.gameMode,
    RIVET_LOBBY_GROUP_ID: groupId,
    RIVET_LOBBY_GROUP_NAME: lobby.gameMode,
    RIVET_REGION_ID: lobby.region,
    RIVET_REGION_NAME: lobby.region,
    RIVET_MAX_PLAYERS_NORMAL: String(lobby.maxPlayers.normal),
    RIVET_MAX_PLAYERS_DIRECT: String(lobby.maxPlayers.direct),
    RIVET_MAX_PLAYERS_PARTY: String(lobby.maxPlayers.party),
    ...(Object.keys(lobby.tags).length > 0 ? { RIVET_LOBBY_TAGS: JSON.stringify(lobby.tags) } : {}),
    ...(spec.lobbyConfig !== undefined ? { RIVET_LOBBY_CONFIG: JSON.stringify(spec.lobbyConfig) } : {}),
    ...portEnv(ports),
  };
};

/**
 * Create a lobby: check the namespace's `lobby_count_max` and the mode's region, allocate its
 * ports (all or nothing), record it, and ask for its container and its proxy routes.
 *
 * @example
 * const r = spawnLobby(tx, { lobbyId, version, mode, region: 'local', origin: 'pooled', publicity: 'public', tags: {} }, rng);
 */
export const spawnLobby = (tx: Tx, spec: SpawnSpec, rng: Rng): Result<Lobby, MatchError> => {
  const { mode, region } = spec;
  const ns = tx.ns;
  if (ns.activeLobbies >= ns.settings.lobbyCountMax) {
    return err(matchError('MATCHMAKER_TOO_MANY_LOBBIES', { max: ns.settings.lobbyCountMax }));
  }
  const regionCfg = mode.regions.find((r) => r.name === region);
  if (regionCfg === undefined) {
    return err(matchError('MATCHMAKER_REGION_NOT_ENABLED_FOR_GAME_MODE', { region, game_mode: mode.name }));
  }
  const space = tx.portSpace(region);
  if (space === undefined) return err(matchError('MATCHMAKER_REGION_NOT_FOUND', { region }));
  const container = mode.container;
  const allocated = allocateLobbyPorts(space, container?.ports ?? [], container?.networkMode ?? 'bridge', rng);
  if (!allocated.ok) return allocated;
  const d = spec.dynamicMaxPlayers;
  const created: Lobby = {
    id: spec.lobbyId,
    namespaceId: ns.id,
    versionId: spec.version.id,
    gameMode: mode.name,
    lobbyGroupId: spec.version.lobbyGroupIds.get(mode.name) ?? mode.name,
    region,
    createdAt: tx.now,
    readyDeadline: tx.now + mode.timeouts.lobbyReadyMs,
    lifecycle: { status: 'creating' },
    closed: false,
    publicity: spec.publicity,
    origin: spec.origin,
    maxPlayers: d === undefined ? mode.maxPlayers : { normal: d, direct: d, party: mode.maxPlayers.party },
    tags: spec.tags,
    ports: allocated.value.allocations,
    players: PMap.empty(),
    playerCount: 0,
    connectedCount: 0,
    timeouts: mode.timeouts,
  };
  // Optional fields last, in the order `reviseLobby` writes them (lobbies share hidden classes).
  const lobby: Lobby =
    // Stryker disable next-line ConditionalExpression: a fast path; with neither field the spread below builds the same fields
    d === undefined && spec.lobbyConfig === undefined
      ? created
      : { ...created, ...optional('dynamicMaxPlayers', d), ...optional('lobbyConfig', spec.lobbyConfig) };
  tx.setPortSpace(region, allocated.value.space);
  tx.putLobby(lobby);
  tx.emit({ type: 'lobby-created', at: tx.now, lobby });
  // Routes first: a lobby may call ready (and its players connect) before its start returns,
  // and a route bound after the start would answer 404 in that gap.
  for (const route of proxyRoutes(lobby)) tx.perform({ type: 'bind-route', route });
  tx.perform({
    type: 'start-lobby',
    lobbyId: lobby.id,
    namespaceId: ns.id,
    versionId: lobby.versionId,
    gameMode: mode.name,
    region,
    tier: regionCfg.tier,
    ...optional('imageId', container?.imageId),
    args: container?.args ?? [],
    env: lobbyEnv(lobby, spec, lobby.ports),
    networkMode: container?.networkMode ?? 'bridge',
    ports: lobby.ports,
  });
  return ok(lobby);
};
