import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Ticks } from '../../../src/sim/charts/scale.js';
import { durationTicks, extent, linearScale, niceStep, niceTicks } from '../../../src/sim/charts/scale.js';

/** Checks the nice-ticks contract: 2–10 increasing, evenly spaced ticks that cover the domain snugly. */
function expectNice({ ticks, step }: Ticks, min: number, max: number): void {
  expect(ticks.length).toBeGreaterThanOrEqual(2);
  expect(ticks.length).toBeLessThanOrEqual(10);
  expect(step).toBeGreaterThan(0);
  const tol = step * 1e-6;
  ticks.forEach((t, i) => {
    if (i === 0) return;
    const gap = t - (ticks[i - 1] ?? NaN);
    expect(gap).toBeGreaterThan(0);
    expect(Math.abs(gap - step)).toBeLessThanOrEqual(tol + Math.abs(t) * 1e-11);
  });
  const first = ticks[0] ?? NaN;
  const last = ticks[ticks.length - 1] ?? NaN;
  expect(first).toBeLessThanOrEqual(min + tol + Math.abs(min) * 1e-11);
  expect(last).toBeGreaterThanOrEqual(max - tol - Math.abs(max) * 1e-11);
  // Snug unless the domain was too narrow and had to be widened.
  if (max - min > 1e-6 * Math.max(1, Math.abs(min), Math.abs(max))) {
    expect(first).toBeGreaterThan(min - step - tol);
    expect(last).toBeLessThan(max + step + tol);
  }
}

const value = fc.double({ min: -1e12, max: 1e12, noNaN: true, noDefaultInfinity: true });

describe('niceTicks', () => {
  it('gives round ticks for a typical domain', () => {
    expect(niceTicks(3, 97).ticks).toEqual([0, 25, 50, 75, 100]);
    expect(niceTicks(0, 1).ticks).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(niceTicks(-0.3, 0.7).ticks).toEqual([-0.5, -0.25, 0, 0.25, 0.5, 0.75]);
    expect(niceTicks(0, 3_400_000).ticks).toEqual([0, 1e6, 2e6, 3e6, 4e6]);
  });

  it('is nice for any finite domain (property)', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        expectNice(niceTicks(a, b), Math.min(a, b), Math.max(a, b));
      }),
    );
  });

  it('widens zero-width and survives non-finite or huge bounds', () => {
    expectNice(niceTicks(5, 5), 5, 5);
    expectNice(niceTicks(0, 0), 0, 0);
    expect(niceTicks(NaN, Infinity).ticks.length).toBeGreaterThanOrEqual(2);
    const huge = niceTicks(-Number.MAX_VALUE, Number.MAX_VALUE);
    expect(huge.ticks.every(Number.isFinite)).toBe(true);
  });

  it('niceStep is 1, 2, 2.5 or 5 times a power of ten and at least the raw step', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-9, max: 1e12, noNaN: true }), (raw) => {
        const step = niceStep(raw);
        expect(step).toBeGreaterThanOrEqual(raw * (1 - 1e-12));
        expect(step).toBeLessThanOrEqual(raw * 2.5);
      }),
    );
  });
});

describe('durationTicks', () => {
  it('puts ticks on round durations', () => {
    expect(durationTicks(0, 86_400_000).ticks).toEqual([0, 6, 12, 18, 24].map((h) => h * 3_600_000));
    expect(durationTicks(0, 50 * 60_000).step).toBe(600_000);
  });

  it('is nice for any time span up to a year (property)', () => {
    const ms = fc.double({ min: 0, max: 365 * 86_400_000, noNaN: true });
    fc.assert(
      fc.property(ms, ms, (a, b) => {
        expectNice(durationTicks(a, b), Math.min(a, b), Math.max(a, b));
      }),
    );
  });
});

describe('extent and linearScale', () => {
  it('ignores non-finite values', () => {
    expect(extent([3, NaN, -1, Infinity])).toEqual([-1, 3]);
    expect(extent([NaN])).toBeUndefined();
  });

  it('maps linearly and centres a zero-width domain', () => {
    expect(linearScale([0, 10], [0, 100])(2.5)).toBe(25);
    expect(linearScale([0, 10], [100, 0])(10)).toBe(0);
    expect(linearScale([4, 4], [0, 100])(4)).toBe(50);
  });
});
