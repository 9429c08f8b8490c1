import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Lobby } from '../../../src/core/lobby/lobby.js';
import { choose, EMPTY_INDEX, rankOf, reindex, type RoutingIndex } from '../../../src/core/routing/index.js';
import { EMPTY_BUCKETS, bucketList } from '../../../src/core/routing/pool.js';
import { makeLobby, routingRows } from '../helpers.js';

const lobby = (id: string, over: Partial<Lobby> = {}): Lobby =>
  makeLobby({ id, maxPlayers: { normal: 4, direct: 6, party: 5 }, ...over });

const build = (lobbies: readonly Lobby[]): RoutingIndex =>
  lobbies.reduce<RoutingIndex>((idx, l) => reindex(idx, undefined, l, 'v1'), EMPTY_INDEX);

const BIG = { normal: 256, direct: 256, party: 256 };
// poolKey('v1', 'default', 'local', undefined), written out: no core call while the file loads.
const POOL = 'v1\u0001default\u0001local\u0001';
const NO_TAGS = {};
const TAGS = { x: { t: 'x' }, y: { t: 'y' } };

describe('routing index', () => {
  it('chooses the fullest lobby with room, per limit and need', () => {
    const ls = [lobby('a', { playerCount: 1 }), lobby('b', { playerCount: 3 }), lobby('c', { playerCount: 4 })];
    const idx = build(ls);
    const of = (id: string) => ls.find((l) => l.id === id);
    expect(choose(idx, POOL, 4, 1, {}, of)).toBe('b');
    expect(choose(idx, POOL, 4, 2, {}, of)).toBe('a');
    expect(choose(idx, POOL, 5, 1, {}, of)).toBe('c'); // a party limit above normal reaches c
    expect(choose(idx, POOL, 4, 4, {}, of)).toBeUndefined();
  });

  it('leaves out closed, private, outdated, stopping and full lobbies', () => {
    const idx = build([
      lobby('closed', { closed: true }),
      lobby('private', { publicity: 'private' }),
      lobby('old', { versionId: 'v0' }),
      lobby('stopping', { lifecycle: { status: 'stopping', stoppingAt: 0, reason: 'idle' } }),
      lobby('full', { playerCount: 5 }),
    ]);
    expect(idx.size).toBe(0);
  });

  it('matches tags through the smallest tag sub-index, and moves lobbies between buckets as they fill', () => {
    const a = lobby('a', { tags: { map: 'dust', mode: 'ranked' }, playerCount: 2 });
    const b = lobby('b', { tags: { map: 'dust' }, playerCount: 3 });
    let idx = build([a, b]);
    const ls = new Map([[a.id, a], [b.id, b]]);
    const of = (id: string) => ls.get(id);
    expect(choose(idx, POOL, 4, 1, { map: 'dust' }, of)).toBe('b');
    expect(choose(idx, POOL, 4, 1, { map: 'dust', mode: 'ranked' }, of)).toBe('a');
    expect(choose(idx, POOL, 4, 1, { map: 'inferno' }, of)).toBeUndefined();
    const fuller = { ...a, playerCount: 3 };
    idx = reindex(idx, a, fuller, 'v1');
    ls.set('a', fuller);
    expect(choose(idx, POOL, 4, 2, { map: 'dust', mode: 'ranked' }, of)).toBeUndefined();
    const ranked = bucketList(idx.get(POOL)?.tags.get('mode\u0001ranked') ?? EMPTY_BUCKETS);
    expect(ranked.find((b) => b.rank === rankOf(3, false))?.ids.has('a')).toBe(true); // a is still starting
  });

  it('prefers a ready lobby to one still starting when both are as full, and moves a lobby when it becomes ready', () => {
    // Both orders of the ids, so the tie is not broken by the bucket's own (hash) order.
    for (const [first, second] of [['a', 'b'], ['b', 'a']] as const) {
      const starting = lobby(first); // `makeLobby` lobbies are still starting
      const ready = lobby(second, { lifecycle: { status: 'ready', readyAt: 0 } });
      let idx = build([starting, ready]);
      const ls = new Map([[starting.id, starting], [ready.id, ready]]);
      const of = (id: string) => ls.get(id);
      expect(choose(idx, POOL, 4, 1, {}, of)).toBe(second);
      // Fill still comes first: a fuller lobby that is starting beats an emptier ready one.
      const fuller = { ...starting, playerCount: 1 };
      idx = reindex(idx, starting, fuller, 'v1');
      ls.set(first, fuller);
      expect(choose(idx, POOL, 4, 1, {}, of)).toBe(first);
      const nowReady: Lobby = { ...fuller, lifecycle: { status: 'ready', readyAt: 1 } };
      idx = reindex(idx, fuller, nowReady, 'v1');
      expect(bucketList(idx.get(POOL)?.all ?? EMPTY_BUCKETS).map((b) => b.rank)).toEqual([rankOf(0, true), rankOf(1, true)]);
    }
  });

  it('built incrementally equals built from scratch, for any sequence of changes', () => {
    const change = fc.record({
      id: fc.constantFrom('a', 'b', 'c', 'd'),
      // Counts on both sides of the 16-count chunk boundaries, up to a 256-player lobby.
      playerCount: fc.constantFrom(0, 1, 3, 5, 7, 8, 9, 14, 15, 16, 17, 31, 32, 33, 200, 254, 255, 256),
      ready: fc.boolean(),
      closed: fc.boolean(),
      tag: fc.constantFrom(undefined, 'x', 'y'),
      gone: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(change, { maxLength: 50 }), (changes) => {
        let idx = EMPTY_INDEX;
        const current = new Map<string, Lobby>();
        for (const c of changes) {
          const before = current.get(c.id);
          // Tags objects are reused, as a lobby's are across its changes, so the in-place move path runs.
          const tags = c.tag === undefined ? NO_TAGS : TAGS[c.tag];
          const lifecycle: Lobby['lifecycle'] = c.ready ? { status: 'ready', readyAt: 0 } : { status: 'creating' };
          const after = c.gone ? undefined : lobby(c.id, { playerCount: c.playerCount, lifecycle, closed: c.closed, tags: before?.tags ?? tags, maxPlayers: BIG });
          idx = reindex(idx, before, after, 'v1');
          if (after) current.set(c.id, after);
          else current.delete(c.id);
        }
        const all = [...current.values()];
        expect(routingRows(idx)).toEqual(routingRows(build(all)));
        // The fullest lobby with room, a ready one among equally full ones, agrees with a scan, for any limit and need.
        const of = (id: string) => current.get(id);
        const rankOfLobby = (l: Lobby): number => rankOf(l.playerCount, l.lifecycle.status === 'ready');
        for (const [limit, need] of [[256, 1], [256, 2], [16, 1], [33, 17], [6, 1]] as const) {
          const fits = all.filter((l) => !l.closed && l.playerCount + need <= limit && l.playerCount < 256);
          const best = Math.max(-1, ...fits.map(rankOfLobby));
          const chosen = of(choose(idx, POOL, limit, need, {}, of) ?? '');
          if (best < 0) expect(chosen).toBeUndefined();
          else expect(chosen === undefined ? undefined : rankOfLobby(chosen)).toBe(best);
        }
      }),
    );
  });
});
