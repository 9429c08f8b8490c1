/**
 * The DemandStore contract: every adapter runs this same suite (memory.test.ts, sqlite.test.ts,
 * postgres.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { DemandFact, DemandRequestFact, DemandStore, StoredDemandFact } from '../../src/io/demand.js';

/** A fresh, empty store, and a second store on the same database (another process's view). */
export interface DemandUnderTest {
  readonly demand: DemandStore;
  readonly twin: DemandStore;
  close(): Promise<void>;
}

const seat = (namespaceId: string, at: number, step: 'connected' | 'removed' = 'connected'): DemandFact => ({
  type: 'seat', namespaceId, at, seat: `s-${at}`, step,
});

const request = (namespaceId: string, at: number): DemandFact => ({
  type: 'request', namespaceId, at, kind: 'find', gameMode: 'default', region: 'eu', party: 2,
  gates: { captcha: true, verification: false }, outcome: 'ok', waitMs: 1200, seats: ['a', 'b'], seatReady: false,
});

const lobby = (namespaceId: string, at: number): DemandFact => ({
  type: 'lobby', namespaceId, at, lobbyId: randomUUID(), step: 'stopped', gameMode: 'default', region: 'eu', reason: 'crashed', failed: true,
});

/** Every fact of the window, paging `size` at a time. */
const readAll = async (store: DemandStore, namespaceId: string, window: { from: number; to: number }, size: number): Promise<StoredDemandFact[]> => {
  const all: StoredDemandFact[] = [];
  for (let i = 0; i < 1000; i++) {
    const last = all[all.length - 1];
    const page = await store.readDemand(namespaceId, window, last === undefined ? undefined : { at: last.fact.at, seq: last.seq }, size);
    all.push(...page);
    if (page.length < size) return all;
  }
  throw new Error('the pages never ended');
};

/**
 * Registers the DemandStore contract for one adapter.
 *
 * @example
 * demandStoreContract('sqlite', async () => ({ demand, twin, close }));
 */
export const demandStoreContract = (name: string, open: () => Promise<DemandUnderTest>): void => {
  describe(`DemandStore contract: ${name}`, () => {
    const opened: DemandUnderTest[] = [];
    const fresh = async () => {
      const d = await open();
      opened.push(d);
      return d;
    };
    afterEach(async () => {
      for (const d of opened.splice(0)) await d.close();
    });

    it('keeps each kind of fact as appended, and another connection reads them', async () => {
      const { demand, twin } = await fresh();
      const ns = randomUUID();
      // Optional members absent too: a join to an unknown lobby (no mode, region, gates, seat readiness), another instance's lobby;
      // a seat ready at admission with no gate, and one behind verification.
      const bare: DemandFact = { type: 'request', namespaceId: ns, at: 1_003, kind: 'join', party: 1, outcome: 'MATCHMAKER_LOBBY_NOT_FOUND', waitMs: 0, seats: [] };
      const elsewhere: DemandFact = { type: 'lobby', namespaceId: ns, at: 1_004, lobbyId: randomUUID(), step: 'ready' };
      const verified: DemandFact = { ...request(ns, 1_005), gates: { captcha: false, verification: true }, seatReady: true } as DemandFact;
      const { gates: _none, ...ungated } = { ...request(ns, 1_006), waitMs: 2, seatReady: true } as DemandRequestFact;
      const facts = [request(ns, 1_000), seat(ns, 1_001), lobby(ns, 1_002), bare, elsewhere, verified, ungated];
      await demand.appendDemand(facts);
      const read = await twin.readDemand(ns, { from: 0, to: 10_000 }, undefined, 100);
      expect(read.map((r) => r.fact)).toEqual(facts);
    });

    it('reads one namespace, inside [from, to), by time then append order, page by page', async () => {
      const { demand } = await fresh();
      const ns = randomUUID();
      const other = randomUUID();
      // Appended out of time order (two instances flush their batches in any order); ties at 500.
      await demand.appendDemand([seat(ns, 700), seat(ns, 500, 'connected'), seat(other, 600)]);
      await demand.appendDemand([seat(ns, 500, 'removed'), seat(ns, 100), seat(ns, 900), seat(ns, 1_000)]);
      const all = await readAll(demand, ns, { from: 100, to: 1_000 }, 2);
      expect(all.map((r) => [r.fact.at, (r.fact as { step: string }).step])).toEqual([
        [100, 'connected'], [500, 'connected'], [500, 'removed'], [700, 'connected'], [900, 'connected'],
      ]);
      expect(await demand.readDemand(ns, { from: 2_000, to: 3_000 }, undefined, 10)).toEqual([]);
      expect(await demand.readDemand(ns, { from: 0, to: 5_000 }, undefined, 0)).toEqual([]);
    });

    it('a large append over minutes, interleaved with another namespace and a later append, reads back whole and in order', async () => {
      const { demand, twin } = await fresh();
      const ns = randomUUID();
      const other = randomUUID();
      // 12,000 facts over 4 minutes (more than one chunk holds, in count and in time), appended out of order.
      const big = Array.from({ length: 12_000 }, (_, i) => seat(i % 2 === 0 ? ns : other, 1_000 + ((i * 7_919) % 12_000) * 20));
      await demand.appendDemand(big);
      const late = [seat(ns, 1_000), seat(ns, 120_000, 'removed')];
      await demand.appendDemand(late);
      const all = await readAll(twin, ns, { from: 0, to: 1_000_000 }, 1_000);
      const expected = [...big.filter((f) => f.namespaceId === ns), ...late].map((f) => f.at).sort((a, b) => a - b);
      expect(all.map((r) => r.fact.at)).toEqual(expected);
      // Ties in time keep append order: the late fact at 120,000 comes after the big append's.
      const at120k = all.filter((r) => r.fact.at === 120_000).map((r) => (r.fact as { step: string }).step);
      expect(at120k[at120k.length - 1]).toBe('removed');
      expect(new Set(all.map((r) => r.seq)).size).toBe(all.length);
    });

    it('prunes facts older than the retention bound, across namespaces, and says how many', async () => {
      const { demand, twin } = await fresh();
      const a = randomUUID();
      const b = randomUUID();
      await demand.appendDemand([seat(a, 10), seat(b, 20), seat(a, 30), seat(b, 40)]);
      expect(await twin.pruneDemand(30)).toBe(2);
      expect((await demand.readDemand(a, { from: 0, to: 100 }, undefined, 10)).map((r) => r.fact.at)).toEqual([30]);
      expect((await demand.readDemand(b, { from: 0, to: 100 }, undefined, 10)).map((r) => r.fact.at)).toEqual([40]);
      expect(await demand.pruneDemand(30)).toBe(0);
    });

    it('an empty append commits nothing and does not fail', async () => {
      const { demand } = await fresh();
      const ns = randomUUID();
      await demand.appendDemand([]);
      expect(await demand.readDemand(ns, { from: 0, to: Number.MAX_SAFE_INTEGER }, undefined, 10)).toEqual([]);
    });
  });
};
