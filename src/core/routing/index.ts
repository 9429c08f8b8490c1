import { isFindable, isReady } from '../lobby/flags.js';
import type { Lobby } from '../lobby/lobby.js';
import { hashKey, PMap } from '../pmap.js';
import { addToBuckets, best, bestFirst, type Buckets, EMPTY_BUCKETS, moveInBuckets, removeFromBuckets } from './pool.js';

/**
 * The routing index of one namespace: findable lobbies grouped into pools of interchangeable
 * lobbies (same version, game mode, region and dynamic max players, hence the same limits), each
 * pool bucketed by {@link rankOf} (player count, then readiness), with one sub-index per tag
 * (name = value).
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

/** Whether find may see this lobby: findable, and not full for every kind of seat. */
const indexed = (lobby: Lobby | undefined, currentVersionId: string | undefined): lobby is Lobby =>
  lobby !== undefined &&
  isFindable(lobby, currentVersionId) &&
  lobby.playerCount < Math.max(lobby.maxPlayers.normal, lobby.maxPlayers.party);

/**
 * A lobby's place in its pool's buckets: twice its player count, plus one when it is ready. Find
 * takes the highest rank that fits, so the fullest lobby wins (as in Rivet) and, among equally full
 * ones, a ready lobby before one still starting (Rivet broke that tie by lobby id, so a find could
 * wait out a cold start while an idle lobby sat ready).
 *
 * @example
 * rankOf(3, true) // 7
 */
export const rankOf = (playerCount: number, ready: boolean): number => 2 * playerCount + (ready ? 1 : 0);

const rank = (lobby: Lobby): number => rankOf(lobby.playerCount, isReady(lobby));

const poolOf = (lobby: Lobby): string => poolKey(lobby.versionId, lobby.gameMode, lobby.region, lobby.dynamicMaxPlayers);

/** Whether two lobbies (two versions of one lobby) belong to the same pool. */
const samePool = (a: Lobby, b: Lobby): boolean =>
  // Stryker disable next-line ConditionalExpression: only lobbies of the current version are indexed, so two indexed ones share it
  a.versionId === b.versionId &&
  a.gameMode === b.gameMode &&
  a.region === b.region &&
  a.dynamicMaxPlayers === b.dynamicMaxPlayers;

/** The index with `lobby` (as it stands: pool, tags, player count) added or removed; `hash` is `hashKey(lobby.id)`. */
const withEntry = (index: RoutingIndex, lobby: Lobby, add: boolean, hash: number): RoutingIndex => {
  const key = poolOf(lobby);
  const keyHash = hashKey(key);
  const { id, tags: lobbyTags } = lobby;
  const at = rank(lobby);
  const pool = index.get(key, keyHash) ?? { all: EMPTY_BUCKETS, tags: PMap.empty<string, Buckets>() };
  const apply = (b: Buckets): Buckets => (add ? addToBuckets(b, id, at, hash) : removeFromBuckets(b, id, at, hash));
  let tags = pool.tags;
  for (const name of Object.keys(lobbyTags)) {
    const tag = tagKey(name, lobbyTags[name] as string);
    const next = apply(tags.get(tag) ?? EMPTY_BUCKETS);
    tags = next.size === 0 ? tags.delete(tag) : tags.set(tag, next);
  }
  const all = apply(pool.all);
  return all.size === 0 ? index.delete(key, keyHash) : index.set(key, { all, tags }, keyHash);
};

/** The same lobby in the same pool with the same tags, only its rank changed (`from` → its rank now). */
const movedEntry = (index: RoutingIndex, lobby: Lobby, from: number, hash: number): RoutingIndex => {
  const key = poolOf(lobby);
  const keyHash = hashKey(key);
  const pool = index.get(key, keyHash);
  if (pool === undefined) return index;
  const { id, tags: lobbyTags } = lobby;
  const to = rank(lobby);
  let tags = pool.tags;
  for (const name of Object.keys(lobbyTags)) {
    const tag = tagKey(name, lobbyTags[name] as string);
    const b = tags.get(tag);
    if (b !== undefined) tags = tags.set(tag, moveInBuckets(b, id, from, to, hash));
  }
  return index.set(key, { all: moveInBuckets(pool.all, id, from, to, hash), tags }, keyHash);
};

/**
 * The index after a lobby changed from `before` to `after` (either may be undefined: created,
 * forgotten; both are one lobby, `hash` is `hashKey` of its id). Untouched pools and buckets are
 * shared with the old index.
 *
 * @example
 * index = reindex(index, undefined, newLobby, currentVersionId);
 */
export const reindex = (
  index: RoutingIndex,
  before: Lobby | undefined,
  after: Lobby | undefined,
  currentVersionId: string | undefined,
  // Stryker disable next-line StringLiteral: with neither lobby there is nothing to index and the hash is never read
  hash = hashKey((after ?? before)?.id ?? ''),
): RoutingIndex => {
  const a = indexed(before, currentVersionId);
  const b = indexed(after, currentVersionId);
  if (a && b && samePool(before, after) && before.tags === after.tags) {
    const from = rank(before);
    return from === rank(after) ? index : movedEntry(index, after, from, hash);
  }
  let next = index;
  if (a) next = withEntry(next, before, false, hash);
  if (b) next = withEntry(next, after, true, hash);
  return next;
};

/**
 * The fullest lobby of a pool where `need` more players fit under `limit` (a ready one first among
 * equally full ones, see {@link rankOf}) and whose tags include every requested tag. Without tags
 * it is one bucket lookup; with tags it walks the smallest tag sub-index, best first, checking the
 * other tags on the lobby.
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
  const top = rankOf(limit - need, true);
  if (names.length === 0) return best(p.all, top);
  let smallest: Buckets | undefined;
  for (const name of names) {
    const b = p.tags.get(tagKey(name, tags[name] as string));
    if (b === undefined) return undefined;
    // Stryker disable next-line EqualityOperator: of two sub-indexes as large, either yields the same lobby (those with every tag are in both, in the same hash order); only the walk differs
    if (smallest === undefined || b.size < smallest.size) smallest = b;
  }
  for (const id of bestFirst(smallest ?? EMPTY_BUCKETS, top)) {
    const lobbyTags = lobbyOf(id)?.tags ?? {};
    if (names.every((n) => lobbyTags[n] === tags[n])) return id;
  }
  return undefined;
};
