/** The "did you mean" of an unknown key: examples, and properties of the suggestion and the distance. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { editDistance, foldKey, nearestKey } from '../../../src/core/config/nearest-key.js';

const PORT_KEYS = ['port', 'port_range', 'protocol', 'proxy', 'dev_port', 'dev_port_range', 'dev_protocol'];
const MATCHMAKER_KEYS = ['regions', 'max_players', 'max_players_direct', 'max_players_party', 'container', 'docker', 'tier', 'idle_lobbies', 'game_modes', 'captcha'];

/** The textbook recurrence, no early stop: the reference the bounded one must agree with. */
function reference(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => d[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = v;
    }
  }
  return at(a.length, b.length);
}

describe('nearestKey', () => {
  it('finds the key a typo meant', () => {
    expect(nearestKey('max_player', MATCHMAKER_KEYS)).toBe('max_players');
    expect(nearestKey('protocl', PORT_KEYS)).toBe('protocol');
    expect(nearestKey('tire', MATCHMAKER_KEYS)).toBe('tier');
    expect(nearestKey('game_mode', MATCHMAKER_KEYS)).toBe('game_modes');
    expect(nearestKey('dockr', MATCHMAKER_KEYS)).toBe('docker');
  });

  it('ignores case and separators: the dashed path spelling and camelCase find the wire key', () => {
    expect(nearestKey('max-players', MATCHMAKER_KEYS)).toBe('max_players');
    expect(nearestKey('maxPlayers', MATCHMAKER_KEYS)).toBe('max_players');
    expect(nearestKey('IdleLobbies', MATCHMAKER_KEYS)).toBe('idle_lobbies');
  });

  it('suggests nothing for a far-off key, nor more than one edit for a short one', () => {
    expect(nearestKey('privileged', PORT_KEYS)).toBeUndefined();
    expect(nearestKey('volumes', MATCHMAKER_KEYS)).toBeUndefined();
    expect(nearestKey('tx', MATCHMAKER_KEYS)).toBeUndefined();
    expect(nearestKey('prot', PORT_KEYS)).toBe('port');
    expect(nearestKey('pxrx', PORT_KEYS)).toBeUndefined();
    expect(nearestKey('xyz', ['abc'])).toBeUndefined();
    expect(nearestKey('anything', [])).toBeUndefined();
  });

  it('prefers the closest key, then the first one listed', () => {
    expect(nearestKey('max_players_dirct', MATCHMAKER_KEYS)).toBe('max_players_direct');
    expect(nearestKey('mix', ['max', 'min'])).toBe('max');
    expect(nearestKey('mix', ['min', 'max'])).toBe('min');
  });

  it('always suggests a known key, within the allowance, and no farther than another known key', () => {
    const key = fc.string({ unit: fc.constantFrom(...'abcdeor_-P'), maxLength: 12 });
    fc.assert(fc.property(key, fc.array(key, { maxLength: 8 }), (typed, known) => {
      const near = nearestKey(typed, known);
      if (near === undefined) {
        for (const k of known) expect(reference(foldKey(typed), foldKey(k))).toBeGreaterThan(foldKey(typed).length <= 4 ? 1 : 2);
        return;
      }
      expect(known).toContain(near);
      const distance = reference(foldKey(typed), foldKey(near));
      expect(distance).toBeLessThanOrEqual(foldKey(typed).length <= 4 ? 1 : 2);
      for (const k of known) expect(reference(foldKey(typed), foldKey(k))).toBeGreaterThanOrEqual(distance);
    }), { numRuns: 300 });
  });
});

describe('editDistance', () => {
  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('tier', 'tire')).toBe(1);
    expect(editDistance('protocl', 'protocol')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', 'abc')).toBe(0);
  });

  it('agrees with the reference below its limit and says "above" past it', () => {
    const word = fc.string({ unit: fc.constantFrom(...'abcd'), maxLength: 9 });
    fc.assert(fc.property(word, word, fc.integer({ min: 0, max: 4 }), (a, b, limit) => {
      const exact = reference(a, b);
      expect(editDistance(a, b)).toBe(exact);
      const bounded = editDistance(a, b, limit);
      if (exact <= limit) expect(bounded).toBe(exact);
      else expect(bounded).toBeGreaterThan(limit);
    }), { numRuns: 300 });
  });
});
