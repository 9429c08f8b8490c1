import { describe, expect, it } from 'vitest';
import {
  addToBuckets,
  best,
  bestFirst,
  bucketList,
  type Buckets,
  EMPTY_BUCKETS,
  moveInBuckets,
  removeFromBuckets,
} from '../../../src/core/routing/pool.js';

/** The buckets as `rank: ids` rows, ids sorted: compare contents, not hash order. */
const rows = (b: Buckets): string[] => bucketList(b).map(({ rank, ids }) => `${rank}: ${[...ids.keys()].sort().join(' ')}`);

const filled = (entries: readonly (readonly [string, number])[]): Buckets =>
  entries.reduce((b, [id, rank]) => addToBuckets(b, id, rank), EMPTY_BUCKETS);

describe('routing pool buckets', () => {
  it('counts its lobbies: adding twice or removing an absent one changes nothing', () => {
    const b = filled([['a', 3], ['b', 3], ['c', 40]]);
    expect(b.size).toBe(3);
    expect(rows(b)).toEqual(['3: a b', '40: c']);
    expect(addToBuckets(b, 'a', 3)).toBe(b);
    expect(removeFromBuckets(b, 'zz', 3)).toBe(b);
    expect(removeFromBuckets(b, 'a', 5)).toBe(b); // not at that rank
    expect(removeFromBuckets(b, 'a', 200)).toBe(b); // past the last chunk
    const less = removeFromBuckets(b, 'a', 3);
    expect([less.size, rows(less)]).toEqual([2, ['3: b', '40: c']]);
  });

  it('drops a bucket when its last lobby leaves, and is empty again at size 0', () => {
    const b = removeFromBuckets(removeFromBuckets(filled([['a', 0], ['b', 17]]), 'a', 0), 'b', 17);
    expect(b.size).toBe(0);
    expect(bucketList(b)).toEqual([]);
    expect(best(b, 100)).toBeUndefined();
    expect([...bestFirst(b, 100)]).toEqual([]);
  });

  it('moves a lobby within a chunk and across chunks, keeping the others of both buckets', () => {
    // Rank 15 is the last of chunk 0 and 16 the first of chunk 1: a ready lobby of 7 players
    // (rank 15) getting its 8th (rank 16) crosses chunks.
    const b = filled([['a', 15], ['b', 15], ['c', 16], ['d', 14]]);
    const across = moveInBuckets(b, 'a', 15, 16);
    expect([across.size, rows(across)]).toEqual([4, ['14: d', '15: b', '16: a c']]);
    const back = moveInBuckets(across, 'c', 16, 15);
    expect(rows(back)).toEqual(['14: d', '15: b c', '16: a']);
    const within = moveInBuckets(b, 'd', 14, 15);
    expect([within.size, rows(within)]).toEqual([4, ['15: a b d', '16: c']]);
    // The last lobby of a bucket leaves it empty, in and across chunks.
    expect(rows(moveInBuckets(within, 'c', 16, 2))).toEqual(['2: c', '15: a b d']);
    expect(rows(moveInBuckets(filled([['x', 4]]), 'x', 4, 5))).toEqual(['5: x']);
    // A move far above the last chunk grows the chunk list.
    expect(rows(moveInBuckets(b, 'd', 14, 100))).toEqual(['15: a b', '16: c', '100: d']);
    // The old buckets are untouched.
    expect(rows(b)).toEqual(['14: d', '15: a b', '16: c']);
  });

  it('adds a lobby that was not at its old rank (a move from nowhere)', () => {
    const b = filled([['a', 1]]);
    const moved = moveInBuckets(b, 'z', 1, 2);
    expect([moved.size, rows(moved)]).toEqual([2, ['1: a', '2: z']]);
    expect(rows(moveInBuckets(b, 'z', 40, 2))).toEqual(['1: a', '2: z']);
  });

  it('yields best first from the top rank down to rank 0 included, skipping empty chunks', () => {
    const b = filled([['zero', 0], ['one', 1], ['top', 40], ['mid', 20]]);
    expect([...bestFirst(b, 1000)]).toEqual(['top', 'mid', 'one', 'zero']);
    expect([...bestFirst(b, 20)]).toEqual(['mid', 'one', 'zero']);
    expect([...bestFirst(b, 0)]).toEqual(['zero']);
    expect([...bestFirst(b, -1)]).toEqual([]);
    expect(best(b, 1000)).toBe('top');
    expect(best(b, 39)).toBe('mid');
    expect(best(b, 19)).toBe('one');
    expect(best(b, 0)).toBe('zero');
    expect(best(b, -1)).toBeUndefined();
    // A chunk (ranks 16..31) that holds nothing between two that do, and one absent altogether.
    const gap = filled([['low', 3], ['high', 70]]);
    expect(best(gap, 69)).toBe('low');
    expect(best(gap, 40)).toBe('low');
    expect([...bestFirst(gap, 69)]).toEqual(['low']);
  });

  it('lists the buckets lowest rank first with their ranks', () => {
    const b = filled([['c', 33], ['a', 0], ['b', 16]]);
    expect(bucketList(b).map((x) => x.rank)).toEqual([0, 16, 33]);
    expect(bucketList(EMPTY_BUCKETS)).toEqual([]);
  });
});
