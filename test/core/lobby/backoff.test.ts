import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BACKOFF_MAX_MS, backoffDelay, recordStartFailure, startBlocked } from '../../../src/core/lobby/backoff.js';

describe('start backoff', () => {
  it('tolerates one failure, then waits 2 s, doubling up to 5 min', () => {
    expect([0, 1, 2, 3, 4, 5, 9, 10, 11, 50].map(backoffDelay)).toEqual([0, 0, 2_000, 4_000, 8_000, 16_000, 256_000, 300_000, 300_000, 300_000]);
  });

  it('counts failures in a row and blocks until the wait is over', () => {
    const one = recordStartFailure(undefined, 1_000);
    expect(one).toEqual({ failures: 1, until: 1_000, lastFailureAt: 1_000 });
    expect(startBlocked(one, 1_000)).toBe(false);
    const two = recordStartFailure(one, 5_000);
    expect(two).toEqual({ failures: 2, until: 7_000, lastFailureAt: 5_000 });
    expect([startBlocked(two, 6_999), startBlocked(two, 7_000), startBlocked(undefined, 0)]).toEqual([true, false, false]);
  });

  it('never waits longer than the maximum, and never less after more failures', () => {
    fc.assert(fc.property(fc.nat(10_000), (n) => {
      const d = backoffDelay(n);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThanOrEqual(BACKOFF_MAX_MS);
      expect(backoffDelay(n + 1)).toBeGreaterThanOrEqual(d);
    }));
  });
});
