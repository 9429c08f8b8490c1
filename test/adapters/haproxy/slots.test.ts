import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SlotTable } from '../../../src/adapters/haproxy/slots.js';

type Op = { readonly kind: 'assign' | 'release'; readonly key: string };

const ops = (keys: number): fc.Arbitrary<Op[]> =>
  fc.array(fc.record({ kind: fc.constantFrom<Op['kind']>('assign', 'release'), key: fc.integer({ min: 0, max: keys - 1 }).map((i) => `http r${i}.x`) }), { maxLength: 80 });

/**
 * The rule in other words than the table's queue: each slot remembers when it was last freed
 * (never-used slots: before anything, lowest first); a new route gets the slot free the longest.
 */
class Model {
  readonly owner: Array<string | undefined>;
  readonly freedAt: number[];
  #tick = 0;

  constructor(size: number) {
    this.owner = Array.from({ length: size }, () => undefined);
    this.freedAt = Array.from({ length: size }, (_, i) => i - size);
  }

  assign(key: string): number | undefined {
    const held = this.owner.indexOf(key);
    if (held >= 0) return held;
    let best: number | undefined;
    this.owner.forEach((o, slot) => {
      if (o === undefined && (best === undefined || (this.freedAt[slot] ?? 0) < (this.freedAt[best] ?? 0))) best = slot;
    });
    if (best !== undefined) this.owner[best] = key;
    return best;
  }

  release(key: string): number | undefined {
    const slot = this.owner.indexOf(key);
    if (slot < 0) return undefined;
    this.owner[slot] = undefined;
    this.freedAt[slot] = (this.#tick += 1);
    return slot;
  }
}

describe('SlotTable', () => {
  it('answers every assign and release as the rule says: the slot held, else the one free the longest, none when full', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), ops(9), (size, run) => {
        const table = new SlotTable(size);
        const model = new Model(size);
        for (const op of run) expect(table[op.kind](op.key)).toBe(model[op.kind](op.key));
      }),
    );
  });

  it('never lends a slot to two routes, keeps every bound route on exactly one slot, and stays within its size', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), ops(9), (size, run) => {
        const table = new SlotTable(size);
        const bound = new Map<string, number>();
        for (const op of run) {
          const slot = table[op.kind](op.key);
          if (op.kind === 'assign' && slot !== undefined) {
            expect(bound.get(op.key) ?? slot).toBe(slot);
            bound.set(op.key, slot);
          }
          if (op.kind === 'release') bound.delete(op.key);
          const held = [...table.held()];
          expect(new Map(held)).toEqual(bound);
          expect(new Set(held.map(([, s]) => s)).size).toBe(held.length);
          for (const [, s] of held) expect(s >= 0 && s < size).toBe(true);
          expect(held.length).toBeLessThanOrEqual(size);
        }
      }),
    );
  });

  it('refuses a new route exactly when every slot is held, and takes it again once one is freed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.nat(), (size, pick) => {
        const table = new SlotTable(size);
        for (let i = 0; i < size; i += 1) expect(table.assign(`http r${i}.x`)).toBe(i);
        expect(table.assign('http late.x')).toBeUndefined();
        expect(table.assign(`http r${pick % size}.x`)).toBe(pick % size);
        expect(table.release(`http r${pick % size}.x`)).toBe(pick % size);
        expect(table.slotOf(`http r${pick % size}.x`)).toBeUndefined();
        expect(table.assign('http late.x')).toBe(pick % size);
      }),
    );
  });

  it('hands a freed slot out only after every slot that was free when it was freed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 8 }), fc.nat(), (size, pick) => {
        const table = new SlotTable(size);
        const key = `http r${pick % size}.x`;
        for (let i = 0; i <= pick % size; i += 1) table.assign(`http r${i}.x`);
        const freed = table.release(key);
        const next = Array.from({ length: size - (pick % size) }, (_, i) => table.assign(`http n${i}.x`));
        expect(next.slice(0, -1)).not.toContain(freed);
        expect(next.at(-1)).toBe(freed);
      }),
    );
  });
});
