/**
 * Start backoff: when lobbies of one version's game mode keep failing to start (the container
 * could not start, or went away before calling ready), new lobbies of it wait longer and longer,
 * so a broken build never makes Tavern create containers in a tight loop. A lobby of it that
 * becomes ready ends the backoff.
 */

/** Consecutive failed starts of one (version, game mode), and when the next start may be tried. */
export interface StartBackoff {
  readonly failures: number;
  /** Epoch ms: no new lobby of this version and mode before then. */
  readonly until: number;
  /** Epoch ms of the last failure. */
  readonly lastFailureAt: number;
}

/** Failures in a row tolerated before backing off at all (one failure may be bad luck). */
export const BACKOFF_AFTER_FAILURES = 2;
/** The first wait; each further failure doubles it. */
export const BACKOFF_BASE_MS = 2_000;
/** The longest wait. */
export const BACKOFF_MAX_MS = 300_000;

/**
 * The wait after `failures` failures in a row: none up to {@link BACKOFF_AFTER_FAILURES} - 1, then
 * 2 s, 4 s, 8 s, ... up to 5 min.
 *
 * @example
 * backoffDelay(1); // 0
 * backoffDelay(2); // 2000
 * backoffDelay(3); // 4000
 */
export const backoffDelay = (failures: number): number => {
  if (failures < BACKOFF_AFTER_FAILURES) return 0;
  const doublings = failures - BACKOFF_AFTER_FAILURES;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a fast path; from 8 doublings on, Math.min gives the maximum too (and Infinity past 1023)
  return doublings >= 20 ? BACKOFF_MAX_MS : Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** doublings);
};

/**
 * The backoff after one more failed start at `now`.
 *
 * @example
 * let b = recordStartFailure(undefined, 1000); // { failures: 1, until: 1000, lastFailureAt: 1000 }
 * b = recordStartFailure(b, 2000); // { failures: 2, until: 4000, lastFailureAt: 2000 }
 */
export const recordStartFailure = (previous: StartBackoff | undefined, now: number): StartBackoff => {
  const failures = (previous?.failures ?? 0) + 1;
  return { failures, until: now + backoffDelay(failures), lastFailureAt: now };
};

/**
 * Whether a new lobby must wait at `now`.
 *
 * @example
 * startBlocked({ failures: 2, until: 4000, lastFailureAt: 2000 }, 3000); // true
 */
export const startBlocked = (backoff: StartBackoff | undefined, now: number): boolean => backoff !== undefined && now < backoff.until;
