/**
 * How far a preview can be trusted: the simulator's fidelity against a real server on the same
 * demand (`npm run bench -- fidelity`, bench/RESULTS.md). Its goals are what each run of a preview
 * is held to; the measured differences are the latest recorded run's. Update both with a new run.
 */

export interface ErrorBound {
  /** Counts and lobby-hours: within this many percent of what a server does with the same demand. */
  readonly countsPct: number;
  /** Time-to-seat percentiles: within this many percent (or one clock tick). */
  readonly timesPct: number;
  /** The latest fidelity run's differences, simulator against server, in percent. */
  readonly measured: { readonly lobbiesCreatedPct: number; readonly refusedPct: number; readonly waitP95Pct: number };
  /** Where the figures come from. */
  readonly source: string;
}

export const ERROR_BOUND: ErrorBound = Object.freeze({
  countsPct: 5,
  timesPct: 10,
  measured: Object.freeze({ lobbiesCreatedPct: 1.5, refusedPct: 1.1, waitP95Pct: 1.7 }),
  source: 'npm run bench -- fidelity, 2026-11-27 (10 min, 3,541 finds; bench/RESULTS.md)',
});

/**
 * The bound in words, for the table's foot.
 *
 * @example
 * boundText(ERROR_BOUND); // 'each column is within ±5 % (counts, hours) and ±10 % (waits) of ...'
 */
export const boundText = (b: ErrorBound): string =>
  `each column is within ±${b.countsPct} % (counts, hours) and ±${b.timesPct} % (waits) of what a server does with this demand; ` +
  `measured +${b.measured.lobbiesCreatedPct} % lobbies, +${b.measured.refusedPct} % refused, +${b.measured.waitP95Pct} % p95 (${b.source}). ` +
  `A change smaller than the bound may be noise.`;
