import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, firstDivergence, formatDivergence, jsonString, parseTrace, serializeTrace, Trace, type TraceRecord } from '../../../src/sim/trace/index.js';

const record: fc.Arbitrary<TraceRecord> = fc.record({
  t: fc.nat(),
  kind: fc.constantFrom('input', 'decision', 'effect', 'event'),
  data: fc.jsonValue(),
});

const hashOf = (records: readonly TraceRecord[]): string => {
  const trace = new Trace({ keep: false });
  for (const r of records) trace.append(r);
  return trace.hash();
};

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe('{"a":{"d":[1,{"x":1,"y":2}]},"b":1}');
  });

  it('does not depend on key insertion order', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(obj));
        expect(JSON.parse(canonicalJson(obj))).toEqual(JSON.parse(JSON.stringify(obj)));
      }),
    );
  });

  it('refuses values that have no JSON form', () => {
    expect(() => canonicalJson({ x: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson({ x: 1n })).toThrow(TypeError);
  });
});

describe('jsonString', () => {
  it('writes any string exactly as JSON.stringify does', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.string()), (s) => {
      expect(jsonString(s)).toBe(JSON.stringify(s));
    }));
    for (const s of ['', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', '\udfff', '\ud83d\ude00', 'a\ud83d']) expect(jsonString(s)).toBe(JSON.stringify(s));
  });
});

describe('Trace', () => {
  it('gives equal hashes exactly for equal sequences', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 20 }), fc.array(record, { maxLength: 20 }), (a, b) => {
        expect(hashOf(a) === hashOf(b)).toBe(serializeTrace(a) === serializeTrace(b));
      }),
    );
  });

  it('changes its hash when any single record changes', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 20 }), fc.nat(), fc.nat(), (records, at, t) => {
        const i = at % records.length;
        const changed = records.map((r, j) => (j === i ? { ...r, t: r.t === t ? t + 1 : t } : r));
        expect(hashOf(changed)).not.toBe(hashOf(records));
      }),
    );
  });

  // The expected value is sha256sum of the canonical line, computed outside the code under test.
  it('is pinned: the encoding of records never changes silently', () => {
    expect(hashOf([{ t: 0, kind: 'input', data: { find: 'default', players: 1 } }])).toBe(
      'sha256:401f6a59df9a7d26c9aa93c1788357134cbf18b0dbba7ba780ad6f1bfbc7ec1e',
    );
  });

  it('appendJson hashes and keeps exactly what append does with the parsed record', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 20 }), (records) => {
        const direct = new Trace({ keep: true });
        for (const r of records) direct.appendJson(r.t, r.kind, canonicalJson(r.data));
        expect(direct.hash()).toBe(hashOf(records));
        expect(direct.records()).toEqual(records.map((r) => JSON.parse(canonicalJson(r)) as unknown));
      }),
    );
    expect(() => new Trace({ keep: false }).appendJson(Number.NaN, 'event', 'null')).toThrow(TypeError);
  });

  it('keeps records only when asked, and closes after hash()', () => {
    const kept = new Trace({ keep: true });
    kept.append({ t: 1, kind: 'event', data: null });
    expect(kept.records()).toHaveLength(1);
    kept.hash();
    expect(() => kept.append({ t: 2, kind: 'event', data: null })).toThrow();
    expect(() => new Trace({ keep: false }).records()).toThrow();
  });
});

describe('golden traces', () => {
  it('round-trip through JSONL', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 20 }), (records) => {
        expect(serializeTrace(parseTrace(serializeTrace(records)))).toBe(serializeTrace(records));
      }),
    );
  });

  it('report the first divergence, and none for equal traces', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 20 }), fc.nat(), (records, at) => {
        expect(firstDivergence(records, records)).toBeUndefined();
        const i = at % records.length;
        const changed = records.map((r, j) => (j === i ? { ...r, kind: `${r.kind}!` } : r));
        expect(firstDivergence(records, changed)?.index).toBe(i);
        expect(firstDivergence(records, records.slice(0, i))?.index).toBe(i);
      }),
    );
  });

  it('explain a divergence readably, field by field', () => {
    const expected = { t: 120_000, kind: 'decision', data: { lobby: 'L1', seat: 3 } };
    const actual = { t: 120_000, kind: 'decision', data: { lobby: 'L2', seat: 3 } };
    const text = formatDivergence({ index: 3, expected, actual });
    expect(text).toContain('record 4 (t=120000)');
    expect(text).toContain('data.lobby: "L1" ≠ "L2"');
    expect(text).not.toContain('data.seat');
  });

  it('reject a malformed line with its number', () => {
    expect(() => parseTrace('{"t":0,"kind":"a","data":1}\n{"t":"x"}\n')).toThrow('trace line 2');
  });
});
