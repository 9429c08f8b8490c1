import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventQueue } from '../../../src/sim/engine/queue.js';
import { Simulation, VirtualClock } from '../../../src/sim/engine/clock.js';

describe('VirtualClock', () => {
  it('reads the last popped time and moves only on pop', () => {
    const q = new EventQueue<string>(100);
    const { now } = new VirtualClock(q);
    expect(now()).toBe(100);
    q.push(250, 'a');
    expect(now()).toBe(100);
    q.pop();
    expect(now()).toBe(250);
  });
});

describe('Simulation', () => {
  it('runs events in order, handlers may schedule more, and the clock never goes backwards', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 50 }), fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 50 }), (initial, delays) => {
        const sim = new Simulation<number>(0);
        initial.forEach((t, i) => sim.schedule(t, i));
        const seen: number[] = [];
        let spawned = 0;
        sim.runUntil(2000, (time) => {
          expect(sim.now()).toBe(time);
          expect(sim.clock.now()).toBe(time);
          if (seen.length > 0) expect(time).toBeGreaterThanOrEqual(seen[seen.length - 1] ?? 0);
          seen.push(time);
          const delay = delays[spawned];
          if (delay !== undefined) {
            spawned += 1;
            sim.scheduleIn(delay, -1);
          }
          expect(() => sim.schedule(time - 1, -2)).toThrow(RangeError);
        });
        expect(seen.length).toBe(initial.length + spawned);
      }),
    );
  });

  it('stops at the end of the window, leaving later events queued', () => {
    const sim = new Simulation<string>(0);
    sim.schedule(5, 'a');
    sim.schedule(5, 'b');
    sim.schedule(20, 'c');
    const seen: string[] = [];
    expect(sim.runUntil(10, (_t, e) => seen.push(e))).toBe(2);
    expect(seen).toEqual(['a', 'b']);
    expect(sim.now()).toBe(5);
    expect(sim.pending).toBe(1);
    expect(() => sim.scheduleIn(-1, 'x')).toThrow(RangeError);
    expect(sim.next()?.event).toBe('c');
    expect(sim.now()).toBe(20);
    expect(sim.next()).toBeUndefined();
  });
});
