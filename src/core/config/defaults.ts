/**
 * Every default and limit of the version configuration, as frozen constants. The defaults are
 * Rivet's (`svc/pkg/mm/util/src/defaults.rs`, wire.md §2.1); the timeouts are Tavern's.
 */
import { milliseconds } from 'date-fns';
import type {
  IdleLobbies,
  NetworkMode,
  PortProtocol,
  PortRange,
  ProxyKind,
  ResolvedAction,
  ResolvedCreateAction,
} from './types.js';

export const DEFAULT_TIER = 'basic-1d1';
export const DEFAULT_IDLE_LOBBIES: IdleLobbies = Object.freeze({ min: 0, max: 0 });
export const DEFAULT_MAX_PLAYERS = 32;
export const DEFAULT_NETWORK_MODE: NetworkMode = 'bridge';
export const DEFAULT_PORT_PROTOCOL: PortProtocol = 'https';
export const DEFAULT_PROXY_KIND: ProxyKind = 'game_guard';

export const DEFAULT_MODE_FLAGS = Object.freeze({
  listable: true,
  taggable: false,
  allowDynamicMaxPlayers: false,
} as const);

/** Find and join stay enabled when a mode does not configure them. */
export const DEFAULT_FIND_ACTION: ResolvedAction = Object.freeze({ enabled: true, identityRequirement: 'none' });
export const DEFAULT_JOIN_ACTION: ResolvedAction = Object.freeze({ enabled: true, identityRequirement: 'none' });
/** Create is disabled unless configured; when configured, private lobbies are on and public ones off. */
export const DEFAULT_CREATE_ACTION: ResolvedCreateAction = Object.freeze({
  enabled: false,
  enablePublic: false,
  enablePrivate: true,
  identityRequirement: 'none',
});

/** Tavern: a lobby must call ready within this long (Rivet's fixed 5 min). */
export const DEFAULT_LOBBY_READY_MS = milliseconds({ minutes: 5 });
/** Tavern: a reserved player must connect within this long (Rivet's fixed 2 min). */
export const DEFAULT_PLAYER_CONNECT_MS = milliseconds({ minutes: 2 });

/** Rivet's tier catalogue (cores numerator/denominator of a 4-core node). */
export const TIER_CATALOGUE: readonly string[] = Object.freeze([
  'basic-4d1', 'basic-2d1', 'basic-1d1', 'basic-1d2', 'basic-1d4', 'basic-1d8', 'basic-1d16',
]);

/** Ports a host-network range may use (wire.md §2.1; Rivet defect 15). */
export const HOST_PORT_RANGE: PortRange = Object.freeze({ min: 26_000, max: 31_999 });

/** Environment names the lobby container receives from the matchmaker (wire.md §5.4). */
export const RESERVED_ENV_NAMES: readonly string[] = Object.freeze([
  'RIVET_API_ENDPOINT', 'RIVET_TOKEN', 'RIVET_LOBBY_ID', 'RIVET_NAMESPACE_ID', 'RIVET_NAMESPACE_NAME',
  'RIVET_VERSION_ID', 'RIVET_VERSION_NAME', 'RIVET_GAME_MODE_ID', 'RIVET_GAME_MODE_NAME', 'RIVET_REGION_ID',
  'RIVET_REGION_NAME', 'RIVET_MAX_PLAYERS_NORMAL', 'RIVET_MAX_PLAYERS_DIRECT', 'RIVET_MAX_PLAYERS_PARTY',
  'RIVET_CPU', 'RIVET_MEMORY', 'RIVET_MEMORY_OVERSUBSCRIBE', 'RIVET_LOBBY_CONFIG', 'RIVET_LOBBY_TAGS',
  'RIVET_LOBBY_TOKEN', 'RIVET_LOBBY_GROUP_ID', 'RIVET_LOBBY_GROUP_NAME',
]);

/** The validation limits of wire.md §2.1 (lengths are UTF-8 bytes, as Rivet's `str::len`). */
export const LIMITS = Object.freeze({
  displayNameBytes: 128,
  cdnRoutes: 32,
  routePriority: 100,
  routeMiddlewares: 32,
  customHeaders: 32,
  cdnHeaderNameBytes: 512,
  cdnHeaderValueBytes: 1024,
  requestsBeforeReverify: 600,
  verificationTtlMs: milliseconds({ hours: 12 }),
  siteKeyBytes: 36,
  secretKeyBytes: 42,
  gameModes: 32,
  identBytes: 16,
  maxPlayers: 256,
  idleMin: 16,
  idleMax: 32,
  args: 64,
  argBytes: 512,
  envVars: 64,
  envKeyBytes: 64,
  envValueBytes: 512,
  ports: 16,
  portNumber: 65_535,
  verificationHeaders: 32,
} as const);
