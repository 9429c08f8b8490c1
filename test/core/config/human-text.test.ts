/**
 * Human-facing text (outside probe): display names and the version's identity display names refuse
 * NUL, control characters, bidi overrides and isolates, and lone surrogates, with the field path.
 */
import { describe, expect, it } from 'vitest';
import { validateDisplayName } from '../../../src/core/config/index.js';
import { parseVersionConfig } from '../../../src/core/config/parse.js';
import { isHumanText } from '../../../src/core/config/validate-text.js';
import type { Problem } from '../../../src/core/config/types.js';

/** Each refused character, named. */
const REFUSED: readonly (readonly [string, string])[] = [
  ['NUL', '\u0000'], ['BEL', '\u0007'], ['ESC', '\u001b'], ['DEL', '\u007f'], ['C1 CSI', '\u009b'],
  ['LRE', '\u202a'], ['RLE', '\u202b'], ['PDF', '\u202c'], ['LRO', '\u202d'], ['RLO', '\u202e'],
  ['LRI', '\u2066'], ['RLI', '\u2067'], ['FSI', '\u2068'], ['PDI', '\u2069'], ['LRM', '\u200e'], ['RLM', '\u200f'], ['ALM', '\u061c'],
  ['lone high surrogate', '\ud800'], ['lone low surrogate', '\udc00'], ['reversed pair', '\udc00\ud800'],
];

/** Text people write, kept: accents, CJK, right-to-left scripts, emoji with joiners and skin tones. */
const KEPT = ['Space Game', 'Ünïcödé', '名前のゲーム', 'مرحبا بالعالم', 'שלום', '👨‍👩‍👧 family', '👍🏽 ok', 'a-b_c.d (e)'];

const displayNameProblems = (name: unknown): string[] => {
  const out: Problem[] = [];
  validateDisplayName(name, { regions: new Set() }, out);
  return out.map((p) => p.path.join('.'));
};

describe('human-facing text', () => {
  it.each(REFUSED)('a display name with %s is display-name.invalid, wherever it sits', (_, ch) => {
    for (const name of [`a${ch}b`, `${ch}ab`, `ab${ch}`]) {
      expect(isHumanText(name)).toBe(false);
      expect(displayNameProblems(name)).toEqual(['display-name.invalid']);
    }
  });

  it('keeps text people write in any script', () => {
    for (const name of KEPT) {
      expect(isHumanText(name), name).toBe(true);
      expect(displayNameProblems(name), name).toEqual([]);
    }
  });

  it('a version config refuses them in identity display names, with each path', () => {
    const parsed = parseVersionConfig({ identity: { display_names: ['ok', 'a\u202eb'], custom_display_names: [{ display_name: 'x\u0000' }, { display_name: 'fine' }] } });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.map((p) => p.path.join('.'))).toEqual([
      'config.identity.display-names.1.invalid',
      'config.identity.custom-display-names.0.display-name.invalid',
    ]);
  });
});
