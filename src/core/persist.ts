/**
 * The matchmaker world as stored rows, and back. Only what cannot be derived is stored: per
 * namespace its settings, versions and captcha records; per lobby the lobby with its players.
 * Everything else (routing index, per-client seat counts, active lobby count, player counts, the
 * regions' port spaces) is rebuilt by {@link hydrateWorld}, so a store can never hold a derived
 * value that disagrees with its source. {@link diffWorld} tells a store which rows a decision
 * changed, skipping everything the two worlds share.
 */
import type { ResolvedVersion } from './config/types.js';
import { isActive } from './lobby/flags.js';
import type { Lobby, Player } from './lobby/lobby.js';
import { PMap } from './pmap.js';
import { claimLobbyPorts, createPortSpace, type PortSpace } from './ports/index.js';
import { EMPTY_INDEX, reindex } from './routing/index.js';
import {
  type CaptchaRecord,
  makeVersion,
  type NamespaceSettings,
  type NamespaceState,
  type RegionInfo,
  type Version,
  type World,
} from './world.js';

/**
 * A stored version: its resolved configuration (plain JSON) and its lobby group ids by mode.
 *
 * @example
 * const row: VersionRow = { id: 'v1', config: { gameModes: [] }, lobbyGroupIds: {} };
 */
export interface VersionRow {
  readonly id: string;
  readonly config: ResolvedVersion;
  readonly lobbyGroupIds: Readonly<Record<string, string>>;
}

/**
 * A stored captcha record of one client address.
 *
 * @example
 * const row: CaptchaRow = { source: '1.2.3.4', verifiedAt: 0, requestsSince: 3 };
 */
export interface CaptchaRow extends CaptchaRecord {
  readonly source: string;
}

/**
 * A namespace's own stored fields (its lobbies are stored one row each).
 *
 * @example
 * const row: NamespaceRow = { id: 'ns-1', settings: DEFAULT_NAMESPACE_SETTINGS, versions: [], captcha: [] };
 */
export interface NamespaceRow {
  readonly id: string;
  readonly settings: NamespaceSettings;
  readonly currentVersionId?: string;
  readonly versions: readonly VersionRow[];
  readonly captcha: readonly CaptchaRow[];
}

/**
 * A stored lobby: the lobby with its players as an array (plain JSON).
 *
 * @example
 * const doc: LobbyDoc = dehydrateLobby(lobby);
 */
export type LobbyDoc = Omit<Lobby, 'players'> & { readonly players: readonly Player[] };

/**
 * The stored form of a namespace's own fields.
 *
 * @example
 * JSON.stringify(dehydrateNamespace(namespaceOf(world, 'ns-1')));
 */
export const dehydrateNamespace = (ns: NamespaceState): NamespaceRow => ({
  id: ns.id,
  settings: ns.settings,
  ...(ns.currentVersionId === undefined ? {} : { currentVersionId: ns.currentVersionId }),
  versions: [...ns.versions.values()].map((v) => ({ id: v.id, config: v.config, lobbyGroupIds: Object.fromEntries(v.lobbyGroupIds) })),
  captcha: [...ns.captcha.entries()].map(([source, c]) => ({ source, verifiedAt: c.verifiedAt, requestsSince: c.requestsSince })),
});

/**
 * The stored form of a lobby.
 *
 * @example
 * JSON.stringify(dehydrateLobby(lobby));
 */
export const dehydrateLobby = (lobby: Lobby): LobbyDoc => ({ ...lobby, players: [...lobby.players.values()] });

/**
 * Every row of a world: one per namespace, one per lobby.
 *
 * @example
 * const { namespaces, lobbies } = dehydrateWorld(world);
 * hydrateWorld(world.regions, namespaces, lobbies); // observably `world`
 */
export const dehydrateWorld = (world: World): { readonly namespaces: NamespaceRow[]; readonly lobbies: LobbyDoc[] } => {
  const namespaces: NamespaceRow[] = [];
  const lobbies: LobbyDoc[] = [];
  for (const ns of world.namespaces.values()) {
    namespaces.push(dehydrateNamespace(ns));
    for (const lobby of ns.lobbies.values()) lobbies.push(dehydrateLobby(lobby));
  }
  return { namespaces, lobbies };
};

const hydrateLobby = (doc: LobbyDoc): Lobby => {
  let connected = 0;
  for (const p of doc.players) if (p.status === 'connected') connected++;
  const players = PMap.from(doc.players.map((p) => [p.id, p] as const));
  return { ...doc, players, playerCount: players.size, connectedCount: connected };
};

const hydrateNamespace = (row: NamespaceRow, lobbies: readonly Lobby[]): NamespaceState => {
  const versions = PMap.from(row.versions.map((v): [string, Version] => [v.id, makeVersion(v.id, v.config, v.lobbyGroupIds)]));
  let byId = PMap.empty<string, Lobby>();
  let routing = EMPTY_INDEX;
  let sources = PMap.empty<string, number>();
  let active = 0;
  for (const lobby of lobbies) {
    byId = byId.set(lobby.id, lobby);
    routing = reindex(routing, undefined, lobby, row.currentVersionId);
    if (isActive(lobby)) active++;
    for (const p of lobby.players.values()) sources = sources.set(p.source, (sources.get(p.source) ?? 0) + 1);
  }
  return {
    id: row.id,
    settings: row.settings,
    ...(row.currentVersionId === undefined ? {} : { currentVersionId: row.currentVersionId }),
    versions,
    lobbies: byId,
    routing,
    sources,
    captcha: PMap.from(row.captcha.map((c) => [c.source, { verifiedAt: c.verifiedAt, requestsSince: c.requestsSince }] as const)),
    activeLobbies: active,
  };
};

/**
 * The world these rows describe, with everything derived rebuilt: versions (`makeVersion`), routing
 * index, per-client seat counts, active lobby counts, lobby player counts, and one port space per
 * region holding exactly the ports of its lobbies that have not stopped (lobbies of a region no
 * longer configured hold none). Rows that contradict each other are corruption and throw: a lobby
 * of an unknown namespace, or a port held by two lobbies.
 *
 * @example
 * const world = hydrateWorld([LOCAL_REGION], namespaceRows, lobbyDocs);
 */
export const hydrateWorld = (regions: readonly RegionInfo[], namespaces: readonly NamespaceRow[], lobbies: readonly LobbyDoc[]): World => {
  const grouped = new Map<string, Lobby[]>(namespaces.map((row) => [row.id, []]));
  const spaces = new Map<string, PortSpace>(regions.map((r) => [r.id, createPortSpace()]));
  for (const doc of lobbies) {
    const group = grouped.get(doc.namespaceId);
    if (group === undefined) throw new Error(`stored lobby ${doc.id} belongs to unknown namespace ${doc.namespaceId}`);
    const lobby = hydrateLobby(doc);
    group.push(lobby);
    const space = spaces.get(lobby.region);
    if (space === undefined || lobby.lifecycle.status === 'stopped') continue;
    const claimed = claimLobbyPorts(space, lobby.ports);
    if (!claimed.ok) {
      throw new Error(`stored lobby ${lobby.id} holds ${claimed.error.transport} port ${claimed.error.port} of region ${lobby.region}, already held or outside its pools`);
    }
    spaces.set(lobby.region, claimed.value);
  }
  return {
    regions,
    namespaces: PMap.from(namespaces.map((row) => [row.id, hydrateNamespace(row, grouped.get(row.id) ?? [])] as const)),
    ports: PMap.from(spaces),
  };
};

/**
 * What changed in one namespace between two worlds.
 *
 * @example
 * for (const lobby of change.upserted) save(lobby);
 */
export interface NamespaceChange {
  readonly id: string;
  /** The namespace after; undefined when it is gone. */
  readonly after: NamespaceState | undefined;
  /** Its own row (settings, current version, versions, captcha) differs, or it was added or removed. */
  readonly rowChanged: boolean;
  /** Lobbies added or replaced, as they are after. */
  readonly upserted: readonly Lobby[];
  /** Ids of lobbies gone. */
  readonly deleted: readonly string[];
}

/**
 * The rows two worlds differ by: one entry per namespace whose state is not the same object.
 *
 * @example
 * const { namespaces } = diffWorld(before, decision.world);
 */
export interface WorldDiff {
  readonly namespaces: readonly NamespaceChange[];
}

const rowDiffers = (a: NamespaceState, b: NamespaceState): boolean =>
  a.settings !== b.settings || a.currentVersionId !== b.currentVersionId || a.versions !== b.versions || a.captcha !== b.captcha;

/**
 * Which namespace rows and lobby rows differ between `before` and `after` (compared by reference,
 * skipping every subtree the two worlds share, so a decision's diff costs about what the decision
 * changed). Regions and port spaces are derived, never stored, so they are not compared.
 *
 * @example
 * const diff = diffWorld(world, decision.world);
 */
export const diffWorld = (before: World, after: World): WorldDiff => {
  const changes: NamespaceChange[] = [];
  before.namespaces.diff(after.namespaces, (id, a, b) => {
    const upserted: Lobby[] = [];
    const deleted: string[] = [];
    (a?.lobbies ?? PMap.empty<string, Lobby>()).diff(b?.lobbies ?? PMap.empty<string, Lobby>(), (lobbyId, _, lobby) => {
      if (lobby === undefined) deleted.push(lobbyId);
      else upserted.push(lobby);
    });
    const rowChanged = a === undefined || b === undefined || rowDiffers(a, b);
    changes.push({ id, after: b, rowChanged, upserted, deleted });
  });
  return { namespaces: changes };
};
