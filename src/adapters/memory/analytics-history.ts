/** The analytics history store in memory (tests, in-process apps). */
import type { AnalyticsMinute } from '../../core/history/minute.js';
import type { AnalyticsHistoryStore } from '../../io/analytics-history.js';

const keyOf = (r: AnalyticsMinute): string => JSON.stringify([r.namespaceId, r.minute, r.instanceId]);

/** By minute, then instance id (compared by UTF-16 code unit, as the SQL stores compare bytes for ASCII ids). */
const byMinute = (a: AnalyticsMinute, b: AnalyticsMinute): number =>
  a.minute - b.minute || (a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0);

/**
 * @example
 * const history = new MemoryAnalyticsHistoryStore();
 */
export class MemoryAnalyticsHistoryStore implements AnalyticsHistoryStore {
  readonly #rows = new Map<string, AnalyticsMinute>();

  putMinutes(rows: readonly AnalyticsMinute[]): Promise<void> {
    for (const r of rows) this.#rows.set(keyOf(r), structuredClone(r));
    return Promise.resolve();
  }

  minutes(namespaceId: string, from: number, to: number): Promise<readonly AnalyticsMinute[]> {
    const rows = [...this.#rows.values()].filter((r) => r.namespaceId === namespaceId && r.minute >= from && r.minute < to).sort(byMinute);
    return Promise.resolve(rows.map((r) => structuredClone(r)));
  }

  pruneMinutes(before: number): Promise<number> {
    let n = 0;
    for (const [k, r] of this.#rows) {
      if (r.minute < before) {
        this.#rows.delete(k);
        n++;
      }
    }
    return Promise.resolve(n);
  }
}
