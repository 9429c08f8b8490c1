import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PortBitset, popcount32 } from '../../../src/core/ports/bitset.js';

// 1000..4499: four chunks of 1,024 ports, the last one partial (428 ports).
const MIN = 1000;
const MAX = 4499;
const port = fc.oneof(
  fc.integer({ min: MIN, max: MAX }),
  // Near word and chunk boundaries, and just outside the interval.
  fc.constantFrom(MIN, MIN + 31, MIN + 32, MIN + 1023, MIN + 1024, MIN + 2047, MIN + 3071, MIN + 3072, MAX, MAX - 1),
);
const range = fc
  .tuple(fc.integer({ min: MIN - 50, max: MAX + 50 }), fc.integer({ min: 0, max: 2200 }))
  .map(([min, len]) => ({ min, max: min + len }));

type Op = { readonly kind: 'set' | 'clear'; readonly ports: readonly number[] } | { readonly kind: 'fill'; readonly min: number; readonly max: number };
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constantFrom('set' as const, 'clear' as const), ports: fc.array(port, { maxLength: 40 }) }),
  range.map((r) => ({ kind: 'fill' as const, min: Math.max(MIN, r.min), max: Math.min(MAX, r.max) })),
);

const portsOf = (min: number, max: number): number[] => Array.from({ length: Math.max(0, max - min + 1) }, (_, i) => min + i);

const apply = (b: PortBitset, model: Set<number>, o: Op): PortBitset => {
  const ports = o.kind === 'fill' ? portsOf(o.min, o.max) : o.ports;
  for (const p of ports) if (o.kind === 'clear') model.delete(p); else model.add(p);
  return o.kind === 'clear' ? b.clearMany(ports) : b.setMany(ports);
};

const chunksOf = (b: PortBitset): readonly unknown[] => (b as unknown as { readonly chunks: readonly unknown[] }).chunks;

describe('PortBitset', () => {
  it('agrees with a Set on has, used, toArray, countUsed and nthFree', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 25 }), fc.array(range, { minLength: 1, maxLength: 5 }), fc.nat(), (ops, queries, kSeed) => {
        let b = PortBitset.create({ min: MIN, max: MAX });
        const model = new Set<number>();
        for (const o of ops) b = apply(b, model, o);
        expect(b.used).toBe(model.size);
        expect(b.toArray()).toEqual([...model].sort((x, y) => x - y));
        for (const q of queries) {
          const inRange = portsOf(Math.max(q.min, MIN), Math.min(q.max, MAX));
          const free = inRange.filter((p) => !model.has(p));
          expect(b.countUsed(q)).toBe(inRange.length - free.length);
          expect(b.countFree(q)).toBe(free.length);
          const k = free.length === 0 ? 0 : kSeed % free.length;
          expect(b.nthFree(q, k)).toBe(free[k]);
          expect(b.nthFree(q, free.length)).toBeUndefined();
          if (free.length > 0) expect(b.nthFree(q, free.length - 1)).toBe(free[free.length - 1]);
        }
        for (const p of [MIN - 1, MIN, MIN + 1024, MAX, MAX + 1]) expect(b.has(p)).toBe(model.has(p));
      }),
    );
  });

  it('never changes an old value', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 15 }), fc.array(op, { maxLength: 15 }), (before, after) => {
        let b = PortBitset.create({ min: MIN, max: MAX });
        const model = new Set<number>();
        for (const o of before) b = apply(b, model, o);
        const snapshot = b.toArray();
        const used = b.used;
        let c = b;
        for (const o of after) c = apply(c, new Set(), o);
        expect(b.toArray()).toEqual(snapshot);
        expect(b.used).toBe(used);
      }),
    );
  });

  it('copies only the touched chunk and shares the others', () => {
    const a = PortBitset.create({ min: 20000, max: 31999 }).setMany([20000, 25000, 31999]);
    const b = a.setMany([26000]);
    const [ca, cb] = [chunksOf(a), chunksOf(b)];
    expect(ca.length).toBe(12);
    const changed = ca.map((c, i) => c !== cb[i]).filter(Boolean).length;
    expect(changed).toBe(1);
    expect(b.clearMany([26000]).toArray()).toEqual(a.toArray());
    expect(Object.isFrozen(ca)).toBe(true);
  });

  it('returns itself when nothing changes', () => {
    const a = PortBitset.create({ min: 1, max: 100 }).setMany([5, 6]);
    expect(a.setMany([5, 6])).toBe(a);
    expect(a.clearMany([7, 1000, -3])).toBe(a);
    expect(a.setMany([])).toBe(a);
  });

  it('rejects setting a port outside its interval and bad intervals', () => {
    const a = PortBitset.create({ min: 1, max: 100 });
    expect(() => a.setMany([101])).toThrow(RangeError);
    expect(() => a.setMany([1.5])).toThrow(RangeError);
    expect(() => PortBitset.create({ min: 10, max: 9 })).toThrow(RangeError);
    expect(a.has(0)).toBe(false);
    expect(a.nthFree({ min: 1, max: 100 }, -1)).toBeUndefined();
    expect(a.countFree({ min: 200, max: 300 })).toBe(0);
  });

  it('selects the k-th free port in a nearly full 12,000-port set', () => {
    const all = portsOf(20000, 31999);
    const b = PortBitset.create({ min: 20000, max: 31999 }).setMany(all).clearMany([20001, 27777, 31999]);
    expect(b.countFree({ min: 20000, max: 31999 })).toBe(3);
    expect([0, 1, 2, 3].map((k) => b.nthFree({ min: 20000, max: 31999 }, k))).toEqual([20001, 27777, 31999, undefined]);
    expect(b.nthFree({ min: 26000, max: 31999 }, 0)).toBe(27777);
  });

  it('counts bits like a naive loop', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (x) => {
        let n = 0;
        for (let i = 0; i < 32; i++) n += (x >>> i) & 1;
        expect(popcount32(x)).toBe(n);
      }),
    );
  });
});
