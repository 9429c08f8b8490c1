/**
 * The calibration's bounded quantile sketch: exact on whole numbers below 4,096 and on buckets of
 * equal values, within 1/4,096 of the exact nearest-rank value otherwise, and bounded in memory by
 * the values' range, not their number.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXACT_BELOW, QuantileSketch } from '../../src/services/quantiles.js';

/** The exact nearest-rank median and p95. */
const exact = (values: readonly number[]): { median: number; p95: number } => {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (q: number): number => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number;
  return { median: rank(0.5), p95: rank(0.95) };
};

const sketch = (values: readonly number[]): QuantileSketch => {
  const s = new QuantileSketch();
  for (const v of values) s.add(v);
  return s;
};

describe('QuantileSketch', () => {
  it('summarizes nothing as no samples, and a few values exactly', () => {
    expect(new QuantileSketch().summary()).toEqual({ samples: 0 });
    expect(sketch([1, 2, 3, 4]).summary()).toEqual({ samples: 4, median: 2, p95: 4 });
    expect(sketch([0, 800]).summary()).toEqual({ samples: 2, median: 0, p95: 800 });
    expect(sketch([3_599_200]).summary()).toEqual({ samples: 1, median: 3_599_200, p95: 3_599_200 });
  });

  it('is exact on whole numbers below EXACT_BELOW (negative ones too)', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: -EXACT_BELOW + 1, max: EXACT_BELOW - 1 }), { minLength: 1 }), (values) => {
      expect(sketch(values).summary()).toEqual({ samples: values.length, ...exact(values) });
    }));
  });

  it('is within 1/4,096 (plus rounding) of the exact median and p95 of any whole numbers', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { minLength: 1 }), (values) => {
      const got = sketch(values).summary();
      const want = exact(values);
      expect(Math.abs((got.median as number) - want.median)).toBeLessThanOrEqual(want.median / 4_096 + 0.5);
      expect(Math.abs((got.p95 as number) - want.p95)).toBeLessThanOrEqual(want.p95 / 4_096 + 0.5);
    }));
  });

  it('holds a bounded number of buckets whatever the number of values (a week of sessions)', () => {
    const s = new QuantileSketch();
    // Deterministic values spread over 1 s .. 24 h, a million of them.
    for (let i = 0; i < 1_000_000; i++) s.add(Math.round(1_000 * 86_400 ** ((i * 0.6180339887) % 1)));
    expect(s.summary().samples).toBe(1_000_000);
    expect(s.buckets).toBeLessThanOrEqual(35_000);
  });
});
