import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createStream, sample } from '../../../src/core/distribution.js';
import { builtinScenario } from '../../../src/sim/scenario/builtin.js';
import { expectedPeakCcu, meanOf, scaleDemand } from '../../../src/sim/scenario/scale.js';
import { runScenario } from '../../../src/sim/world/run.js';

describe('meanOf', () => {
  it('matches the sample mean of each distribution', () => {
    const dists = [
      { kind: 'constant', value: 3 },
      { kind: 'uniform', min: 2, max: 10 },
      { kind: 'exponential', mean: 40 },
      { kind: 'lognormal', median: 100, p95: 300 },
      { kind: 'choice', weights: { '1': 0.7, '2': 0.2, '4': 0.1 } },
    ] as const;
    const stream = createStream(11);
    for (const d of dists) {
      let sum = 0;
      const n = 200_000;
      for (let i = 0; i < n; i++) {
        const v = sample(d, stream);
        sum += typeof v === 'string' ? Number(v) : v;
      }
      expect(sum / n / meanOf(d)).toBeCloseTo(1, 1);
    }
  });
});

describe('scaleDemand', () => {
  it('scales the expected peak CCU linearly', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.01, max: 100, noNaN: true }), (factor) => {
        const s = builtinScenario('diurnal');
        expect(expectedPeakCcu(scaleDemand(s, factor)) / expectedPeakCcu(s)).toBeCloseTo(factor, 6);
      }),
    );
  });

  it('predicts the peak CCU a run reaches (Little’s law), within 15 %', async () => {
    const s = builtinScenario('steady');
    const r = await runScenario(s);
    expect(r.metrics.peakCcu / expectedPeakCcu(s)).toBeGreaterThan(0.85);
    expect(r.metrics.peakCcu / expectedPeakCcu(s)).toBeLessThan(1.15);
  });
});

describe('the scale benchmark scenario (bench/scenarios/large-100k.json)', () => {
  it('parses, expects a 100k-CCU peak, and has the lobbies and ports for it', async () => {
    const { largeScenario } = await import('../../../bench/sim-large.js');
    const s = largeScenario(24);
    expect(s.durationMs).toBe(86_400_000);
    expect(Math.abs(expectedPeakCcu(s) - 100_000)).toBeLessThan(1_000);
    const lobbies = s.infrastructure.regions.reduce((n, r) => n + r.lobbyCountMax, 0);
    // 16 seats a lobby: room for 100k players even at half full.
    expect(lobbies * 16 * 0.5).toBeGreaterThan(100_000);
  });
});
