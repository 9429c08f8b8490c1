/** The demand recorder: buffered off the request path, flushed in batches, retried on failure, ids digested, retention. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryDemandStore } from '../../src/adapters/memory/demand-store.js';
import type { MatchEvent } from '../../src/core/events.js';
import { REQUEST_NUMBERS, type DemandFact, type DemandRequestColumns, type DemandRequestFact, type DemandStore } from '../../src/io/demand.js';
import { DemandRecorder, seatKeys, type RequestRecord } from '../../src/services/demand-recorder.js';
import { EventHub } from '../../src/services/hub.js';
import { ManualClock, ManualTimers } from '../server/harness.js';

const NS = 'ns-1';

const request = (at: number, playerIds: readonly string[] = ['player-a']): RequestRecord => ({
  namespaceId: NS, at, kind: 'find', gameMode: 'default', region: 'eu', party: playerIds.length, outcome: 'ok', waitMs: 5, playerIds,
});

/** A store that fails while `failing` is set and counts the facts of each append it was asked for. */
class FlakyStore implements DemandStore {
  readonly inner = new MemoryDemandStore();
  failing = false;
  appends: number[] = [];
  appendDemand(facts: readonly DemandFact[], requests: readonly DemandRequestColumns[] = []): Promise<void> {
    this.appends.push(requests.reduce((n, c) => n + c.numbers.length / REQUEST_NUMBERS, facts.length));
    return this.failing ? Promise.reject(new Error('disk full')) : this.inner.appendDemand(facts, requests);
  }
  readDemand(...args: Parameters<DemandStore['readDemand']>): ReturnType<DemandStore['readDemand']> {
    return this.inner.readDemand(...args);
  }
  pruneDemand(before: number): Promise<number> {
    return this.inner.pruneDemand(before);
  }
}

const setup = (options: { batch?: number; maxBuffered?: number } = {}) => {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const store = new FlakyStore();
  const errors: unknown[] = [];
  const recorder = new DemandRecorder({ store, clock, timers, key: 'k', onError: (e) => errors.push(e), ...options });
  const all = async () => (await store.readDemand(NS, { from: 0, to: Number.MAX_SAFE_INTEGER }, undefined, 10_000)).map((r) => r.fact);
  return { clock, timers, store, recorder, errors, all };
};

describe('DemandRecorder', () => {
  it('records nothing synchronously: the timer flushes the buffer a second later, in one append', async () => {
    const { timers, store, recorder, all } = setup();
    recorder.request(request(1));
    recorder.request(request(2));
    expect(store.appends).toEqual([]);
    expect(timers.pending).toBe(1);
    timers.advance(1_000);
    await recorder.flush();
    expect(store.appends).toEqual([2]);
    expect((await all()).map((f) => f.at)).toEqual([1, 2]);
  });

  it('stores player ids only as keyed pseudonyms: the same player gets the same seat key, another key another one', async () => {
    const { recorder, all } = setup();
    const hub = new EventHub();
    recorder.attach(hub);
    recorder.request(request(1, ['3f1c0b7e-aaaa-4bbb-8ccc-000000000001']));
    hub.publish([{ type: 'player-connected', at: 2, namespaceId: NS, playerId: '3f1c0b7e-aaaa-4bbb-8ccc-000000000001', lobbyId: 'l1' }]);
    await recorder.flush();
    const facts = await all();
    expect(JSON.stringify(facts)).not.toContain('3f1c0b7e');
    const [req, seat] = facts as [Extract<DemandFact, { type: 'request' }>, Extract<DemandFact, { type: 'seat' }>];
    expect(req.seats).toEqual([seat.seat]);
    const other = setup();
    const otherRecorder = new DemandRecorder({ store: other.store, clock: other.clock, timers: other.timers, key: 'another' });
    otherRecorder.request(request(1, ['3f1c0b7e-aaaa-4bbb-8ccc-000000000001']));
    await otherRecorder.flush();
    expect((await other.all())[0]).not.toMatchObject({ seats: req.seats });
  });

  it('seat keys: 24 hex digits, the same for an id alone or in any batch, distinct for distinct ids and keys', () => {
    const aes = new Uint8Array(16).fill(7);
    // UUIDs (either case), ids of any other shape, and UUID-shaped ids with a digit that is not hex.
    const id = fc.oneof(fc.uuid(), fc.uuid().map((u) => u.toUpperCase()), fc.string({ maxLength: 40 }), fc.uuid().map((u) => `${u.slice(0, 35)}z`));
    fc.assert(
      fc.property(fc.uniqueArray(id, { maxLength: 20, selector: (i) => i.toLowerCase() }), (ids) => {
        const keys = seatKeys(aes, 'secret', ids);
        expect(keys).toHaveLength(ids.length);
        keys.forEach((k, i) => {
          expect(k).toMatch(/^[0-9a-f]{24}$/);
          expect(seatKeys(aes, 'secret', [ids[i] as string])).toEqual([k]);
        });
        expect(new Set(keys).size).toBe(ids.length);
        if (ids.length > 0) expect(seatKeys(new Uint8Array(16).fill(8), 'other', ids)[0]).not.toBe(keys[0]);
      }),
    );
  });

  it('a request keys its players like their steps, whether its ids are UUIDs, other ids or a mix, across batches and flushes', async () => {
    const id = fc.oneof(fc.uuid(), fc.uuid(), fc.uuid(), fc.string({ minLength: 1, maxLength: 12 }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(id, { minLength: 0, maxLength: 3, size: 'max' }), { minLength: 1, maxLength: 1_400, size: 'max' }), fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 3 }), async (parties, batch, flushes) => {
        const { recorder, all } = setup({ batch });
        const hub = new EventHub();
        recorder.attach(hub);
        const per = Math.ceil(parties.length / flushes);
        for (const [at, ids] of parties.entries()) {
          recorder.request(request(at, ids));
          // Each player's step, keyed from its raw id in the flush.
          hub.publish(ids.map((playerId) => ({ type: 'player-connected', at, namespaceId: NS, playerId, lobbyId: 'l1' })));
          if ((at + 1) % per === 0) await recorder.flush();
        }
        await recorder.flush();
        const facts = await all();
        const requests = facts.filter((f): f is DemandRequestFact => f.type === 'request');
        const steps = facts.filter((f): f is Extract<DemandFact, { type: 'seat' }> => f.type === 'seat');
        expect(requests.map((r) => r.at)).toEqual(parties.map((_, at) => at));
        expect(requests.flatMap((r) => r.seats)).toEqual(steps.map((s) => s.seat));
      }),
      { numRuns: 25 },
    );
  });

  it('lobby facts carry the mode and region of lobbies this instance saw created; events it does not keep are skipped', async () => {
    const { recorder, all } = setup();
    const hub = new EventHub();
    recorder.attach(hub);
    const lobby = { id: 'l1', namespaceId: NS, gameMode: 'duel', region: 'us' } as unknown as Extract<MatchEvent, { type: 'lobby-created' }>['lobby'];
    hub.publish([{ type: 'lobby-created', at: 1, lobby }, { type: 'lobby-closed-set', at: 1, namespaceId: NS, lobbyId: 'l1', closed: true }]);
    hub.publish([{ type: 'version-published', at: 2, namespaceId: NS, versionId: 'v' }]);
    hub.publish([{ type: 'lobby-ready', at: 3, namespaceId: NS, lobbyId: 'l1' }, { type: 'lobby-stopping', at: 4, namespaceId: NS, lobbyId: 'l1', reason: 'crashed' }]);
    hub.publish([{ type: 'lobby-stopped', at: 4, namespaceId: NS, lobbyId: 'l1', reason: 'crashed', failed: true }]);
    hub.publish([{ type: 'lobby-stopped', at: 5, namespaceId: NS, lobbyId: 'elsewhere', reason: 'idle', failed: false }]);
    await recorder.flush();
    expect(await all()).toEqual([
      { type: 'lobby', namespaceId: NS, at: 1, lobbyId: 'l1', step: 'created', gameMode: 'duel', region: 'us' },
      { type: 'lobby', namespaceId: NS, at: 3, lobbyId: 'l1', step: 'ready', gameMode: 'duel', region: 'us' },
      { type: 'lobby', namespaceId: NS, at: 4, lobbyId: 'l1', step: 'stopping', gameMode: 'duel', region: 'us', reason: 'crashed' },
      { type: 'lobby', namespaceId: NS, at: 4, lobbyId: 'l1', step: 'stopped', gameMode: 'duel', region: 'us', reason: 'crashed', failed: true },
      { type: 'lobby', namespaceId: NS, at: 5, lobbyId: 'elsewhere', step: 'stopped', reason: 'idle', failed: false },
    ]);
  });

  it('requests of several namespaces in one batch each read back in their namespace, in order, with their seats keyed like their steps', async () => {
    const { store, recorder } = setup();
    const hub = new EventHub();
    recorder.attach(hub);
    const ids = ['3f1c0b7e-aaaa-4bbb-8ccc-000000000001', '3f1c0b7e-aaaa-4bbb-8ccc-000000000002', 'not-a-uuid'];
    recorder.request(request(3, [ids[0] as string]));
    recorder.request({ ...request(1, [ids[1] as string, ids[2] as string]), namespaceId: 'ns-2', gameMode: 'duel', outcome: 'LOBBY_FULL' });
    hub.publish([{ type: 'player-connected', at: 4, namespaceId: 'ns-2', playerId: ids[2] as string, lobbyId: 'l1' }]);
    recorder.request({ ...request(2, []), namespaceId: 'ns-2', kind: 'join', party: 1 });
    await recorder.flush();
    const read = async (ns: string) => (await store.readDemand(ns, { from: 0, to: 100 }, undefined, 100)).map((r) => r.fact);
    const [one, two] = [await read(NS), await read('ns-2')];
    const { playerIds, ...asked } = request(3, [ids[0] as string]);
    expect(playerIds).toHaveLength(1);
    expect(one).toEqual([{ ...asked, type: 'request', seats: [expect.stringMatching(/^[0-9a-f]{24}$/)] }]);
    expect(two.map((f) => [f.type, f.at])).toEqual([['request', 1], ['request', 2], ['seat', 4]]);
    const [first, second, step] = two as [DemandRequestFact, DemandRequestFact, Extract<DemandFact, { type: 'seat' }>];
    expect(first).toMatchObject({ gameMode: 'duel', outcome: 'LOBBY_FULL', party: 2 });
    expect(first.seats).toHaveLength(2);
    expect(first.seats[1]).toBe(step.seat);
    expect(new Set([...first.seats, ...(one[0] as DemandRequestFact).seats]).size).toBe(3);
    expect(second).toMatchObject({ kind: 'join', seats: [] });
  });

  it('writes in batches; a failed write keeps what is left and retries it (nothing lost, nothing twice)', async () => {
    const { timers, store, recorder, errors, all } = setup({ batch: 2 });
    for (let i = 0; i < 5; i++) recorder.request(request(i));
    await recorder.flush();
    expect(store.appends).toEqual([2, 2, 1]);
    store.failing = true;
    for (let i = 5; i < 8; i++) recorder.request(request(i));
    await recorder.flush();
    expect(errors).toHaveLength(1);
    expect(timers.pending).toBe(1);
    store.failing = false;
    recorder.request(request(8));
    timers.advance(1_000);
    await recorder.flush();
    expect((await all()).map((f) => f.at)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(recorder.dropped).toBe(0);
  });

  it('a flush works in batches: what waits on the event loop runs between them', async () => {
    const { store, recorder, all } = setup({ batch: 4 });
    for (let i = 0; i < 10; i++) recorder.request(request(i));
    const flushed = recorder.flush();
    const between: number[][] = [];
    // Queued once the first batch is on its way: runs while the flush still has batches to go.
    await new Promise<void>((resolve) => setImmediate(() => {
      between.push([...store.appends]);
      resolve();
    }));
    await flushed;
    expect(between).toEqual([[4]]);
    expect(store.appends).toEqual([4, 4, 2]);
    expect((await all()).map((f) => f.at)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('while the store keeps failing, holds at most maxBuffered facts and counts the oldest it drops', async () => {
    const { store, recorder, all } = setup({ maxBuffered: 3 });
    store.failing = true;
    for (let i = 0; i < 5; i++) recorder.request(request(i));
    await recorder.flush();
    expect(recorder.dropped).toBe(2);
    store.failing = false;
    await recorder.close();
    expect((await all()).map((f) => f.at)).toEqual([2, 3, 4]);
  });

  it('close writes what is buffered, then records nothing more; prune drops what is older than the retention', async () => {
    const { clock, recorder, all } = setup();
    recorder.request(request(clock.now() - 8 * 86_400_000));
    recorder.request(request(clock.now() - 60_000));
    await recorder.close();
    recorder.request(request(clock.now()));
    await recorder.flush();
    expect(await all()).toHaveLength(2);
    expect(await recorder.prune()).toBe(1);
    expect((await all()).map((f) => f.at)).toEqual([clock.now() - 60_000]);
  });
});
