import type { GameMode, ResolvedVersion } from './config/types.js';
import type { Lobby } from './lobby/lobby.js';
import { PMap } from './pmap.js';
import type { PortSpace } from './ports/index.js';
import { createPortSpace } from './ports/index.js';
import { EMPTY_INDEX, type RoutingIndex } from './routing/index.js';

/** A namespace's matchmaker limits (wire: `namespace.config.matchmaker`). */
export interface NamespaceSettings {
  readonly lobbyCountMax: number;
  readonly maxPlayersPerClient: number;
  readonly maxPlayersPerClientVpn: number;
  readonly maxPlayersPerClientProxy: number;
  readonly maxPlayersPerClientTor: number;
  readonly maxPlayersPerClientHosting: number;
}

/** Rivet's namespace defaults (wire.md §2.2). */
export const DEFAULT_NAMESPACE_SETTINGS: NamespaceSettings = Object.freeze({
  lobbyCountMax: 128,
  maxPlayersPerClient: 8,
  maxPlayersPerClientVpn: 4,
  maxPlayersPerClientProxy: 2,
  maxPlayersPerClientTor: 2,
  maxPlayersPerClientHosting: 2,
});

/** A published version with its game modes indexed by name. */
export interface Version {
  readonly id: string;
  readonly config: ResolvedVersion;
  readonly modes: ReadonlyMap<string, GameMode>;
  /** Per game mode, the id of its lobby group (the wire's `lobby_group_id`, `game_mode_id`). */
  readonly lobbyGroupIds: ReadonlyMap<string, string>;
}

/** Per client address and namespace: the last captcha success and requests since. */
export interface CaptchaRecord {
  readonly verifiedAt: number;
  readonly requestsSince: number;
}

export interface NamespaceState {
  readonly id: string;
  readonly settings: NamespaceSettings;
  readonly currentVersionId?: string;
  /** The current version and every older one that still has lobbies. */
  readonly versions: PMap<string, Version>;
  /** Every lobby not yet forgotten; each holds its own players. */
  readonly lobbies: PMap<string, Lobby>;
  readonly routing: RoutingIndex;
  /** Players holding a seat, per client address. */
  readonly sources: PMap<string, number>;
  readonly captcha: PMap<string, CaptchaRecord>;
  /** Lobbies creating or ready (what `lobby_count_max` bounds). */
  readonly activeLobbies: number;
  /** Per lobby starting, stopping or stopped, when `tick` acts on it (`lifecycleDue`). */
  readonly timedLobbies: PMap<string, number>;
  /** Ids of the lobbies holding a seat `tick` checks (`hasSeatTimer`): reserved, or under a lifetime. */
  readonly seatTimedLobbies: PMap<string, 1>;
  /** The active lobbies no player holds a seat in, as they stand, by id: what the idle reconciliation plans over. */
  readonly idleLobbies: PMap<string, Lobby>;
}

export interface RegionInfo {
  /** The region name id used on the wire (e.g. `local`, `lnd-atl`). */
  readonly id: string;
  readonly displayName: string;
  readonly provider: string;
  readonly coords?: { readonly latitude: number; readonly longitude: number };
}

/**
 * Everything the matchmaker decides over: the operator's regions, every namespace, and one port
 * space per region (proxied and host ports are per host, shared by all namespaces).
 */
export interface World {
  /** In the operator's order: the fallback order when a client gives no region and no location. */
  readonly regions: readonly RegionInfo[];
  readonly namespaces: PMap<string, NamespaceState>;
  readonly ports: PMap<string, PortSpace>;
}

/** The region Tavern runs when the operator configures none. */
export const LOCAL_REGION: RegionInfo = Object.freeze({ id: 'local', displayName: 'Local', provider: 'Tavern' });

/**
 * @example
 * const world = createWorld([LOCAL_REGION]);
 */
export const createWorld = (regions: readonly RegionInfo[] = [LOCAL_REGION]): World => ({
  regions,
  namespaces: PMap.empty(),
  ports: PMap.from(regions.map((r) => [r.id, createPortSpace()] as const)),
});

/** A namespace with no version yet. */
export const emptyNamespace = (id: string, settings: NamespaceSettings = DEFAULT_NAMESPACE_SETTINGS): NamespaceState => ({
  id,
  settings,
  versions: PMap.empty(),
  lobbies: PMap.empty(),
  routing: EMPTY_INDEX,
  sources: PMap.empty(),
  captcha: PMap.empty(),
  activeLobbies: 0,
  timedLobbies: PMap.empty(),
  seatTimedLobbies: PMap.empty(),
  idleLobbies: PMap.empty(),
});

/**
 * Index a resolved version's game modes by name. Lobby group ids are fresh ids minted by the
 * caller (one per mode); without them they are derived as `<version id>/<mode>`.
 *
 * @example
 * makeVersion('v1', resolved, { default: '4c1e…' })
 */
export const makeVersion = (
  id: string,
  config: ResolvedVersion,
  lobbyGroupIds: Readonly<Record<string, string>> = {},
): Version => ({
  id,
  config,
  modes: new Map(config.gameModes.map((m) => [m.name, m])),
  lobbyGroupIds: new Map(config.gameModes.map((m) => [m.name, lobbyGroupIds[m.name] ?? `${id}/${m.name}`])),
});

/** The current version of a namespace, if it has one. */
export const currentVersion = (ns: NamespaceState): Version | undefined =>
  ns.currentVersionId === undefined ? undefined : ns.versions.get(ns.currentVersionId);

/**
 * The namespace with this id. Callers check existence first (an unknown namespace is a 404 at the
 * edge), so a miss here is a bug and throws.
 */
export const namespaceOf = (world: World, id: string): NamespaceState => {
  const ns = world.namespaces.get(id);
  if (ns === undefined) throw new Error(`unknown namespace ${id}: the caller checks it exists`);
  return ns;
};
