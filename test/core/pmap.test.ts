import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashKey, PMap } from '../../src/core/pmap.js';

type Op = { kind: 'set'; key: string | number; value: number } | { kind: 'delete'; key: string | number };

// Few distinct keys so sets, overwrites and deletes collide often; numbers and strings mixed.
const key = fc.oneof(fc.integer({ min: 0, max: 40 }), fc.constantFrom('a', 'b', 'c', 'lobby-1', 'lobby-2', ''), fc.uuid());
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key, value: fc.integer() }),
  fc.record({ kind: fc.constant('delete' as const), key }),
);

describe('PMap', () => {
  it('agrees with a native Map over any sequence of sets and deletes', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        let m = PMap.empty<string | number, number>();
        const model = new Map<string | number, number>();
        for (const o of ops) {
          if (o.kind === 'set') {
            m = m.set(o.key, o.value);
            model.set(o.key, o.value);
          } else {
            m = m.delete(o.key);
            model.delete(o.key);
          }
          expect(m.size).toBe(model.size);
        }
        for (const [k, v] of model) expect(m.get(k)).toBe(v);
        expect(new Map(m.entries())).toEqual(model);
        expect([...m.keys()].length).toBe(model.size);
        if (model.size > 0) expect(model.has(m.first()?.[0] ?? Symbol() as never)).toBe(true);
        else expect(m.first()).toBeUndefined();
      }),
    );
  });

  it('never changes an old version', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.array(op, { maxLength: 60 }), (before, after) => {
        let m = PMap.empty<string | number, number>();
        for (const o of before) m = o.kind === 'set' ? m.set(o.key, o.value) : m.delete(o.key);
        const snapshot = [...m.entries()];
        let n = m;
        for (const o of after) n = o.kind === 'set' ? n.set(o.key, o.value) : n.delete(o.key);
        expect([...m.entries()]).toEqual(snapshot);
      }),
    );
  });

  it('returns itself when nothing changes', () => {
    const m = PMap.from<string, number>([['a', 1], ['b', 2]]);
    expect(m.set('a', 1)).toBe(m);
    expect(m.delete('zz')).toBe(m);
  });

  it('handles full 32-bit hash collisions', () => {
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; pair === undefined && i < 2_000_000; i++) {
      const k = `k${i}`;
      let h = 0x811c9dc5;
      for (let j = 0; j < k.length; j++) h = Math.imul(h ^ k.charCodeAt(j), 0x01000193);
      const prev = seen.get(h >>> 0);
      if (prev !== undefined) pair = [prev, k];
      else seen.set(h >>> 0, k);
    }
    // Sequential keys spread well under FNV-1a; within 2,000,000 of them one collision is certain in practice.
    expect(pair).toBeDefined();
    const [a, b] = pair as [string, string];
    let m = PMap.empty<string, number>().set(a, 1).set(b, 2).set('other', 3);
    expect([m.get(a), m.get(b), m.get('other')]).toEqual([1, 2, 3]);
    // Colliding keys iterate in key order, whatever the insertion order.
    const other = PMap.empty<string, number>().set('other', 3).set(b, 2).set(a, 1);
    expect([...other.keys()]).toEqual([...m.keys()]);
    expect([...m.keys()].filter((k) => k !== 'other')).toEqual([a, b].sort());
    m = m.delete(a);
    expect([m.get(a), m.get(b), m.size]).toEqual([undefined, 2, 2]);
  });

  it('iterates in an order that depends on the keys alone (forEach as entries)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.oneof(fc.uuid(), fc.integer()), { maxLength: 80 }), (keys) => {
        const a = PMap.from(keys.map((k) => [k, 0] as const));
        const b = PMap.from([...keys].reverse().map((k) => [k, 0] as const));
        expect([...a.keys()]).toEqual([...b.keys()]);
        const seen: (string | number)[] = [];
        a.forEach((_, k) => seen.push(k));
        expect(seen).toEqual([...a.keys()]);
      }),
    );
  });

  it('keeps the same first() for the same contents regardless of insertion order', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.uuid(), { minLength: 1, maxLength: 50 }), (keys) => {
        const a = PMap.from(keys.map((k) => [k, 0] as const));
        const b = PMap.from([...keys].reverse().map((k) => [k, 0] as const));
        expect(a.first()?.[0]).toBe(b.first()?.[0]);
      }),
    );
  });

  /** Trie order: the hashes' 5-bit chunks compared lowest first, then keys (numbers first) for equal hashes. */
  const trieBefore = (a: string | number, b: string | number): number => {
    const ha = hashKey(a);
    const hb = hashKey(b);
    for (let shift = 0; shift < 32; shift += 5) {
      const d = ((ha >>> shift) & 31) - ((hb >>> shift) & 31);
      if (d !== 0) return d;
    }
    if (typeof a !== typeof b) return typeof a === 'number' ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  };

  /** Pairs of distinct keys with one 32-bit hash, so collision nodes appear in large maps too. */
  const colliding = (() => {
    const seen = new Map<number, string>();
    const out: string[] = [];
    for (let i = 0; out.length < 8 && i < 3_000_000; i++) {
      const k = `k${i}`;
      const h = hashKey(k);
      const prev = seen.get(h);
      if (prev === undefined) seen.set(h, k);
      else out.push(prev, k);
    }
    return out;
  })();
  const wideKey = fc.oneof(fc.integer({ min: 0, max: 20_000 }), fc.uuid(), fc.constantFrom(...colliding));

  it('iterates in hash-trie order, whatever the history, and first() is the first of it', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), wideKey), { minLength: 500, maxLength: 3000 }), (ops) => {
        let m = PMap.empty<string | number, number>();
        const model = new Map<string | number, number>();
        ops.forEach(([del, k], i) => {
          if (del) {
            m = m.delete(k);
            model.delete(k);
          } else {
            m = m.set(k, i);
            model.set(k, i);
          }
        });
        const expected = [...model.keys()].sort(trieBefore);
        expect([...m.keys()]).toEqual(expected);
        expect(m.firstKey()).toBe(expected[0]);
        for (const [k, v] of model) expect(m.get(k)).toBe(v);
      }),
      { numRuns: 60 },
    );
  });

  /** The trie itself (white box): a canonical layout is what makes iteration order, diff and first() depend on contents alone. */
  const rootOf = (m: PMap<string | number, number>): unknown => (m as unknown as { root: unknown }).root;

  it('builds the same trie for the same contents, whatever the history (deletes compact, collisions sort)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), wideKey), { minLength: 100, maxLength: 1500 }), (ops) => {
        let m = PMap.empty<string | number, number>();
        const model = new Map<string | number, number>();
        for (const [del, k] of ops) {
          if (del) {
            m = m.delete(k);
            model.delete(k);
          } else {
            m = m.set(k, 1);
            model.set(k, 1);
          }
        }
        // The same contents inserted fresh, in trie order and in reverse: the same nodes.
        const keys = [...model.keys()].sort(trieBefore);
        expect(rootOf(m)).toEqual(rootOf(PMap.from(keys.map((k) => [k, 1] as const))));
        expect(rootOf(m)).toEqual(rootOf(PMap.from([...keys].reverse().map((k) => [k, 1] as const))));
        // Everything deleted again: the empty map.
        let emptied = m;
        for (const k of keys) emptied = emptied.delete(k);
        expect(emptied.size).toBe(0);
        expect(rootOf(emptied)).toBeUndefined();
      }),
      { numRuns: 40 },
    );
  });

  it('a collision left alone in a branch by a delete moves up to where an insertion puts it', () => {
    const [a, b] = colliding as [string, string];
    const h = hashKey(a);
    // A key sharing the collision's first chunk but not its second: the collision goes one level down beside it.
    const c = Array.from({ length: 1_000_000 }, (_, i) => i).find((i) => ((hashKey(i) ^ h) & 31) === 0 && ((hashKey(i) ^ h) & (31 << 5)) !== 0);
    if (c === undefined) throw new Error('no key shares the first chunk');
    const m = PMap.from<string | number, number>([[a, 1], [b, 1], [c, 1]]).delete(c);
    expect(rootOf(m)).toEqual(rootOf(PMap.from<string | number, number>([[a, 1], [b, 1]])));
  });

  it('keeps every entry inline at the shallowest level its hash allows', () => {
    // Two keys whose hashes differ in their first 5 bits sit side by side in the root; a third
    // sharing a chunk with one of them pushes both one level down, and deleting it pulls the other back up.
    const keys = Array.from({ length: 200 }, (_, i) => `key-${i}`);
    const chunk = (k: string, level: number): number => (hashKey(k) >>> (5 * level)) & 31;
    const a = keys[0] ?? '';
    const b = keys.find((k) => chunk(k, 0) !== chunk(a, 0)) ?? '';
    const c = keys.find((k) => k !== a && chunk(k, 0) === chunk(a, 0)) ?? '';
    const two = PMap.from([[a, 1], [b, 2]]);
    const root = rootOf(two) as unknown[];
    expect(root.length).toBe(2 + 4);
    expect(root[1]).toBe(0);
    const three = two.set(c, 3);
    expect((rootOf(three) as unknown[]).length).toBe(2 + 2 + 1);
    expect(rootOf(three.delete(c))).toEqual(root);
    expect(rootOf(three.delete(c).delete(b).delete(a))).toBeUndefined();
  });

  it('diff reports exactly the keys whose values differ', () => {
    const op = fc.tuple(fc.boolean(), wideKey, fc.integer({ min: 0, max: 2 }));
    fc.assert(
      fc.property(fc.array(op, { minLength: 200, maxLength: 1500 }), fc.array(op, { maxLength: 60 }), (base, more) => {
        const apply = (m: PMap<string | number, number>, model: Map<string | number, number>, [del, k, v]: [boolean, string | number, number]) => {
          if (del) model.delete(k);
          else model.set(k, v);
          return del ? m.delete(k) : m.set(k, v);
        };
        const before = new Map<string | number, number>();
        let a = PMap.empty<string | number, number>();
        for (const o of base) a = apply(a, before, o);
        const after = new Map(before);
        let b = a;
        for (const o of more) b = apply(b, after, o);
        const reported = new Map<string | number, [number | undefined, number | undefined]>();
        a.diff(b, (k, x, y) => {
          expect(reported.has(k)).toBe(false);
          reported.set(k, [x, y]);
        });
        const expected = new Map<string | number, [number | undefined, number | undefined]>();
        for (const k of new Set([...before.keys(), ...after.keys()])) {
          if (before.get(k) !== after.get(k)) expected.set(k, [before.get(k), after.get(k)]);
        }
        expect(reported).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });
});
