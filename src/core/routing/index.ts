import { isFindable } from '../lobby/flags.js';
import type { Lobby } from '../lobby/lobby.js';
import { PMap } from '../pmap.js';
import { addToBuckets, type Buckets, EMPTY_BUCKETS, fullest, fullestFirst, moveInBuckets, removeFromBuckets } from './pool.js';

/**
 * The routing index of one namespace: findable lobbies grouped into pools of interchangeable
 * lobbies (same version, game mode, region and dynamic max players, hence the same limits), each
 * pool bucketed by player count, with one sub-index per tag (name = value).
 *
 * Every lobby change goes through {@link reindex}, so the index never disagrees with the lobbies.
 */
export interface Pool {
  readonly all: Buckets;
  readonly tags: PMap<string, Buckets>;
}

export type RoutingIndex = PMap<string, Pool>;

export const EMPTY_INDEX: RoutingIndex = PMap.empty();

const SEP = '\u0001';

/**
 * The pool a lobby of this shape belongs to.
 *
 * @example
 * poolKey('v1', 'default', 'local', undefined) // 'v1\u0001default\u0001local\u0001'
 */
export const poolKey = (versionId: string, gameMode: string, region: string, dynamicMax: number | undefined): string =>
  `${versionId}${SEP}${gameMode}${SEP}${region}${SEP}${dynamicMax ?? ''}`;

const tagKey = (name: string, value: string): string => `${name}${SEP}${value}`;

interface Entry {
  readonly pool: string;
  readonly count: number;
  readonly tags: Readonly<Record<string, string>>;
}

/** Where a lobby sits in the index, or undefined when find must not see it (not findable, or full for every kind). */
const entryOf = (lobby: Lobby | undefined, currentVersionId: string | undefined): Entry | undefined => {
  if (lobby === undefined || !isFindable(lobby, currentVersionId)) return undefined;
  const room = Math.max(lobby.maxPlayers.normal, lobby.maxPlayers.party);
  if (lobby.playerCount >= room) return undefined;
  return {
    pool: poolKey(lobby.versionId, lobby.gameMode, lobby.region, lobby.dynamicMaxPlayers),
    count: lobby.playerCount,
    tags: lobby.tags,
  };
};

const withEntry = (index: RoutingIndex, id: string, e: Entry, add: boolean): RoutingIndex => {
  const pool = index.get(e.pool) ?? { all: EMPTY_BUCKETS, tags: PMap.empty<string, Buckets>() };
  const apply = (b: Buckets): Buckets => (add ? addToBuckets(b, id, e.count) : removeFromBuckets(b, id, e.count));
  let tags = pool.tags;
  for (const name of Object.keys(e.tags)) {
    const key = tagKey(name, e.tags[name] as string);
    const next = apply(tags.get(key) ?? EMPTY_BUCKETS);
    tags = next.size === 0 ? tags.delete(key) : tags.set(key, next);
  }
  const all = apply(pool.all);
  return all.size === 0 ? index.delete(e.pool) : index.set(e.pool, { all, tags });
};

/** The same lobby in the same pool with the same tags, only its player count changed. */
const movedEntry = (index: RoutingIndex, id: string, e: Entry, to: number): RoutingIndex => {
  const pool = index.get(e.pool);
  if (pool === undefined) return index;
  let tags = pool.tags;
  for (const name of Object.keys(e.tags)) {
    const key = tagKey(name, e.tags[name] as string);
    const b = tags.get(key);
    if (b !== undefined) tags = tags.set(key, moveInBuckets(b, id, e.count, to));
  }
  return index.set(e.pool, { all: moveInBuckets(pool.all, id, e.count, to), tags });
};

/**
 * The index after a lobby changed from `before` to `after` (either may be undefined: created,
 * forgotten). Untouched pools and buckets are shared with the old index.
 *
 * @example
 * index = reindex(index, undefined, newLobby, currentVersionId);
 */
export const reindex = (
  index: RoutingIndex,
  before: Lobby | undefined,
  after: Lobby | undefined,
  currentVersionId: string | undefined,
): RoutingIndex => {
  const a = entryOf(before, currentVersionId);
  const b = entryOf(after, currentVersionId);
  if (a !== undefined && b !== undefined && a.pool === b.pool && a.tags === b.tags && after !== undefined) {
    return a.count === b.count ? index : movedEntry(index, after.id, a, b.count);
  }
  let next = index;
  if (a !== undefined && before !== undefined) next = withEntry(next, before.id, a, false);
  if (b !== undefined && after !== undefined) next = withEntry(next, after.id, b, true);
  return next;
};

/**
 * The fullest lobby of a pool where `need` more players fit under `limit` and whose tags include
 * every requested tag. Without tags it is one bucket lookup; with tags it walks the smallest tag
 * sub-index, fullest first, checking the other tags on the lobby.
 *
 * @example
 * choose(index, poolKey('v1', 'default', 'local', undefined), 16, 1, {}, (id) => lobbies.get(id))
 */
export const choose = (
  index: RoutingIndex,
  pool: string,
  limit: number,
  need: number,
  tags: Readonly<Record<string, string>>,
  lobbyOf: (id: string) => Lobby | undefined,
): string | undefined => {
  const p = index.get(pool);
  if (p === undefined) return undefined;
  const names = Object.keys(tags);
  if (names.length === 0) return fullest(p.all, limit, need);
  let smallest: Buckets | undefined;
  for (const name of names) {
    const b = p.tags.get(tagKey(name, tags[name] as string));
    if (b === undefined) return undefined;
    if (smallest === undefined || b.size < smallest.size) smallest = b;
  }
  for (const id of fullestFirst(smallest ?? EMPTY_BUCKETS, limit, need)) {
    const lobbyTags = lobbyOf(id)?.tags ?? {};
    if (names.every((n) => lobbyTags[n] === tags[n])) return id;
  }
  return undefined;
};
