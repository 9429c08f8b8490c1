import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createStream, sample, split, type Distribution, type Stream } from '../../src/core/distribution.js';
import { percentiles } from '../../src/sim/engine/stats.js';

const N = 20_000;
const seed = fc.integer({ min: 0, max: 0xffffffff });
const draws = (s: Stream, n = 16): number[] => Array.from({ length: n }, () => s.u32());
const many = (dist: Distribution & { kind: Exclude<Distribution['kind'], 'choice'> }, s: Stream): number[] =>
  Array.from({ length: N }, () => sample(dist, s));
const near = (actual: number, expected: number, tolerance: number) =>
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(tolerance * Math.abs(expected));
const slow = { numRuns: 15 };

describe('streams', () => {
  it('same seed gives identical samples, different seeds differ', () => {
    fc.assert(
      fc.property(seed, seed, (a, b) => {
        const dist: Distribution = { kind: 'exponential', mean: 1000 };
        const one = createStream(a);
        const two = createStream(a);
        expect(Array.from({ length: 16 }, () => sample(dist, one))).toEqual(Array.from({ length: 16 }, () => sample(dist, two)));
        if (a !== b) expect(draws(createStream(a))).not.toEqual(draws(createStream(b)));
      }),
    );
  });

  it('a split stream is independent of draws on its parent and siblings', () => {
    fc.assert(
      fc.property(seed, fc.string(), fc.string(), fc.nat({ max: 50 }), (s, label, other, extra) => {
        const quiet = split(createStream(s), label);
        const expected = draws(quiet);
        const parent = createStream(s);
        draws(parent, extra);
        const sibling = split(parent, `${other}~`);
        const child = split(parent, label);
        const got: number[] = [];
        for (let i = 0; i < 16; i += 1) {
          draws(sibling, extra % 3);
          draws(parent, 1);
          got.push(child.u32());
        }
        expect(got).toEqual(expected);
        if (`${other}~` !== label) expect(draws(split(createStream(s), `${other}~`))).not.toEqual(expected);
      }),
    );
  });
});

describe('distributions over 20k samples', () => {
  it('constant is exact and uniform stays within bounds', () => {
    fc.assert(
      fc.property(seed, fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.double({ min: 0, max: 1e6, noNaN: true }), (s, min, width) => {
        const stream = createStream(s);
        expect(sample({ kind: 'constant', value: min }, stream)).toBe(min);
        const xs = many({ kind: 'uniform', min, max: min + width }, stream);
        expect(xs.filter((x) => !(x >= min && x <= min + width))).toEqual([]);
      }),
      slow,
    );
  });

  it('exponential mean is within 5%', () => {
    fc.assert(
      fc.property(seed, fc.double({ min: 1, max: 1e6, noNaN: true }), (s, mean) => {
        const xs = many({ kind: 'exponential', mean }, createStream(s));
        near(xs.reduce((a, b) => a + b, 0) / N, mean, 0.05);
      }),
      slow,
    );
  });

  it('lognormal median and p95 are within 5%', () => {
    fc.assert(
      fc.property(seed, fc.double({ min: 1, max: 1e6, noNaN: true }), fc.double({ min: 1.05, max: 3, noNaN: true }), (s, median, ratio) => {
        const p95 = median * ratio;
        const [m, q] = percentiles(many({ kind: 'lognormal', median, p95 }, createStream(s)), [50, 95]);
        near(m ?? NaN, median, 0.05);
        near(q ?? NaN, p95, 0.05);
      }),
      slow,
    );
  });

  it('picks fairly among subnormal weights (regression: u * total rounded to a few values)', () => {
    const stream = createStream(0);
    let first = 0;
    for (let i = 0; i < N; i += 1) if (sample({ kind: 'choice', weights: { ' ': 5e-324, '!': 5e-324 } }, stream) === ' ') first += 1;
    expect(Math.abs(first / N - 0.5)).toBeLessThanOrEqual(0.03);
  });

  it('choice frequencies are within 3% of the weights', () => {
    const weights = fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.double({ min: 0, max: 10, noNaN: true }), { minKeys: 1, maxKeys: 6 });
    fc.assert(
      fc.property(seed, weights.filter((w) => Object.values(w).some((x) => x > 0)), (s, w) => {
        const stream = createStream(s);
        const counts = new Map<string, number>();
        for (let i = 0; i < N; i += 1) {
          const key = sample({ kind: 'choice', weights: w }, stream);
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
        const total = Object.values(w).reduce((a, b) => a + b, 0);
        for (const [key, weight] of Object.entries(w)) {
          expect(Math.abs((counts.get(key) ?? 0) / N - weight / total)).toBeLessThanOrEqual(0.03);
        }
      }),
      slow,
    );
  });
});
