/**
 * A small deterministic pseudo-random generator (sfc32) built from a seed the caller passes in. The
 * core never reads ambient randomness: a decision takes `seed` in its context and draws from here,
 * so the same seed always gives the same choices.
 *
 * @example
 * const rng = createRng(42);
 * rng.int(6); // the same number in 0..5 on every run
 */
export interface Rng {
  /** A uniform 32-bit unsigned integer. */
  readonly u32: () => number;
  /** A uniform float in [0, 1). */
  readonly float: () => number;
  /** A uniform integer in [0, n) for 1 <= n <= 2^32. */
  readonly int: (n: number) => number;
}

export const createRng = (seed: number): Rng => {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const u32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  // Discard the first outputs so nearby seeds diverge.
  for (let i = 0; i < 12; i++) u32();
  const float = (): number => u32() / 4294967296;
  return { u32, float, int: (n: number) => Math.floor(float() * n) };
};

/**
 * Fisher–Yates shuffle into a new array, driven by `rng`.
 *
 * @example
 * shuffled(['a', 'b', 'c'], createRng(1)); // a permutation, the same for seed 1 every time
 */
export const shuffled = <T>(items: readonly T[], rng: Rng): T[] => {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const tmp = out[i] as T;
    out[i] = out[j] as T;
    out[j] = tmp;
  }
  return out;
};
