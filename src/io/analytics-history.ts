/**
 * Where analytics history is kept: one row per namespace, minute and instance
 * (`src/core/history/minute.ts`), for `TAVERN_ANALYTICS_RETENTION` (7 days by default). Memory,
 * SQLite and PostgreSQL each implement it (one contract suite,
 * `test/contracts/analytics-history.contract.ts`).
 */
import type { AnalyticsMinute } from '../core/history/minute.js';

/**
 * @example
 * await store.putMinutes(rows);
 * const week = await store.minutes(namespaceId, now - 7 * DAY_MS, now);
 * await store.pruneMinutes(now - 7 * DAY_MS);
 */
export interface AnalyticsHistoryStore {
  /** Keeps rows, each replacing the row of the same namespace, minute and instance. */
  putMinutes(rows: readonly AnalyticsMinute[]): Promise<void>;
  /** A namespace's rows with `from <= minute < to`, by minute then instance id. */
  minutes(namespaceId: string, from: number, to: number): Promise<readonly AnalyticsMinute[]>;
  /** Forgets every row of a minute before `before`; returns how many. */
  pruneMinutes(before: number): Promise<number>;
}
