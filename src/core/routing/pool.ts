import { hashKey, PMap } from '../pmap.js';

/** Counts per chunk of {@link Buckets}: a move copies a 16-slot chunk, not one slot per possible count. */
const CHUNK_BITS = 4;
const CHUNK = 1 << CHUNK_BITS;
const LOW = CHUNK - 1;

type Bucket = PMap<string, 1> | undefined;
type Chunk = readonly Bucket[];

/**
 * Lobby ids of one routing pool, bucketed by player count: the bucket of count `c` holds the
 * lobbies with `c` players. "Fullest first with room for n under limit L" is then a downward scan
 * from bucket `L - n`: at most `maxPlayers + 1` steps, whatever the number of lobbies. Buckets sit
 * in chunks of 16 counts (`chunks[c >> 4][c & 15]`), so a seat in a 256-player lobby copies two
 * short arrays instead of one of 257 slots.
 */
export interface Buckets {
  readonly chunks: readonly (Chunk | undefined)[];
  readonly size: number;
}

export const EMPTY_BUCKETS: Buckets = Object.freeze({ chunks: Object.freeze([]), size: 0 });

const bucketAt = (b: Buckets, count: number): Bucket => b.chunks[count >> CHUNK_BITS]?.[count & LOW];

/** `chunks` (a copy the caller owns) with the bucket of `count` replaced. */
const putBucket = (chunks: (Chunk | undefined)[], count: number, bucket: Bucket): void => {
  const at = count >> CHUNK_BITS;
  while (chunks.length <= at) chunks.push(undefined);
  const chunk = chunks[at]?.slice() ?? new Array<Bucket>(CHUNK).fill(undefined);
  chunk[count & LOW] = bucket;
  chunks[at] = chunk;
};

/** The highest count that has a bucket slot: scans start at or below it. */
const topCount = (b: Buckets): number => b.chunks.length * CHUNK - 1;

/**
 * The buckets with lobby `id` added at `count` (`hash`, when given, is `hashKey(id)`; so below).
 *
 * @example
 * addToBuckets(EMPTY_BUCKETS, 'lobby-a', 3).size // 1
 */
export const addToBuckets = (b: Buckets, id: string, count: number, hash = hashKey(id)): Buckets => {
  const bucket = bucketAt(b, count) ?? PMap.empty<string, 1>();
  const next = bucket.set(id, 1, hash);
  if (next === bucket) return b;
  const chunks = b.chunks.slice();
  putBucket(chunks, count, next);
  return { chunks, size: b.size + 1 };
};

/** @example removeFromBuckets(addToBuckets(EMPTY_BUCKETS, 'a', 1), 'a', 1).size // 0 */
export const removeFromBuckets = (b: Buckets, id: string, count: number, hash = hashKey(id)): Buckets => {
  const bucket = bucketAt(b, count);
  if (bucket === undefined) return b;
  const next = bucket.delete(id, hash);
  if (next === bucket) return b;
  const chunks = b.chunks.slice();
  putBucket(chunks, count, next.size === 0 ? undefined : next);
  return { chunks, size: b.size - 1 };
};

/**
 * The lobbies with the most players such that `need` more still fit under `limit`, fullest first:
 * yields bucket by bucket from count `limit - need` down to 0.
 *
 * @example
 * for (const id of fullestFirst(buckets, 16, 1)) { ... }
 */
export function* fullestFirst(b: Buckets, limit: number, need: number): Generator<string> {
  for (let c = Math.min(limit - need, topCount(b)); c >= 0; c--) {
    const bucket = bucketAt(b, c);
    if (bucket !== undefined) yield* bucket.keys();
  }
}

/** The single fullest lobby with room, without iterating (the common, tag-less case). */
export const fullest = (b: Buckets, limit: number, need: number): string | undefined => {
  for (let c = Math.min(limit - need, topCount(b)); c >= 0; c--) {
    const chunk = b.chunks[c >> CHUNK_BITS];
    if (chunk === undefined) {
      c &= ~LOW; // skip the rest of an empty chunk
      continue;
    }
    const bucket = chunk[c & LOW];
    if (bucket !== undefined) return bucket.firstKey();
  }
  return undefined;
};

/**
 * Move a lobby from bucket `from` to bucket `to` (its player count changed): one copy of the chunk
 * list, and of each chunk touched (one when both counts share a chunk, the usual case).
 *
 * @example
 * moveInBuckets(b, 'lobby-a', 3, 4)
 */
export const moveInBuckets = (b: Buckets, id: string, from: number, to: number, hash = hashKey(id)): Buckets => {
  const source = bucketAt(b, from);
  const left = source?.delete(id, hash);
  if (left === undefined || left === source) return addToBuckets(b, id, to, hash);
  const chunks = b.chunks.slice();
  const target = (bucketAt(b, to) ?? PMap.empty<string, 1>()).set(id, 1, hash);
  if (from >> CHUNK_BITS === to >> CHUNK_BITS) {
    const chunk = (chunks[from >> CHUNK_BITS] as Chunk).slice();
    chunk[from & LOW] = left.size === 0 ? undefined : left;
    chunk[to & LOW] = target;
    chunks[from >> CHUNK_BITS] = chunk;
  } else {
    putBucket(chunks, from, left.size === 0 ? undefined : left);
    putBucket(chunks, to, target);
  }
  return { chunks, size: b.size };
};

/**
 * Every non-empty bucket with its player count, lowest count first: the index as data (tests
 * compare an index built step by step with one built from scratch).
 *
 * @example
 * bucketList(addToBuckets(EMPTY_BUCKETS, 'a', 3)) // [{ count: 3, ids: PMap { a } }]
 */
export const bucketList = (b: Buckets): { readonly count: number; readonly ids: PMap<string, 1> }[] => {
  const out: { count: number; ids: PMap<string, 1> }[] = [];
  b.chunks.forEach((chunk, at) =>
    chunk?.forEach((ids, low) => {
      if (ids !== undefined) out.push({ count: (at << CHUNK_BITS) | low, ids });
    }),
  );
  return out;
};
