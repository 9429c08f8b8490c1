import { describe, expect, it } from 'vitest';
import type { Lobby } from '../../../src/core/lobby/lobby.js';
import { choose, EMPTY_INDEX, poolKey, rankOf, reindex, type RoutingIndex } from '../../../src/core/routing/index.js';
import { bucketList, EMPTY_BUCKETS } from '../../../src/core/routing/pool.js';
import { makeLobby, routingRows } from '../helpers.js';

// poolKey('v1', 'default', 'local', undefined), written out: no core call while the file loads.
const POOL = 'v1\u0001default\u0001local\u0001';
const ready: Lobby['lifecycle'] = { status: 'ready', readyAt: 0 };

const lobby = (id: string, over: Partial<Lobby> = {}): Lobby => makeLobby({ id, maxPlayers: { normal: 8, direct: 8, party: 8 }, ...over });

/** An index of `lobbies`, and a lookup that counts the lobbies `choose` reads. */
const indexOf = (lobbies: readonly Lobby[]) => {
  const byId = new Map(lobbies.map((l) => [l.id, l]));
  const index = lobbies.reduce<RoutingIndex>((idx, l) => reindex(idx, undefined, l, 'v1'), EMPTY_INDEX);
  const reads: string[] = [];
  const lobbyOf = (id: string): Lobby | undefined => {
    reads.push(id);
    return byId.get(id);
  };
  return { index, reads, pick: (tags: Record<string, string>, limit = 8, need = 1) => choose(index, POOL, limit, need, tags, lobbyOf) };
};

describe('routing: choose with tags', () => {
  it('routes a find with several tags only to a lobby that has every one of them', () => {
    // The two tag sub-indexes are as large (2 lobbies each), so the first requested tag's is walked:
    // its fullest lobby has `map` but another `mode`, and must be passed over.
    const { pick } = indexOf([
      lobby('dust-casual', { tags: { map: 'dust', mode: 'casual' }, playerCount: 3, lifecycle: ready }),
      lobby('inferno-ranked', { tags: { map: 'inferno', mode: 'ranked' }, playerCount: 2 }),
      lobby('dust-ranked', { tags: { map: 'dust', mode: 'ranked' }, playerCount: 1 }),
    ]);
    expect(pick({ map: 'dust', mode: 'ranked' })).toBe('dust-ranked');
    expect(pick({ mode: 'ranked', map: 'dust' })).toBe('dust-ranked');
    expect(pick({ map: 'inferno', mode: 'casual' })).toBeUndefined();
    expect(pick({ map: 'dust' })).toBe('dust-casual');
    expect(pick({ map: 'dust', mode: 'ranked', extra: 'x' })).toBeUndefined(); // no lobby has the third tag
  });

  it('chooses an empty lobby still starting (rank 0) for a tagged find', () => {
    const { pick } = indexOf([lobby('fresh', { tags: { map: 'dust' } })]);
    expect(rankOf(0, false)).toBe(0);
    expect(pick({ map: 'dust' })).toBe('fresh');
    expect(pick({ map: 'dust' }, 8, 8)).toBe('fresh');
    expect(pick({ map: 'dust' }, 8, 9)).toBeUndefined();
  });

  it('walks the smallest tag sub-index: as many lobby reads as the rarest tag has candidates', () => {
    const common = Array.from({ length: 20 }, (_, i) => lobby(`common-${i}`, { tags: { map: 'dust' }, playerCount: 5 }));
    const rare = lobby('rare', { tags: { map: 'dust', mode: 'ranked' } });
    for (const tags of [{ map: 'dust', mode: 'ranked' }, { mode: 'ranked', map: 'dust' }]) {
      const { pick, reads } = indexOf([...common, rare]);
      expect(pick(tags)).toBe('rare');
      expect(reads).toEqual(['rare']);
    }
  });

  it('stops at the first lobby with every tag, best first', () => {
    const { pick, reads } = indexOf([
      lobby('a', { tags: { map: 'dust', mode: 'ranked' }, playerCount: 4 }),
      lobby('b', { tags: { map: 'dust', mode: 'ranked' }, playerCount: 2 }),
      lobby('c', { tags: { map: 'dust', mode: 'casual' }, playerCount: 6 }),
      lobby('d', { tags: { map: 'dust', mode: 'casual' }, playerCount: 5 }),
    ]);
    expect(pick({ map: 'dust', mode: 'ranked' })).toBe('a');
    expect(reads).toEqual(['a']);
  });

  it('answers undefined for a pool the index does not hold', () => {
    const { index } = indexOf([lobby('a')]);
    expect(choose(index, poolKey('v1', 'other', 'local', undefined), 8, 1, {}, () => undefined)).toBeUndefined();
    expect(choose(index, poolKey('v1', 'default', 'local', 4), 8, 1, {}, () => undefined)).toBeUndefined();
    expect(choose(index, POOL, 8, 1, {}, () => undefined)).toBe('a');
  });
});

describe('routing: reindex', () => {
  it('names pools by version, mode, region and dynamic max players', () => {
    expect(poolKey('v1', 'default', 'local', undefined)).toBe('v1\u0001default\u0001local\u0001');
    expect(poolKey('v1', 'default', 'local', 4)).toBe('v1\u0001default\u0001local\u00014');
    expect(poolKey('v1', 'default', 'local', 0)).toBe('v1\u0001default\u0001local\u00010');
  });

  it('removes a pool and its tag sub-indexes when its last lobby leaves', () => {
    const a = lobby('a', { tags: { map: 'dust' }, playerCount: 1 });
    const b = lobby('b', { tags: { map: 'inferno' } });
    let idx = reindex(reindex(EMPTY_INDEX, undefined, a, 'v1'), undefined, b, 'v1');
    const pool = idx.get(POOL);
    expect([pool?.all.size, pool?.tags.size, pool?.tags.get('map\u0001dust')?.size]).toEqual([2, 2, 1]);
    idx = reindex(idx, b, undefined, 'v1');
    expect([...(idx.get(POOL)?.tags.keys() ?? [])]).toEqual(['map\u0001dust']);
    expect(idx.get(POOL)?.all.size).toBe(1);
    idx = reindex(idx, a, { ...a, closed: true }, 'v1');
    expect(idx.size).toBe(0);
    expect(idx).toEqual(EMPTY_INDEX);
  });

  it('moves a lobby between buckets as its rank changes, in the pool and in each tag sub-index', () => {
    const tags = { map: 'dust', mode: 'ranked' };
    const big = { normal: 16, direct: 16, party: 16 };
    const a = lobby('a', { tags, playerCount: 7, lifecycle: ready, maxPlayers: big });
    const b = lobby('b', { tags, playerCount: 7, lifecycle: ready, maxPlayers: big });
    let idx = reindex(reindex(EMPTY_INDEX, undefined, a, 'v1'), undefined, b, 'v1');
    const a8 = { ...a, playerCount: 8 };
    idx = reindex(idx, a, a8, 'v1');
    const ranks = (buckets = EMPTY_BUCKETS) => bucketList(buckets).map(({ rank, ids }) => [rank, [...ids.keys()].sort()]);
    expect(ranks(idx.get(POOL)?.all)).toEqual([[15, ['b']], [17, ['a']]]);
    expect(ranks(idx.get(POOL)?.tags.get('map\u0001dust'))).toEqual([[15, ['b']], [17, ['a']]]);
    expect(ranks(idx.get(POOL)?.tags.get('mode\u0001ranked'))).toEqual([[15, ['b']], [17, ['a']]]);
    // The same rank (a connect, say) leaves the index as it was.
    expect(reindex(idx, a8, { ...a8, connectedCount: 1 }, 'v1')).toBe(idx);
  });

  it('agrees with a rebuild when a lobby changes pool or tags (not something lobbies do, but reindex allows it)', () => {
    const a = lobby('a', { tags: { map: 'dust' }, playerCount: 2 });
    const b = lobby('b', { playerCount: 1 });
    const base = reindex(reindex(EMPTY_INDEX, undefined, a, 'v1'), undefined, b, 'v1');
    const changes: Lobby[] = [
      { ...a, region: 'eu' },
      { ...a, gameMode: 'other' },
      { ...a, versionId: 'v0' }, // outdated: out of the index
      { ...a, dynamicMaxPlayers: 4 },
      { ...a, tags: { map: 'inferno' } },
      { ...a, tags: { map: 'dust' } }, // equal tags in a new object
      { ...a, tags: { map: 'dust' }, playerCount: 3 },
    ];
    for (const after of changes) {
      const rebuilt = [b, after].reduce<RoutingIndex>((idx, l) => reindex(idx, undefined, l, 'v1'), EMPTY_INDEX);
      expect(routingRows(reindex(base, a, after, 'v1'))).toEqual(routingRows(rebuilt));
    }
  });

  it('moving a lobby whose pool the index lacks leaves the index as it was', () => {
    // `before` claims to be indexed but is not (a caller that skipped an update): nothing to move.
    const idx = reindex(EMPTY_INDEX, undefined, lobby('x', { region: 'eu' }), 'v1');
    const stray = lobby('a', { playerCount: 1 });
    expect(reindex(idx, stray, { ...stray, playerCount: 2 }, 'v1')).toBe(idx);
  });

  it('indexes a lobby while any kind of seat is free: normal or party', () => {
    const partyRoom = lobby('p', { playerCount: 4, maxPlayers: { normal: 4, direct: 4, party: 6 } });
    const normalRoom = lobby('n', { playerCount: 4, maxPlayers: { normal: 6, direct: 4, party: 4 } });
    const full = lobby('f', { playerCount: 6, maxPlayers: { normal: 6, direct: 8, party: 6 } });
    for (const l of [partyRoom, normalRoom]) expect(reindex(EMPTY_INDEX, undefined, l, 'v1').size).toBe(1);
    expect(reindex(EMPTY_INDEX, undefined, full, 'v1').size).toBe(0);
  });
});
