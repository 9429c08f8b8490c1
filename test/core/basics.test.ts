import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERRORS, errorMessage, matchError, validationError } from '../../src/core/errors.js';
import { createRng, shuffled } from '../../src/core/rng.js';

describe('rng', () => {
  it('is a pure function of its seed', () => {
    fc.assert(fc.property(fc.integer(), (seed) => {
      const a = createRng(seed);
      const b = createRng(seed);
      for (let i = 0; i < 5; i++) expect(a.u32()).toBe(b.u32());
    }));
  });

  it('draws integers in range, floats in [0, 1), and shuffles into permutations', () => {
    fc.assert(fc.property(fc.integer(), fc.integer({ min: 1, max: 1000 }), fc.array(fc.nat()), (seed, n, xs) => {
      const r = createRng(seed);
      const k = r.int(n);
      const f = r.float();
      expect(k >= 0 && k < n && Number.isInteger(k)).toBe(true);
      expect(f >= 0 && f < 1).toBe(true);
      expect([...shuffled(xs, r)].sort()).toEqual([...xs].sort());
    }));
  });

  it('gives different streams for nearby seeds', () => {
    expect(createRng(1).u32()).not.toBe(createRng(2).u32());
  });
});

describe('errors', () => {
  it('fills message placeholders and keeps unknown ones', () => {
    expect(errorMessage(matchError('MATCHMAKER_TOO_MANY_TAGS', { max: 8 }))).toBe('Too many tags (at most 8).');
    expect(errorMessage(matchError('MATCHMAKER_GAME_MODE_NOT_FOUND'))).toBe('Game mode not found: {game_mode}.');
  });

  it('renders validation problems as Rivet did, and keeps every path', () => {
    const e = validationError([{ path: ['display-name', 'too-long'] }, { path: ['config', 'cdn', 'no-site-id'] }]);
    expect(errorMessage(e)).toBe('did not pass validation: display-name.too-long, config.cdn.no-site-id');
    expect(e.metadata).toEqual({ errors: [{ path: ['display-name', 'too-long'] }, { path: ['config', 'cdn', 'no-site-id'] }] });
  });

  it('gives every code a 4xx or 5xx status and a message', () => {
    for (const e of Object.values(ERRORS)) {
      expect(e.status >= 400 && e.status < 600).toBe(true);
      expect(e.message.length).toBeGreaterThan(0);
    }
  });
});
