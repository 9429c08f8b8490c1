/**
 * The AnalyticsHistoryStore contract: every adapter runs this same suite (memory.test.ts,
 * sqlite.test.ts, postgres.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { MINUTE_MS, type AnalyticsMinute } from '../../src/core/history/minute.js';
import type { AnalyticsHistoryStore } from '../../src/io/analytics-history.js';

/** A fresh, empty store, and a second store on the same database (another process's view). */
export interface AnalyticsHistoryUnderTest {
  readonly history: AnalyticsHistoryStore;
  readonly twin: AnalyticsHistoryStore;
  close(): Promise<void>;
}

const T0 = Date.UTC(2024, 0, 1);

const row = (namespaceId: string, minute: number, instanceId = 'a', over: Partial<AnalyticsMinute> = {}): AnalyticsMinute => ({
  namespaceId, minute: T0 + minute * MINUTE_MS, instanceId,
  lobbies: { starting: 1, active: 2, idle: 3, closed: 0 }, players: 7,
  requests: { find: 10, join: 1, create: 0 }, refusals: { MATCHMAKER_LOBBY_NOT_FOUND: 1, 'ünïcode "code"': 2 },
  starts: 2, startLatency: { '0': 1, '17': 1 }, failures: { crashed: 1 },
  ...over,
});

/**
 * Registers the AnalyticsHistoryStore contract for one adapter.
 *
 * @example
 * analyticsHistoryContract('sqlite', async () => ({ history, twin, close }));
 */
export const analyticsHistoryContract = (name: string, open: () => Promise<AnalyticsHistoryUnderTest>): void => {
  describe(`AnalyticsHistoryStore contract: ${name}`, () => {
    const opened: AnalyticsHistoryUnderTest[] = [];
    const fresh = async () => {
      const s = await open();
      opened.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });

    it('keeps rows as given and another connection reads them, by minute then instance, within [from, to)', async () => {
      const { history, twin } = await fresh();
      const ns = randomUUID();
      const empty = row(ns, 0, 'b', { refusals: {}, startLatency: {}, failures: {} });
      const rows = [row(ns, 2, 'b'), row(ns, 1), empty, row(ns, 0, 'a'), row(randomUUID(), 1)];
      await history.putMinutes(rows);
      const read = await twin.minutes(ns, T0, T0 + 3 * MINUTE_MS);
      expect(read).toEqual([rows[3], empty, rows[1], rows[0]]);
      expect(await twin.minutes(ns, T0 + MINUTE_MS, T0 + 2 * MINUTE_MS)).toEqual([rows[1]]);
      expect(await twin.minutes(ns, T0 + 3 * MINUTE_MS, T0 + 9 * MINUTE_MS)).toEqual([]);
      expect(await twin.minutes(randomUUID(), T0, T0 + 9 * MINUTE_MS)).toEqual([]);
      await history.putMinutes([]);
    });

    it('a row is kept once per namespace, minute and instance: putting it again replaces it', async () => {
      const { history, twin } = await fresh();
      const ns = randomUUID();
      await history.putMinutes([row(ns, 0)]);
      const again = row(ns, 0, 'a', { players: 9, starts: 5 });
      await twin.putMinutes([again]);
      // Twice in one write: the last one wins.
      const last = row(ns, 1, 'a', { players: 2 });
      await history.putMinutes([row(ns, 1, 'a', { players: 1 }), last]);
      expect(await history.minutes(ns, T0, T0 + 2 * MINUTE_MS)).toEqual([again, last]);
    });

    it('prunes every namespace\'s rows before a minute and says how many', async () => {
      const { history, twin } = await fresh();
      const ns = randomUUID();
      const other = randomUUID();
      await history.putMinutes([row(ns, 0), row(ns, 1), row(ns, 2), row(other, 0), row(other, 5)]);
      expect(await twin.pruneMinutes(T0 + 2 * MINUTE_MS)).toBe(3);
      expect((await history.minutes(ns, T0, T0 + 10 * MINUTE_MS)).map((r) => r.minute)).toEqual([T0 + 2 * MINUTE_MS]);
      expect((await history.minutes(other, T0, T0 + 10 * MINUTE_MS)).map((r) => r.minute)).toEqual([T0 + 5 * MINUTE_MS]);
      expect(await twin.pruneMinutes(T0)).toBe(0);
    });
  });
};
