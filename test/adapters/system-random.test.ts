import { describe, expect, it } from 'vitest';
import { SystemRandom } from '../../src/adapters/system-random.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('SystemRandom', () => {
  it('mints distinct version 4 UUIDs across many batches', () => {
    const random = new SystemRandom();
    const ids = Array.from({ length: 5_000 }, () => random.uuid());
    for (const id of ids) expect(id).toMatch(V4);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('spreads every hex digit over the random positions of an id', () => {
    const random = new SystemRandom();
    // Position 0 (random) and 19 (variant: 8, 9, a or b) over 2,000 ids.
    const first = new Set<string>();
    const variant = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const id = random.uuid();
      first.add(id[0] as string);
      variant.add(id[19] as string);
    }
    expect(first.size).toBe(16);
    expect([...variant].sort()).toEqual(['8', '9', 'a', 'b']);
  });

  it('keeps an id it handed out when it draws the next batch', () => {
    const random = new SystemRandom();
    const first = random.uuid();
    const copy = `${first}`;
    for (let i = 0; i < 1_000; i++) random.uuid();
    expect(first).toBe(copy);
  });

  it('draws u32 seeds over the whole range', () => {
    const random = new SystemRandom();
    const seeds = Array.from({ length: 1_000 }, () => random.u32());
    for (const s of seeds) {
      expect(Number.isInteger(s)).toBe(true);
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThan(2 ** 32);
    }
    expect(seeds.some((s) => s >= 2 ** 31)).toBe(true);
    expect(new Set(seeds).size).toBeGreaterThan(990);
  });
});
