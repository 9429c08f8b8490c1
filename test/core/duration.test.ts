/** Durations as written on a command line or in an environment variable. */
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/core/duration.js';

describe('parseDuration', () => {
  it('reads a whole number and a unit', () => {
    expect([parseDuration('500ms'), parseDuration('90s'), parseDuration('15m'), parseDuration('24h'), parseDuration('7d'), parseDuration(' 2h ')]).toEqual([
      500, 90_000, 900_000, 86_400_000, 604_800_000, 7_200_000,
    ]);
    // Up to ten digits.
    expect(parseDuration('9999999999ms')).toBe(9_999_999_999);
    expect(parseDuration('1s')).toBe(1_000);
  });

  it('refuses anything else', () => {
    for (const bad of ['', '24', 'h', '0h', '-1h', '1.5h', '01h', '2 h', '3w', '1h30m', '12345678901d']) expect(parseDuration(bad), bad).toBeUndefined();
  });
});
