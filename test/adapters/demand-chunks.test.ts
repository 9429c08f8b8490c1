/** The SQL demand stores' chunks: what is written reads back as appended, in both formats. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { factsOf, MAX_CHUNK_SPAN_MS, toChunks, trimChunk } from '../../src/adapters/demand-chunks.js';
import type { DemandFact, DemandLobbyFact, DemandRequestFact, DemandSeatFact } from '../../src/io/demand.js';

/** Optional members present or absent (never `undefined`), as the recorder makes them (`gates` only when one ran). */
const optional = <T>(key: string, arb: fc.Arbitrary<T>): fc.Arbitrary<Record<string, T>> =>
  fc.option(arb, { nil: undefined }).map((v) => (v === undefined ? {} : { [key]: v }));

/** A seat key's digits. */
const hex = (minLength: number, maxLength: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength, maxLength });

const word = fc.constantFrom('default', 'duel', 'eu', 'us-east', 'ok', 'LOBBY_FULL', 'crashed', 'idle', 'a "quoted" \\ name');
const at = fc.integer({ min: 1_700_000_000_000, max: 1_700_000_000_000 + 3 * MAX_CHUNK_SPAN_MS });

const request: fc.Arbitrary<DemandRequestFact> = fc
  .tuple(
    fc.record({
      type: fc.constant('request' as const), namespaceId: fc.constantFrom('ns-a', 'ns-b'), at, kind: fc.constantFrom('find' as const, 'join' as const, 'create' as const),
      party: fc.integer({ min: 1, max: 16 }), outcome: word, waitMs: fc.nat(60_000), seats: fc.array(hex(22, 24), { maxLength: 4 }),
    }),
    optional('gameMode', word), optional('region', word), optional('gates', fc.record({ captcha: fc.boolean(), verification: fc.boolean() }).filter((g) => g.captcha || g.verification)), optional('seatReady', fc.boolean()),
  )
  .map(([r, ...rest]) => Object.assign({}, r, ...rest) as DemandRequestFact);

const seat: fc.Arbitrary<DemandSeatFact> = fc.record({
  type: fc.constant('seat' as const), namespaceId: fc.constantFrom('ns-a', 'ns-b'), at, seat: hex(24, 24),
  step: fc.constantFrom('connected' as const, 'removed' as const),
});

const lobby: fc.Arbitrary<DemandLobbyFact> = fc
  .tuple(
    fc.record({ type: fc.constant('lobby' as const), namespaceId: fc.constantFrom('ns-a', 'ns-b'), at, lobbyId: fc.uuid(), step: fc.constantFrom('created' as const, 'ready' as const, 'stopping' as const, 'stopped' as const) }),
    optional('gameMode', word), optional('region', word), optional('reason', word), optional('failed', fc.boolean()),
  )
  .map(([l, ...rest]) => Object.assign({}, l, ...rest) as DemandLobbyFact);

const fact: fc.Arbitrary<DemandFact> = fc.oneof({ weight: 6, arbitrary: request }, { weight: 1, arbitrary: seat }, { weight: 1, arbitrary: lobby });

/** Reads chunks back as a store would, each with the seq the store gave its row. */
const readBack = (facts: readonly DemandFact[]) =>
  toChunks(facts).flatMap((c, seq) => {
    const read = factsOf({ seq, namespaceId: c.namespaceId, firstAt: c.firstAt, facts: c.facts }).map((f) => f.fact);
    expect(read).toHaveLength(c.count);
    expect(read[0]?.at).toBe(c.firstAt);
    expect(read[read.length - 1]?.at).toBe(c.lastAt);
    expect(c.lastAt - c.firstAt).toBeLessThanOrEqual(MAX_CHUNK_SPAN_MS);
    return read;
  });

/** Namespaces in the order they first appear, each's facts in time order (a stable sort). */
const byNamespaceThenTime = (facts: readonly DemandFact[]): DemandFact[] =>
  [...new Set(facts.map((f) => f.namespaceId))].flatMap((ns) => facts.filter((f) => f.namespaceId === ns).sort((a, b) => a.at - b.at));

describe('demand chunks', () => {
  it('read back every fact as appended: per namespace, in time order (ties in append order), within the span', () => {
    fc.assert(
      fc.property(fc.array(fact, { maxLength: 60 }), (facts) => {
        expect(readBack(facts)).toEqual(byNamespaceThenTime(facts));
      }),
    );
  });

  it('a trimmed chunk keeps exactly the facts at or after the bound, in either format', () => {
    fc.assert(
      fc.property(fc.array(fact, { minLength: 1, maxLength: 30 }), at, (facts, before) => {
        const [chunk] = toChunks(facts.map((f) => ({ ...f, namespaceId: 'ns-a' })));
        if (chunk === undefined) throw new Error('no chunk');
        const row = { seq: 1, namespaceId: 'ns-a', firstAt: chunk.firstAt, facts: chunk.facts };
        const all = factsOf(row).map((f) => f.fact);
        const { kept, dropped } = trimChunk(row, before);
        const expected = all.filter((f) => f.at >= before);
        expect(dropped).toBe(all.length - expected.length);
        expect(kept === undefined ? [] : factsOf({ ...row, facts: kept.facts }).map((f) => f.fact)).toEqual(expected);
      }),
    );
  });

  it('still reads chunks written in format 1 (one tuple per fact)', () => {
    const v1 = JSON.stringify([
      ['r', 1000, 'find', 'default', null, 2, 'ok', 12, ['aaaa', 'bbbb'], 1 | 4 | 8],
      ['s', 1001, 'aaaa', 'connected'],
      ['l', 1002, 'lobby-1', 'stopped', null, 'eu', 'crashed', 1],
    ]);
    expect(factsOf({ seq: 2, namespaceId: 'ns', firstAt: 1000, facts: v1 })).toEqual([
      { seq: 2 * 65_536, fact: { type: 'request', namespaceId: 'ns', at: 1000, kind: 'find', gameMode: 'default', party: 2, gates: { captcha: true, verification: false }, outcome: 'ok', waitMs: 12, seats: ['aaaa', 'bbbb'], seatReady: true } },
      { seq: 2 * 65_536 + 1, fact: { type: 'seat', namespaceId: 'ns', at: 1001, seat: 'aaaa', step: 'connected' } },
      { seq: 2 * 65_536 + 2, fact: { type: 'lobby', namespaceId: 'ns', at: 1002, lobbyId: 'lobby-1', step: 'stopped', region: 'eu', reason: 'crashed', failed: true } },
    ]);
  });

  it('writes a find in about half the bytes of format 1 (words once per chunk, numbers in one array)', () => {
    const finds: DemandRequestFact[] = Array.from({ length: 1000 }, (_, i) => ({
      type: 'request', namespaceId: 'ns', at: 1_700_000_000_000 + i * 3, kind: 'find', gameMode: 'default', region: 'local-lan', party: 1,
      outcome: 'ok', waitMs: 2, seats: [i.toString(16).padStart(24, '0')], seatReady: true,
    }));
    const v1Bytes = JSON.stringify(finds.map((f) => ['r', f.at, f.kind, f.gameMode, f.region, f.party, f.outcome, f.waitMs, f.seats, 12])).length;
    const [chunk] = toChunks(finds);
    expect(chunk?.facts.length).toBeLessThan(v1Bytes * 0.6);
  });
});
