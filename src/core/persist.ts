/**
 * The matchmaker world as stored rows, and back. Only what cannot be derived is stored: per
 * namespace its settings, versions and captcha records; per lobby its own fields; per player its
 * seat. Everything else (routing index, per-client seat counts, active lobby count, player counts,
 * the regions' port spaces) is rebuilt by {@link hydrateWorld}, so a store can never hold a derived
 * value that disagrees with its source. {@link diffWorld} tells a store which rows a decision
 * changed, skipping everything the two worlds share: a seat in a full lobby writes one player row,
 * not the lobby with all its players.
 */
import type { ResolvedVersion } from './config/types.js';
import { isActive, isIdle } from './lobby/flags.js';
import type { Lobby, Player } from './lobby/lobby.js';
import { hasSeatTimer, lifecycleDue } from './lobby/timers.js';
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
import { optional } from './optional.js';

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

/** Lobby fields derived from its players, never stored. */
type LobbyDerived = 'players' | 'playerCount' | 'connectedCount';

/**
 * A stored lobby: its own fields (plain JSON); its players are rows of their own.
 *
 * @example
 * const doc: LobbyDoc = dehydrateLobby(lobby);
 */
export type LobbyDoc = Omit<Lobby, LobbyDerived>;

/**
 * A stored player: the seat as the core holds it (plain JSON; `lobbyId` names its lobby).
 *
 * @example
 * const doc: PlayerDoc = { id: 'p', lobbyId: 'l', source: '1.2.3.4', createdAt: 0, status: 'reserved', connectDeadline: 120_000 };
 */
export type PlayerDoc = Player;

/**
 * A stored player without its key (`lobbyId`, `id`), for a store that keeps the key in columns of
 * its own: every seat writes a row, and the key twice over made the rows a third longer.
 *
 * @example
 * JSON.stringify(playerFields(player)); // '{"source":"1.2.3.4","createdAt":0,…}'
 */
export type PlayerFields = Omit<Player, 'id' | 'lobbyId'>;

export const playerFields = (player: Player): PlayerFields => {
  const { id: _id, lobbyId: _lobbyId, ...fields } = player;
  return fields;
};

/**
 * {@link playerFields} as JSON text, written out: the text `JSON.stringify(playerFields(player))`
 * gives (same members, same order), without the object in between (a group commit writes one
 * per seat). The compiler holds its fields to PlayerFields ({@link WRITTEN}).
 *
 * @example
 * playerFieldsJson(player); // '{"source":"1.2.3.4","createdAt":0,"status":"reserved","connectDeadline":120000}'
 */
export const playerFieldsJson = (p: Player): string =>
  `{"source":${JSON.stringify(p.source)},"createdAt":${JSON.stringify(p.createdAt)},"status":${JSON.stringify(p.status)},"connectDeadline":${JSON.stringify(p.connectDeadline)}}`;

/** The fields {@link playerFieldsJson} writes: a field added to Player fails to compile here until it writes it too. */
const WRITTEN: Readonly<Record<keyof PlayerFields, true>> = { source: true, createdAt: true, status: true, connectDeadline: true };
void WRITTEN;

/** The player of a row stored as {@link playerFields}. */
export const playerOf = (lobbyId: string, id: string, fields: PlayerFields): Player => ({ id, lobbyId, ...fields });

/**
 * The stored form of a namespace's own fields.
 *
 * @example
 * JSON.stringify(dehydrateNamespace(namespaceOf(world, 'ns-1')));
 */
export const dehydrateNamespace = (ns: NamespaceState): NamespaceRow => ({
  id: ns.id,
  settings: ns.settings,
  ...optional('currentVersionId', ns.currentVersionId),
  versions: [...ns.versions.values()].map((v) => ({ id: v.id, config: v.config, lobbyGroupIds: Object.fromEntries(v.lobbyGroupIds) })),
  captcha: [...ns.captcha.entries()].map(([source, c]) => ({ source, verifiedAt: c.verifiedAt, requestsSince: c.requestsSince })),
});

/**
 * The stored form of a lobby: every field but the players and their counts.
 *
 * @example
 * JSON.stringify(dehydrateLobby(lobby));
 */
export const dehydrateLobby = (lobby: Lobby): LobbyDoc => {
  const { players: _players, playerCount: _count, connectedCount: _connected, ...doc } = lobby;
  return doc;
};

/** Every row of a world. */
export interface WorldRows {
  readonly namespaces: NamespaceRow[];
  readonly lobbies: LobbyDoc[];
  readonly players: PlayerDoc[];
}

/**
 * Every row of a world: one per namespace, per lobby and per player.
 *
 * @example
 * const { namespaces, lobbies, players } = dehydrateWorld(world);
 * hydrateWorld(world.regions, namespaces, lobbies, players); // observably `world`
 */
export const dehydrateWorld = (world: World): WorldRows => {
  const namespaces: NamespaceRow[] = [];
  const lobbies: LobbyDoc[] = [];
  const players: PlayerDoc[] = [];
  for (const ns of world.namespaces.values()) {
    namespaces.push(dehydrateNamespace(ns));
    for (const lobby of ns.lobbies.values()) {
      lobbies.push(dehydrateLobby(lobby));
      for (const player of lobby.players.values()) players.push(player);
    }
  }
  return { namespaces, lobbies, players };
};

const hydrateLobby = (doc: LobbyDoc, seated: readonly Player[]): Lobby => {
  let connected = 0;
  for (const p of seated) if (p.status === 'connected') connected++;
  const players = PMap.from(seated.map((p) => [p.id, p] as const));
  return { ...doc, players, playerCount: players.size, connectedCount: connected };
};

const hydrateNamespace = (row: NamespaceRow, lobbies: readonly Lobby[]): NamespaceState => {
  const versions = PMap.from(row.versions.map((v): [string, Version] => [v.id, makeVersion(v.id, v.config, v.lobbyGroupIds)]));
  let byId = PMap.empty<string, Lobby>();
  let routing = EMPTY_INDEX;
  let sources = PMap.empty<string, number>();
  let active = 0;
  let timed = PMap.empty<string, number>();
  let seatTimed = PMap.empty<string, 1>();
  let idle = PMap.empty<string, Lobby>();
  for (const lobby of lobbies) {
    byId = byId.set(lobby.id, lobby);
    routing = reindex(routing, undefined, lobby, row.currentVersionId);
    if (isActive(lobby)) active++;
    const due = lifecycleDue(lobby);
    if (due !== undefined) timed = timed.set(lobby.id, due);
    if (hasSeatTimer(lobby)) seatTimed = seatTimed.set(lobby.id, 1);
    if (isActive(lobby) && isIdle(lobby)) idle = idle.set(lobby.id, lobby);
    for (const p of lobby.players.values()) sources = sources.set(p.source, (sources.get(p.source) ?? 0) + 1);
  }
  return {
    id: row.id,
    settings: row.settings,
    ...optional('currentVersionId', row.currentVersionId),
    versions,
    lobbies: byId,
    routing,
    sources,
    captcha: PMap.from(row.captcha.map((c) => [c.source, { verifiedAt: c.verifiedAt, requestsSince: c.requestsSince }] as const)),
    activeLobbies: active,
    timedLobbies: timed,
    seatTimedLobbies: seatTimed,
    idleLobbies: idle,
  };
};

/**
 * The world these rows describe, with everything derived rebuilt: versions (`makeVersion`), routing
 * index, per-client seat counts, active lobby counts, the timed, seat-timed and idle lobby sets,
 * lobby player counts, and one port space per region holding exactly the ports of its lobbies that
 * have not stopped (lobbies of a region no longer configured hold none). Rows that contradict each
 * other are corruption and throw: a lobby of an unknown namespace, a player of an unknown lobby, or
 * a port held by two lobbies.
 *
 * @example
 * const world = hydrateWorld([LOCAL_REGION], namespaceRows, lobbyDocs, playerDocs);
 */
export const hydrateWorld = (
  regions: readonly RegionInfo[],
  namespaces: readonly NamespaceRow[],
  lobbies: readonly LobbyDoc[],
  players: readonly PlayerDoc[],
): World => {
  const grouped = new Map<string, Lobby[]>(namespaces.map((row) => [row.id, []]));
  const spaces = new Map<string, PortSpace>(regions.map((r) => [r.id, createPortSpace()]));
  const seated = new Map<string, Player[]>(lobbies.map((doc) => [doc.id, []]));
  for (const player of players) {
    const group = seated.get(player.lobbyId);
    if (group === undefined) throw new Error(`stored player ${player.id} sits in unknown lobby ${player.lobbyId}`);
    group.push(player);
  }
  for (const doc of lobbies) {
    const group = grouped.get(doc.namespaceId);
    if (group === undefined) throw new Error(`stored lobby ${doc.id} belongs to unknown namespace ${doc.namespaceId}`);
    const lobby = hydrateLobby(doc, seated.get(doc.id) ?? []);
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
  /** Lobbies added, or whose own fields changed, as they are after (their players are listed apart). */
  readonly upserted: readonly Lobby[];
  /** Ids of lobbies gone (with all their players). */
  readonly deleted: readonly string[];
  /** Players added or changed, in lobbies that remain. */
  readonly seated: readonly Player[];
  /** Players gone from lobbies that remain. */
  readonly unseated: readonly Player[];
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

/** Whether two versions of a lobby differ in a stored field (compared by reference; players and counts aside). */
const lobbyRowDiffers = (a: Lobby, b: Lobby): boolean => {
  const x = a as unknown as Record<string, unknown>;
  const y = b as unknown as Record<string, unknown>;
  for (const key in y) {
    if (key !== 'players' && key !== 'playerCount' && key !== 'connectedCount' && x[key] !== y[key]) return true;
  }
  for (const key in x) if (!(key in y)) return true;
  return false;
};

/**
 * Which namespace, lobby and player rows differ between `before` and `after` (compared by
 * reference, skipping every subtree the two worlds share, so a decision's diff costs about what
 * the decision changed). Regions and port spaces are derived, never stored, so they are not compared.
 *
 * @example
 * const diff = diffWorld(world, decision.world);
 */
export const diffWorld = (before: World, after: World): WorldDiff => {
  const changes: NamespaceChange[] = [];
  const none = PMap.empty<string, Player>();
  before.namespaces.diff(after.namespaces, (id, a, b) => {
    const upserted: Lobby[] = [];
    const deleted: string[] = [];
    const seated: Player[] = [];
    const unseated: Player[] = [];
    (a?.lobbies ?? PMap.empty<string, Lobby>()).diff(b?.lobbies ?? PMap.empty<string, Lobby>(), (lobbyId, was, lobby) => {
      if (lobby === undefined) {
        deleted.push(lobbyId);
        return;
      }
      if (was === undefined || lobbyRowDiffers(was, lobby)) upserted.push(lobby);
      (was?.players ?? none).diff(lobby.players, (_, gone, player) => {
        if (player !== undefined) seated.push(player);
        else if (gone !== undefined) unseated.push(gone);
      });
    });
    const rowChanged = a === undefined || b === undefined || rowDiffers(a, b);
    changes.push({ id, after: b, rowChanged, upserted, deleted, seated, unseated });
  });
  return { namespaces: changes };
};
