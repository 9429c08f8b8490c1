/** The SQL demand stores' chunks: what is written reads back as appended, in both formats. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { factsOf, MAX_CHUNK_SPAN_MS, requestFacts, toChunks, trimChunk } from '../../src/adapters/demand-chunks.js';
import { REQUEST_NUMBERS, SEAT_KEY_BYTES, type DemandFact, type DemandLobbyFact, type DemandRequestColumns, type DemandRequestFact, type DemandSeatFact } from '../../src/io/demand.js';

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

/** Words of request columns: kinds first (indexes 0–2), then modes, regions and outcomes. */
const WORDS = ['find', 'join', 'create', 'default', 'a "quoted" \\ name', 'eu', 'ok', 'LOBBY_FULL'];

/** One namespace's requests as the recorder hands them over (times from `base`, out of order, words by index, seat keys as bytes). */
const columns = (span: number, number: fc.Arbitrary<number> = fc.nat(60_000)): fc.Arbitrary<DemandRequestColumns> =>
  fc
    .tuple(
      at,
      fc.array(
        fc.tuple(fc.integer({ min: -span / 2, max: span / 2 }), fc.nat(2), fc.integer({ min: -1, max: 7 }), fc.integer({ min: -1, max: 7 }), fc.integer({ min: 1, max: 16 }), fc.integer({ min: 6, max: 7 }), number, fc.nat(3), fc.nat(15)),
        { maxLength: 40 },
      ),
    )
    .map(([base, rows]) => {
      const seats = rows.reduce((n, r) => n + r[7], 0);
      return { namespaceId: 'ns-a', base, numbers: rows.flat(), words: WORDS, seats: Uint8Array.from({ length: seats * SEAT_KEY_BYTES }, (_, i) => (i * 37 + base) & 255) };
    });

/** Longer than a chunk's span, or holding a number that is not an integer below 2^48. */
const doesNotFit = (c: DemandRequestColumns): boolean => {
  const times = c.numbers.filter((_, i) => i % REQUEST_NUMBERS === 0);
  return Math.max(...times) - Math.min(...times) > MAX_CHUNK_SPAN_MS || c.numbers.some((x) => !Number.isInteger(x) || x >= 2 ** 48);
};

/** Reads chunks back as a store would, each with the seq the store gave its row. */
const readBack = (facts: readonly DemandFact[], requests: readonly DemandRequestColumns[] = []) =>
  toChunks(facts, requests).flatMap((c, seq) => {
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

  it("read back the recorder's request columns as they are, in their order, each field where the columns put it", () => {
    fc.assert(
      fc.property(columns(MAX_CHUNK_SPAN_MS), (c) => {
        const chunks = toChunks([], [c]);
        const read = chunks.flatMap((chunk, seq) => factsOf({ seq, namespaceId: chunk.namespaceId, firstAt: chunk.firstAt, facts: chunk.facts }).map((f) => f.fact));
        const facts = requestFacts(c);
        expect(read).toEqual(facts);
        expect(chunks.map((chunk) => chunk.facts.startsWith('{"v":3'))).toEqual(facts.length === 0 ? [] : [true]);
        const times = facts.map((f) => f.at);
        if (chunks[0] !== undefined) expect([chunks[0].firstAt, chunks[0].lastAt]).toEqual([Math.min(...times), Math.max(...times)]);
        let seat = 0;
        facts.forEach((f, i) => {
          const n = c.numbers.slice(i * REQUEST_NUMBERS, (i + 1) * REQUEST_NUMBERS);
          expect([f.at, f.kind, f.gameMode, f.party, f.outcome, f.waitMs]).toEqual([c.base + (n[0] as number), WORDS[n[1] as number], WORDS[n[2] as number], n[4], WORDS[n[5] as number], n[6]]);
          expect(f.seats).toEqual(Array.from({ length: n[7] as number }, () => Buffer.from(c.seats.subarray(seat * SEAT_KEY_BYTES, ++seat * SEAT_KEY_BYTES)).toString('hex')));
        });
      }),
    );
  });

  it('request columns that do not fit one chunk (longer than its span, or a number format 3 cannot hold) are cut and written as facts', () => {
    fc.assert(
      fc.property(fc.oneof(columns(4 * MAX_CHUNK_SPAN_MS), columns(MAX_CHUNK_SPAN_MS, fc.oneof(fc.nat(60_000), fc.constant(2.5), fc.constant(2 ** 50)))).filter(doesNotFit), (c) => {
        const facts = requestFacts(c);
        expect(readBack([], [c])).toEqual(byNamespaceThenTime(facts));
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

  it("writes the recorder's finds in format 3 in under 70 % of format 2's bytes (numbers as varints, seat keys as bytes)", () => {
    const c: DemandRequestColumns = {
      namespaceId: 'ns', base: 1_700_000_000_000, words: ['find', 'default', 'local-lan', 'ok'],
      numbers: Array.from({ length: 1000 }, (_, i) => [i * 3, 0, 1, 2, 1, 3, 2, 1, 12]).flat(),
      seats: Uint8Array.from({ length: 1000 * SEAT_KEY_BYTES }, (_, i) => (i * 131) & 255),
    };
    const [v3] = toChunks([], [c]);
    const [v2] = toChunks(requestFacts(c));
    expect(v3?.facts.length).toBeLessThan((v2?.facts.length ?? 0) * 0.7);
  });

  it('reads a format-3 chunk as written by this version (its bytes are a stored format)', () => {
    const v3 = '{"v":3,"a":1000,"w":["find","ok","default"],"n":"BgAEAQQCFAQYAQABAQICCAIC","k":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIj"}';
    expect(factsOf({ seq: 1, namespaceId: 'ns', firstAt: 999, facts: v3 }).map((f) => f.fact)).toEqual([
      { type: 'request', namespaceId: 'ns', at: 1003, kind: 'find', gameMode: 'default', party: 2, outcome: 'ok', waitMs: 10, seats: ['000102030405060708090a0b', '0c0d0e0f1011121314151617'], seatReady: true },
      { type: 'request', namespaceId: 'ns', at: 999, kind: 'find', party: 1, outcome: 'ok', waitMs: 4, seats: ['18191a1b1c1d1e1f20212223'], gates: { captcha: true, verification: false } },
    ]);
  });
});
