import { PMap } from '../pmap.js';

/**
 * Lobby ids of one routing pool, bucketed by player count: `byCount[c]` holds the lobbies with `c`
 * players. "Fullest first with room for n under limit L" is then a downward scan from bucket
 * `L - n`: at most `maxPlayers + 1` steps, whatever the number of lobbies.
 */
export interface Buckets {
  readonly byCount: readonly (PMap<string, 1> | undefined)[];
  readonly size: number;
}

export const EMPTY_BUCKETS: Buckets = Object.freeze({ byCount: Object.freeze([]), size: 0 });

/**
 * @example
 * addToBuckets(EMPTY_BUCKETS, 'lobby-a', 3).byCount[3]?.has('lobby-a') // true
 */
export const addToBuckets = (b: Buckets, id: string, count: number): Buckets => {
  const byCount = b.byCount.slice();
  while (byCount.length <= count) byCount.push(undefined);
  const bucket = byCount[count] ?? PMap.empty<string, 1>();
  const next = bucket.set(id, 1);
  if (next === bucket) return b;
  byCount[count] = next;
  return { byCount, size: b.size + 1 };
};

/** @example removeFromBuckets(addToBuckets(EMPTY_BUCKETS, 'a', 1), 'a', 1).size // 0 */
export const removeFromBuckets = (b: Buckets, id: string, count: number): Buckets => {
  const bucket = b.byCount[count];
  if (bucket === undefined) return b;
  const next = bucket.delete(id);
  if (next === bucket) return b;
  const byCount = b.byCount.slice();
  byCount[count] = next.size === 0 ? undefined : next;
  return { byCount, size: b.size - 1 };
};

/**
 * The lobbies with the most players such that `need` more still fit under `limit`, fullest first:
 * yields bucket by bucket from count `limit - need` down to 0.
 *
 * @example
 * for (const id of fullestFirst(buckets, 16, 1)) { ... }
 */
export function* fullestFirst(b: Buckets, limit: number, need: number): Generator<string> {
  for (let c = Math.min(limit - need, b.byCount.length - 1); c >= 0; c--) {
    const bucket = b.byCount[c];
    if (bucket !== undefined) yield* bucket.keys();
  }
}

/** The single fullest lobby with room, without iterating (the common, tag-less case). */
export const fullest = (b: Buckets, limit: number, need: number): string | undefined => {
  for (let c = Math.min(limit - need, b.byCount.length - 1); c >= 0; c--) {
    const bucket = b.byCount[c];
    if (bucket !== undefined) return bucket.firstKey();
  }
  return undefined;
};

/**
 * Move a lobby from bucket `from` to bucket `to` (its player count changed): one copy of the
 * bucket array instead of two.
 *
 * @example
 * moveInBuckets(b, 'lobby-a', 3, 4)
 */
export const moveInBuckets = (b: Buckets, id: string, from: number, to: number): Buckets => {
  const source = b.byCount[from];
  const left = source?.delete(id);
  if (left === undefined || left === source) return addToBuckets(b, id, to);
  const byCount = b.byCount.slice();
  while (byCount.length <= to) byCount.push(undefined);
  byCount[from] = left.size === 0 ? undefined : left;
  byCount[to] = (byCount[to] ?? PMap.empty<string, 1>()).set(id, 1);
  return { byCount, size: b.size };
};
