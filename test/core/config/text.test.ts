/** UTF-8 lengths (wire.md §2.1 limits are in bytes, as Rivet's `str::len`) and identifiers. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isIdent, utf8Length } from '../../../src/core/config/validate-text.js';

/** The reference: what the platform's UTF-8 encoder produces (lone surrogates become U+FFFD, 3 bytes). */
const encoded = (s: string): number => new TextEncoder().encode(s).length;

describe('utf8Length', () => {
  it('agrees with the UTF-8 encoder at every boundary of the encoding', () => {
    const boundaries = ['\u0000', '\u007f', '\u0080', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uffff', '\u{10000}', '\u{10ffff}', '\ud800', '\udfff'];
    for (const ch of boundaries) expect([ch, utf8Length(ch)]).toEqual([ch, encoded(ch)]);
    expect(utf8Length(boundaries.join(''))).toBe(encoded(boundaries.join('')));
  });

  it('agrees with the UTF-8 encoder on any string', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), (a, b) => {
      expect(utf8Length(a)).toBe(encoded(a));
      expect(utf8Length(b)).toBe(encoded(b));
    }), { numRuns: 300 });
  });
});

describe('isIdent', () => {
  it('accepts 1–16 characters and refuses 17', () => {
    expect(['a', 'x'.repeat(16), 'lnd-atl', 'a1-b2'].map(isIdent)).toEqual([true, true, true, true]);
    expect(['', 'x'.repeat(17), 'a--b', '-a', 'a-', 'A'].map(isIdent)).toEqual([false, false, false, false, false, false]);
  });
});
