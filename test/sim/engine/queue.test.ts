import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventQueue } from '../../../src/sim/engine/queue.js';

const drain = <E>(q: EventQueue<E>) => {
  const out = [];
  for (let item = q.pop(); item !== undefined; item = q.pop()) out.push(item);
  return out;
};

describe('EventQueue', () => {
  it('pops in (time, seq) order; equal times keep insertion order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), (times) => {
        const q = new EventQueue<number>();
        times.forEach((t, i) => q.push(t, i));
        expect(q.size).toBe(times.length);
        const popped = drain(q);
        const oracle = times.map((time, i) => ({ time, seq: i, event: i })).sort((a, b) => a.time - b.time || a.seq - b.seq);
        expect(popped).toEqual(oracle);
        expect(q.size).toBe(0);
      }),
    );
  });

  it('interleaved pushes and pops never go back in time, and pushing into the past throws', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 0, max: 50 }), fc.constant('pop' as const)), { maxLength: 200 }), (ops) => {
        const q = new EventQueue<string>();
        let last = 0;
        for (const op of ops) {
          if (op === 'pop') {
            const item = q.pop();
            if (item !== undefined) {
              expect(item.time).toBeGreaterThanOrEqual(last);
              last = item.time;
            }
            expect(q.lastPopped).toBe(last);
          } else if (op < last) {
            expect(() => q.push(op, 'x')).toThrow(RangeError);
          } else {
            q.push(op, 'x');
          }
        }
      }),
    );
  });

  it('peeks without removing and rejects NaN, infinite and fractional times', () => {
    const q = new EventQueue<string>(10);
    expect(q.peek()).toBeUndefined();
    expect(q.pop()).toBeUndefined();
    expect(() => q.push(9, 'early')).toThrow(RangeError);
    expect(() => q.push(NaN, 'nan')).toThrow(RangeError);
    expect(() => q.push(Infinity, 'never')).toThrow(RangeError);
    expect(() => q.push(12.5, 'between')).toThrow(/whole number of milliseconds/);
    q.push(12, 'a');
    expect(q.peek()?.event).toBe('a');
    expect(q.size).toBe(1);
  });
});
