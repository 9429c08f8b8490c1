/**
 * The discrete-event engine: a (time, seq)-ordered queue, a virtual clock that moves only when the
 * queue pops, seeded splittable random streams and distributions as data, arrival-rate curves and
 * deterministic statistics.
 *
 * @example
 * import { Simulation, createStream, split, sample } from './engine/index.js';
 * const sim = new Simulation<'arrive'>(0);
 * const gaps = split(createStream(42), 'arrivals');
 * sim.scheduleIn(sample({ kind: 'exponential', mean: 1000 }, gaps), 'arrive');
 */
export { EventQueue, type Scheduled } from './queue.js';
export { VirtualClock, Simulation, type Clock } from './clock.js';
export {
  createStream,
  split,
  childSeed,
  sample,
  standardNormal,
  Z95,
  type Stream,
  type Distribution,
  type NumericDistribution,
  type ChoiceDistribution,
} from '../../core/distribution.js';
export { rateAt, peakRate, nextArrival, type RateCurve, type RatePoint } from './curve.js';
export {
  percentiles,
  binOf,
  emptyHistogram,
  histogramOf,
  addToHistogram,
  sampleSeries,
  addToSummary,
  summaryOf,
  EMPTY_SUMMARY,
  type HistogramSpec,
  type Histogram,
  type Change,
  type TimeSeries,
  type Summary,
} from './stats.js';
