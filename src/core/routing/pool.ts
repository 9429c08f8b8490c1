import { hashKey, PMap } from '../pmap.js';

/** Ranks per chunk of {@link Buckets}: a move copies a 16-slot chunk, not one slot per possible rank. */
const CHUNK_BITS = 4;
const CHUNK = 1 << CHUNK_BITS;
const LOW = CHUNK - 1;

type Bucket = PMap<string, 1> | undefined;
type Chunk = readonly Bucket[];

/**
 * Lobby ids of one routing pool, bucketed by rank (a small integer, higher is chosen first; the
 * routing index ranks a lobby by its player count, then its readiness): the bucket of rank `r`
 * holds the lobbies of rank `r`. "The best lobby ranked at most R" is then a downward scan from
 * bucket `R`: a few hundred steps at most, whatever the number of lobbies. Buckets sit in chunks of
 * 16 ranks (`chunks[r >> 4][r & 15]`), so a seat in a 256-player lobby copies two short arrays
 * instead of one of 513 slots.
 */
export interface Buckets {
  readonly chunks: readonly (Chunk | undefined)[];
  readonly size: number;
}

export const EMPTY_BUCKETS: Buckets = Object.freeze({ chunks: Object.freeze([]), size: 0 });

const bucketAt = (b: Buckets, rank: number): Bucket => b.chunks[rank >> CHUNK_BITS]?.[rank & LOW];

/** `chunks` (a copy the caller owns) with the bucket of `rank` replaced. */
const putBucket = (chunks: (Chunk | undefined)[], rank: number, bucket: Bucket): void => {
  const at = rank >> CHUNK_BITS;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: without padding the chunk list gets holes, read as undefined and skipped by forEach like undefined slots
  while (chunks.length <= at) chunks.push(undefined);
  // Stryker disable next-line ArrayDeclaration: a shorter chunk grows on assignment; a slot past its end reads as undefined
  const chunk = chunks[at]?.slice() ?? new Array<Bucket>(CHUNK).fill(undefined);
  chunk[rank & LOW] = bucket;
  chunks[at] = chunk;
};

/** The highest rank that has a bucket slot: scans start at or below it. */
// Stryker disable next-line ArithmeticOperator: a scan starting above the last slot reads no bucket there and goes on down
const topRank = (b: Buckets): number => b.chunks.length * CHUNK - 1;

/**
 * The buckets with lobby `id` added at `rank` (`hash`, when given, is `hashKey(id)`; so below).
 *
 * @example
 * addToBuckets(EMPTY_BUCKETS, 'lobby-a', 3).size // 1
 */
export const addToBuckets = (b: Buckets, id: string, rank: number, hash = hashKey(id)): Buckets => {
  const bucket = bucketAt(b, rank) ?? PMap.empty<string, 1>();
  const next = bucket.set(id, 1, hash);
  if (next === bucket) return b;
  const chunks = b.chunks.slice();
  putBucket(chunks, rank, next);
  return { chunks, size: b.size + 1 };
};

/** @example removeFromBuckets(addToBuckets(EMPTY_BUCKETS, 'a', 1), 'a', 1).size // 0 */
export const removeFromBuckets = (b: Buckets, id: string, rank: number, hash = hashKey(id)): Buckets => {
  const bucket = bucketAt(b, rank);
  if (bucket === undefined) return b;
  const next = bucket.delete(id, hash);
  if (next === bucket) return b;
  const chunks = b.chunks.slice();
  putBucket(chunks, rank, next.size === 0 ? undefined : next);
  return { chunks, size: b.size - 1 };
};

/**
 * The lobbies ranked at most `top`, best first: yields bucket by bucket from rank `top` down to 0.
 *
 * @example
 * for (const id of bestFirst(buckets, 31)) { ... }
 */
export function* bestFirst(b: Buckets, top: number): Generator<string> {
  for (let r = Math.min(top, topRank(b)); r >= 0; r--) {
    const bucket = bucketAt(b, r);
    if (bucket !== undefined) yield* bucket.keys();
  }
}

/** The single best lobby ranked at most `top`, without iterating (the common, tag-less case). */
export const best = (b: Buckets, top: number): string | undefined => {
  for (let r = Math.min(top, topRank(b)); r >= 0; r--) {
    const chunk = b.chunks[r >> CHUNK_BITS];
    if (chunk === undefined) {
      r &= ~LOW; // skip the rest of an empty chunk
      continue;
    }
    const bucket = chunk[r & LOW];
    if (bucket !== undefined) return bucket.firstKey();
  }
  return undefined;
};

/**
 * Move a lobby from bucket `from` to bucket `to` (its rank changed): one copy of the chunk list,
 * and of each chunk touched (one when both ranks share a chunk, the usual case).
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
 * Every non-empty bucket with its rank, lowest rank first: the index as data (tests compare an
 * index built step by step with one built from scratch).
 *
 * @example
 * bucketList(addToBuckets(EMPTY_BUCKETS, 'a', 3)) // [{ rank: 3, ids: PMap { a } }]
 */
export const bucketList = (b: Buckets): { readonly rank: number; readonly ids: PMap<string, 1> }[] => {
  const out: { rank: number; ids: PMap<string, 1> }[] = [];
  b.chunks.forEach((chunk, at) =>
    chunk?.forEach((ids, low) => {
      if (ids !== undefined) out.push({ rank: (at << CHUNK_BITS) | low, ids });
    }),
  );
  return out;
};
