import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCompact, formatDuration, formatElapsed, tickFormatter } from '../../../src/sim/charts/format.js';
import { durationTicks, niceTicks } from '../../../src/sim/charts/scale.js';

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

describe('formatElapsed', () => {
  const MIN = 60_000;
  const H = 60 * MIN;

  it('labels time in seconds, minutes, hours, and days from 48 h', () => {
    const cases: [number, string][] = [
      [0, '0'], [30_000, '30 s'], [90_000, '1 min 30 s'], [15 * MIN, '15 min'], [30 * MIN, '30 min'], [H, '1 h'], [90 * MIN, '1 h 30 min'],
      [2 * H, '2 h'], [24 * H, '24 h'], [47 * H, '47 h'], [48 * H, '2 d'], [84 * H, '3 d 12 h'], [250, '250 ms'], [-15 * MIN, '-15 min'],
    ];
    expect(cases.map(([ms]) => formatElapsed(ms))).toEqual(cases.map(([, label]) => label));
    expect(formatElapsed(NaN)).toBe('NaN');
  });

  it('labels the ticks of any time axis from 5 s to 8 days distinctly, with no raw milliseconds (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 5_000, max: 8 * 24 * H }), (end) => {
        const labels = durationTicks(0, end).ticks.map(formatElapsed);
        expect(new Set(labels).size).toBe(labels.length);
        for (const label of labels) expect(label).toMatch(/^(0|(\d+ (d|h|min|s) ?)+)$/);
      }),
    );
  });
});
