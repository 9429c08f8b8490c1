import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCompact, formatDuration, tickFormatter } from '../../../src/sim/charts/format.js';
import { niceTicks } from '../../../src/sim/charts/scale.js';

describe('formatDuration', () => {
  it('formats h:mm, seconds when present and whole days', () => {
    const h = 3_600_000;
    expect([0, 6 * h, 26 * h, 90_000, -30 * 60_000].map(formatDuration)).toEqual(['0:00', '6:00', '1d 2:00', '0:01:30', '-0:30']);
    expect(formatDuration(NaN)).toBe('NaN');
  });
});

describe('formatCompact', () => {
  it('abbreviates large numbers', () => {
    expect([1234, 3_400_000, 2e9, 0.125, -1500, 0, 1e18].map(formatCompact)).toEqual(['1.2k', '3.4M', '2G', '0.13', '-1.5k', '0', '1.0e+18']);
  });
});

describe('tickFormatter', () => {
  it('uses one unit per axis', () => {
    const f = tickFormatter(niceTicks(0, 3_400_000));
    expect(f(0)).toBe('0');
    expect(f(1_000_000)).toBe('1M');
    expect(tickFormatter(niceTicks(0, 1500))(500)).toBe('0.5k');
  });

  it('labels distinct ticks distinctly (property)', () => {
    const v = fc.double({ min: -1e12, max: 1e12, noNaN: true });
    fc.assert(
      fc.property(v, v, (a, b) => {
        const ticks = niceTicks(a, b);
        const labels = ticks.ticks.map(tickFormatter(ticks));
        expect(new Set(labels).size).toBe(labels.length);
      }),
    );
  });
});
