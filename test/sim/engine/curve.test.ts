import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextArrival, rateAt, type RateCurve } from '../../../src/sim/engine/curve.js';
import { createStream } from '../../../src/core/distribution.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const seed = fc.integer({ min: 0, max: 0xffffffff });

const count = (curve: RateCurve, end: number, s: number): number => {
  const stream = createStream(s);
  let n = 0;
  for (let t = nextArrival(curve, 0, stream); t !== undefined && t < end; t = nextArrival(curve, t, stream)) n += 1;
  return n;
};

/** ∫ rate dt in arrivals, by a midpoint sum (an oracle independent of the thinning). */
const integral = (curve: RateCurve, end: number, step = MINUTE): number => {
  let total = 0;
  for (let t = 0; t < end; t += step) total += (rateAt(curve, t + step / 2) * Math.min(step, end - t)) / MINUTE;
  return total;
};

const daily: RateCurve = {
  kind: 'piecewise',
  period: DAY,
  points: [
    { at: 2 * 60 * MINUTE, perMinute: 2 },
    { at: 9 * 60 * MINUTE, perMinute: 8 },
    { at: 20 * 60 * MINUTE, perMinute: 20 },
    { at: 23 * 60 * MINUTE, perMinute: 5 },
  ],
};

describe('rateAt', () => {
  it('interpolates, holds the ends and wraps over the period', () => {
    const ramp: RateCurve = { kind: 'piecewise', points: [{ at: 1000, perMinute: 0 }, { at: 2000, perMinute: 10 }] };
    expect([rateAt(ramp, 0), rateAt(ramp, 1500), rateAt(ramp, 5000)]).toEqual([0, 5, 10]);
    expect(rateAt(daily, 9 * 60 * MINUTE + DAY)).toBe(8);
    expect(rateAt(daily, 0)).toBeCloseTo(5 + (2 - 5) * (1 / 3), 10);
    expect(rateAt(daily, 23.5 * 60 * MINUTE)).toBeCloseTo(5 + (2 - 5) * (0.5 / 3), 10);
  });
});

describe('nextArrival', () => {
  it('counts over a long window match the integral within 5% (constant curve)', () => {
    fc.assert(
      fc.property(seed, fc.double({ min: 5, max: 60, noNaN: true }), (s, perMinute) => {
        const curve: RateCurve = { kind: 'constant', perMinute };
        const end = (20_000 / perMinute) * MINUTE;
        const expected = integral(curve, end);
        expect(Math.abs(count(curve, end, s) - expected)).toBeLessThanOrEqual(0.05 * expected);
      }),
      { numRuns: 10 },
    );
  });

  it('counts over a long window match the integral within 5% (periodic piecewise curve)', () => {
    fc.assert(
      fc.property(seed, (s) => {
        const end = 2 * DAY; // ~ 22k arrivals
        const expected = integral(daily, end);
        expect(expected).toBeGreaterThan(15_000);
        expect(Math.abs(count(daily, end, s) - expected)).toBeLessThanOrEqual(0.05 * expected);
      }),
      { numRuns: 10 },
    );
  });

  it('is strictly after t, deterministic per seed, and undefined when the rate stays 0', () => {
    fc.assert(
      fc.property(seed, fc.nat({ max: DAY }), (s, t) => {
        const a = nextArrival(daily, t, createStream(s));
        expect(a).toBeGreaterThan(t);
        expect(nextArrival(daily, t, createStream(s))).toBe(a);
      }),
    );
    const stream = createStream(1);
    expect(nextArrival({ kind: 'constant', perMinute: 0 }, 0, stream)).toBeUndefined();
    const fading: RateCurve = { kind: 'piecewise', points: [{ at: 0, perMinute: 10 }, { at: MINUTE, perMinute: 0 }] };
    expect(nextArrival(fading, MINUTE, stream)).toBeUndefined();
    for (let t = nextArrival(fading, 0, stream); t !== undefined; t = nextArrival(fading, t, stream)) expect(t).toBeLessThan(MINUTE);
    expect(() => nextArrival({ kind: 'constant', perMinute: 10 }, 0, stream, 5)).toThrow(RangeError);
  });
});
