import type { Admission } from '../../src/core/admission/gate.js';
import type { ResolvedVersion } from '../../src/core/config/types.js';
import type { Effect } from '../../src/core/effects.js';
import type { MatchError } from '../../src/core/errors.js';
import type { MatchEvent } from '../../src/core/events.js';
import type { Lobby, Player } from '../../src/core/lobby/lobby.js';
import type { Seat } from '../../src/core/matchmaker/seat.js';
import { addNamespace, publishVersion } from '../../src/core/namespace.js';
import { PMap } from '../../src/core/pmap.js';
import type { Result } from '../../src/core/result.js';
import type { RoutingIndex } from '../../src/core/routing/index.js';
import { bucketList } from '../../src/core/routing/pool.js';
import { STOP_GRACE_MS, STOPPED_RETENTION_MS } from '../../src/core/tick.js';
import type { Decision } from '../../src/core/tx.js';
import {
  createWorld,
  DEFAULT_NAMESPACE_SETTINGS,
  makeVersion,
  namespaceOf,
  type NamespaceSettings,
  type NamespaceState,
  type World,
} from '../../src/core/world.js';
import { NS, REGIONS } from './fixtures.js';

/** The decision of an admitted find/join/create; throws (failing the test) otherwise. */
export const admitted = (a: Admission<Seat>): Decision<Seat> => {
  if (a.kind !== 'admitted') throw new Error(`expected admitted, got ${JSON.stringify(a)}`);
  return a.decision;
};

/** The error code of a rejection, or undefined for any other outcome. */
export const codeOf = (a: Admission<Seat>): string | undefined => (a.kind === 'rejected' ? a.error.code : undefined);

/** The decision of a successful step (lifecycle calls); throws otherwise. */
export const okStep = <T>(r: Result<Decision<T>, MatchError>): Decision<T> => {
  if (!r.ok) throw new Error(`expected ok, got ${JSON.stringify(r.error)}`);
  return r.value;
};

/** The error code of a failed step, or undefined when it succeeded. */
export const stepCode = <T>(r: Result<Decision<T>, MatchError>): string | undefined => (r.ok ? undefined : r.error.code);

export const nsOf = (w: World, id: string = NS): NamespaceState => namespaceOf(w, id);

export const lobbyIn = (w: World, id: string): Lobby => {
  const l = nsOf(w).lobbies.get(id);
  if (l === undefined) throw new Error(`no lobby ${id}`);
  return l;
};

export const playerIn = (w: World, id: string): Player | undefined => {
  for (const lobby of nsOf(w).lobbies.values()) {
    const player = lobby.players.get(id);
    if (player !== undefined) return player;
  }
  return undefined;
};

/** How many players hold a seat in the namespace. */
export const seatedCount = (w: World): number => [...nsOf(w).lobbies.values()].reduce((n, l) => n + l.players.size, 0);

/** The effects of one type, narrowed. */
export const effectsOf = <T extends Effect['type']>(d: { readonly effects: readonly Effect[] }, type: T): Extract<Effect, { type: T }>[] =>
  d.effects.filter((e): e is Extract<Effect, { type: T }> => e.type === type);

/** The events of one type, narrowed. */
export const eventsOf = <T extends MatchEvent['type']>(
  d: { readonly events: readonly MatchEvent[] },
  type: T,
): Extract<MatchEvent, { type: T }>[] => d.events.filter((e): e is Extract<MatchEvent, { type: T }> => e.type === type);

/**
 * A world that records every event of every decision applied to it, from the namespace's first
 * publish on (fixtures' `worldWith` drops that first `version-published`).
 */
export class Script {
  world: World;
  readonly events: MatchEvent[] = [];

  constructor(config: ResolvedVersion, settings: Partial<NamespaceSettings> = {}, versionId = 'v1') {
    const empty = addNamespace(createWorld(REGIONS), NS, { ...DEFAULT_NAMESPACE_SETTINGS, ...settings });
    this.world = empty;
    this.apply(publishVersion(empty, NS, makeVersion(versionId, config), { now: 0, seed: 0 }));
  }

  apply<T>(d: Decision<T>): T {
    this.world = d.world;
    this.events.push(...d.events);
    return d.value;
  }

  /** Apply an admitted admission; throws on anything else. */
  admit(a: Admission<Seat>): Seat {
    return this.apply(admitted(a));
  }

  /** Apply a successful step; throws on an error. */
  step<T>(r: Result<Decision<T>, MatchError>): T {
    return this.apply(okStep(r));
  }
}

/** A hand-made lobby (for flag tests); defaults: creating, open, public, pooled, empty, version v1. */
export const makeLobby = (over: Partial<Lobby> = {}): Lobby => ({
  id: 'L',
  namespaceId: NS,
  versionId: 'v1',
  gameMode: 'default',
  lobbyGroupId: 'v1/default',
  region: 'local',
  createdAt: 0,
  readyDeadline: 300_000,
  lifecycle: { status: 'creating' },
  closed: false,
  publicity: 'public',
  origin: 'pooled',
  maxPlayers: { normal: 4, direct: 6, party: 4 },
  tags: {},
  ports: [],
  players: PMap.empty(),
  playerCount: 0,
  connectedCount: 0,
  timeouts: { lobbyReadyMs: 300_000, playerConnectMs: 120_000 },
  ...over,
});

/** A namespace's lobby indexes as data, each in its own iteration order. */
export const lobbyIndexes = (ns: NamespaceState) => ({
  timed: [...ns.timedLobbies.entries()],
  seatTimed: [...ns.seatTimedLobbies.keys()],
  idle: [...ns.idleLobbies.entries()],
});

/**
 * What {@link lobbyIndexes} must be, by a scan of every lobby (in the order of `ns.lobbies`) with
 * the definitions written out: starting, stopping and stopped lobbies with the time tick acts on
 * them; lobbies holding a reserved seat or any seat under a lifetime; active lobbies without seats.
 */
export const scannedLobbyIndexes = (ns: NamespaceState): ReturnType<typeof lobbyIndexes> => {
  const lobbies = [...ns.lobbies.values()];
  const due = (l: Lobby): number | undefined => {
    const lc = l.lifecycle;
    if (lc.status === 'creating') return l.readyDeadline;
    if (lc.status === 'stopping') return lc.stoppingAt + STOP_GRACE_MS;
    if (lc.status === 'stopped') return lc.stoppedAt + STOPPED_RETENTION_MS;
    return undefined;
  };
  return {
    timed: lobbies.flatMap((l) => {
      const at = due(l);
      return at === undefined ? [] : [[l.id, at] as const];
    }),
    seatTimed: lobbies
      .filter((l) => [...l.players.values()].some((p) => p.status === 'reserved' || l.timeouts.playerMaxLifetimeMs !== undefined))
      .map((l) => l.id),
    idle: lobbies.filter((l) => (l.lifecycle.status === 'creating' || l.lifecycle.status === 'ready') && l.players.size === 0).map((l) => [l.id, l] as const),
  };
};

/** Every entry of a routing index as `pool|rank|id` (and `pool|tag|rank|id`), sorted: compare indexes as data. */
export const routingRows = (index: RoutingIndex): string[] => {
  const out: string[] = [];
  for (const [pool, p] of index.entries()) {
    for (const { rank, ids } of bucketList(p.all)) for (const id of ids.keys()) out.push(`${pool}|${rank}|${id}`);
    for (const [tag, buckets] of p.tags.entries()) {
      for (const { rank, ids } of bucketList(buckets)) for (const id of ids.keys()) out.push(`${pool}|${tag}|${rank}|${id}`);
    }
  }
  return out.sort();
};
