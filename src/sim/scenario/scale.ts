/**
 * Demand arithmetic: the expected concurrent players of a scenario (Little's law per demand
 * stream) and the scenario with every arrival curve scaled, e.g. to a target peak CCU.
 */
import { rateAt, type RateCurve } from '../engine/curve.js';
import { Z95, type Distribution } from '../../core/distribution.js';
import type { RegionDemand, Scenario } from './types.js';

/**
 * The mean of a distribution (a choice's keys are read as numbers, as party sizes are).
 *
 * @example
 * meanOf({ kind: 'uniform', min: 2, max: 4 }); // 3
 */
export const meanOf = (d: Distribution): number => {
  switch (d.kind) {
    case 'constant':
      return d.value;
    case 'uniform':
      return (d.min + d.max) / 2;
    case 'exponential':
      return d.mean;
    case 'lognormal': {
      const sigma = (Math.log(d.p95) - Math.log(d.median)) / Z95;
      return d.median * Math.exp((sigma * sigma) / 2);
    }
    case 'choice': {
      let total = 0;
      let weighted = 0;
      for (const [key, w] of Object.entries(d.weights)) {
        total += w;
        weighted += w * Number(key);
      }
      return total > 0 ? weighted / total : 0;
    }
  }
};

const MINUTE = 60_000;

/** Connected players one demand stream contributes at time `t` in steady state. */
const streamCcu = (d: RegionDemand, t: number): number =>
  rateAt(d.arrivals, t) * Math.max(1, meanOf(d.partySize)) * (meanOf(d.sessionMs) / MINUTE) * (1 - d.noShowShare);

/**
 * The highest expected CCU over the run (sampled every 5 minutes): arrivals per minute × players
 * per arrival × session minutes × the share that connects, summed over the demand streams.
 *
 * @example
 * expectedPeakCcu(builtinScenario('steady')); // ~1,300
 */
export const expectedPeakCcu = (scenario: Scenario): number => {
  const streams = Object.values(scenario.demand).flatMap((regions) => Object.values(regions));
  let peak = 0;
  for (let t = 0; t <= scenario.durationMs; t += 5 * MINUTE) {
    peak = Math.max(peak, streams.reduce((sum, d) => sum + streamCcu(d, t), 0));
  }
  return peak;
};

const scaleCurve = (curve: RateCurve, factor: number): RateCurve =>
  curve.kind === 'constant'
    ? { kind: 'constant', perMinute: curve.perMinute * factor }
    : { ...curve, points: curve.points.map((p) => ({ at: p.at, perMinute: p.perMinute * factor })) };

/**
 * The scenario with every arrival rate multiplied by `factor`.
 *
 * @example
 * const big = scaleDemand(s, 10_000 / expectedPeakCcu(s)); // peaks near 10k CCU
 */
export const scaleDemand = (scenario: Scenario, factor: number): Scenario => {
  const demand: Record<string, Record<string, RegionDemand>> = Object.create(null) as Record<string, Record<string, RegionDemand>>;
  for (const [mode, regions] of Object.entries(scenario.demand)) {
    const scaled: Record<string, RegionDemand> = Object.create(null) as Record<string, RegionDemand>;
    for (const [region, d] of Object.entries(regions)) scaled[region] = { ...d, arrivals: scaleCurve(d.arrivals, factor) };
    demand[mode] = scaled;
  }
  return { ...scenario, demand: demand };
};
