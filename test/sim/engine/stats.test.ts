import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addToHistogram, addToSummary, EMPTY_SUMMARY, emptyHistogram, histogramOf, percentiles, sampleSeries, summaryOf, ValueCounts,
} from '../../../src/sim/engine/stats.js';

const values = fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 300 });

describe('percentiles', () => {
  it('match a sort-based nearest-rank oracle and leave the input alone', () => {
    fc.assert(
      fc.property(values, fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 5 }), (xs, ps) => {
        const copy = xs.slice();
        const sorted = xs.slice().sort((a, b) => a - b);
        const oracle = ps.map((p) => sorted[Math.max(1, Math.ceil((p * xs.length) / 100)) - 1]);
        expect(percentiles(xs, ps).map((v) => v + 0)).toEqual(oracle.map((v) => (v ?? NaN) + 0)); // -0 and 0 tie
        expect(xs).toEqual(copy);
      }),
    );
  });

  it('uses nearest rank on a known example and refuses bad percentiles', () => {
    expect(percentiles([5, 1, 4, 2, 3], [50, 95, 99])).toEqual([3, 5, 5]);
    expect(percentiles([], [50])).toEqual([NaN]);
    expect(() => percentiles([1], [101])).toThrow(RangeError);
  });
});

describe('histogram', () => {
  it('counts every value exactly once; batch equals incremental', () => {
    fc.assert(
      fc.property(values, (xs) => {
        const spec = { min: -1000, max: 1000, bins: 7 };
        const batch = histogramOf(spec, xs);
        expect(batch.counts.reduce((a, b) => a + b, 0) + batch.under + batch.over).toBe(xs.length);
        expect(xs.reduce(addToHistogram, emptyHistogram(spec))).toEqual(batch);
      }),
    );
    expect(() => emptyHistogram({ min: 1, max: 1, bins: 3 })).toThrow(RangeError);
  });
});

describe('time series', () => {
  it('samples the step function at each tick', () => {
    const changes = [{ time: 15, value: 3 }, { time: 20, value: 4 }, { time: 21, value: 5 }];
    expect(sampleSeries(changes, { start: 0, interval: 10, end: 30, initial: 1 }).values).toEqual([1, 1, 4, 5]);
  });
});

describe('summary', () => {
  it('matches count, min, max and mean of the values', () => {
    fc.assert(
      fc.property(values, (xs) => {
        const s = summaryOf(xs);
        expect(s.count).toBe(xs.length);
        expect(s.min).toBe(Math.min(...xs));
        expect(s.max).toBe(Math.max(...xs));
        const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
        expect(Math.abs(s.mean - mean)).toBeLessThanOrEqual(1e-6 * (1 + Math.abs(mean)) + 1e-3);
      }),
    );
    expect(addToSummary(addToSummary(EMPTY_SUMMARY, 2), 4)).toEqual({ count: 2, min: 2, max: 4, mean: 3 });
  });
});

describe('ValueCounts', () => {
  it('gives the percentiles of every value added, repeats included (property)', () => {
    const waits = fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 1, max: 4 })), { maxLength: 200 });
    fc.assert(
      fc.property(waits, fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 5 }), (added, ps) => {
        const counts = new ValueCounts();
        const all: number[] = [];
        for (const [v, times] of added) {
          counts.add(v, times);
          for (let i = 0; i < times; i++) all.push(v);
        }
        expect(counts.count).toBe(all.length);
        expect(counts.distinct).toBe(new Set(all).size);
        expect(counts.percentiles(ps)).toEqual(percentiles(all, ps));
      }),
    );
  });

  it('holds one entry per distinct value however many are added, and checks its percentiles', () => {
    const counts = new ValueCounts();
    for (let i = 0; i < 100_000; i++) counts.add(i % 7);
    counts.add(3, 0);
    expect([counts.count, counts.distinct]).toEqual([100_000, 7]);
    expect(counts.percentiles([0, 50, 100])).toEqual([0, 3, 6]);
    expect(new ValueCounts().percentiles([50])).toEqual([NaN]);
    expect(() => counts.percentiles([101])).toThrow(RangeError);
  });
});
