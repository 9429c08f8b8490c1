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

  it('is sfc32 (PractRand), checked against a BigInt model of the published step, 12 outputs discarded', () => {
    const M = 2n ** 32n;
    const model = (seed: number) => {
      let [a, b, c, d] = [0x9e3779b9n, 0x243f6a88n, 0xb7e15162n, BigInt(seed >>> 0)];
      const next = (): number => {
        const t = (a + b + d) % M;
        d = (d + 1n) % M;
        a = b ^ (b >> 9n);
        b = (c + ((c << 3n) % M)) % M;
        c = (((c << 21n) | (c >> 11n)) % M + t) % M;
        return Number(t);
      };
      for (let i = 0; i < 12; i++) next();
      return next;
    };
    for (const seed of [0, 1, 42, 0xffffffff, -1, 2 ** 31, 123_456_789]) {
      const r = createRng(seed);
      const m = model(seed);
      for (let i = 0; i < 200; i++) expect(r.u32(), `seed ${seed}, draw ${i}`).toBe(m());
      const f = createRng(seed);
      const mf = model(seed);
      for (let i = 0; i < 50; i++) expect(f.float()).toBe(mf() / 2 ** 32);
      const n = createRng(seed);
      const mn = model(seed);
      for (const bound of [1, 2, 3, 6, 1000, 2 ** 32]) expect(n.int(bound)).toBe(Math.floor((mn() / 2 ** 32) * bound));
    }
  });

  it('shuffles uniformly: each of the 6 orders of 3 items about equally often, and one draw per position', () => {
    const counts = new Map<string, number>();
    const r = createRng(7);
    for (let i = 0; i < 6_000; i++) {
      const key = shuffled(['a', 'b', 'c'], r).join('');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(['abc', 'acb', 'bac', 'bca', 'cab', 'cba']);
    // 1,000 expected each; a binomial standard deviation of about 29, so ±150 is more than 5 of them.
    for (const n of counts.values()) expect(Math.abs(n - 1_000)).toBeLessThan(150);
    // n - 1 draws for n items (none for the last position), so what follows a shuffle is fixed.
    const a = createRng(3);
    const b = createRng(3);
    shuffled([1, 2, 3, 4], a);
    for (let i = 0; i < 3; i++) b.u32();
    expect(a.u32()).toBe(b.u32());
    expect(shuffled([], createRng(1))).toEqual([]);
    expect(shuffled([9], createRng(1))).toEqual([9]);
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

  it("adds a problem's own words after its path, and keeps them in the metadata", () => {
    const e = validationError([{ path: ['config', 'matchmaker', 'max-player', 'unknown-key'], message: 'did you mean max_players?' }, { path: ['display-name', 'too-long'] }]);
    expect(errorMessage(e)).toBe('did not pass validation: config.matchmaker.max-player.unknown-key (did you mean max_players?), display-name.too-long');
    expect(e.metadata).toEqual({ errors: [{ path: ['config', 'matchmaker', 'max-player', 'unknown-key'], message: 'did you mean max_players?' }, { path: ['display-name', 'too-long'] }] });
  });

  it('gives every code a 4xx or 5xx status and a message', () => {
    for (const e of Object.values(ERRORS)) {
      expect(e.status >= 400 && e.status < 600).toBe(true);
      expect(e.message.length).toBeGreaterThan(0);
    }
  });
});
