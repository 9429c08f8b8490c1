/**
 * A persistent bitset over one port interval, used to record which ports are taken.
 *
 * Layout: bit `i` stands for port `min + i`. Bits live in 32-bit words; 32 words form a chunk of
 * 1,024 ports that also stores how many of its bits are set. Chunks and words are frozen and never
 * written after construction, so an update copies only the chunks it touches (32 words each) plus
 * the small top-level chunk array (12 entries for 20000..31999); every other chunk is shared with
 * the previous value. A range of ports therefore costs O(chunks + words per chunk) to count or to
 * search, however many ports are taken.
 *
 * The class is opaque to immer (a class instance without `immerable`), like `PMap`.
 */
import type { PortRange } from '../config/types.js';

const WORD_BITS = 32;
const WORDS_PER_CHUNK = 32;
/** Ports per chunk (1,024). */
const CHUNK_BITS = WORD_BITS * WORDS_PER_CHUNK;

interface Chunk {
  /** `WORDS_PER_CHUNK` unsigned 32-bit words; bit `b` of word `w` is chunk offset `w * 32 + b`. */
  readonly words: readonly number[];
  /** How many bits of `words` are set. */
  readonly count: number;
}

const EMPTY_CHUNK: Chunk = Object.freeze({
  words: Object.freeze(new Array<number>(WORDS_PER_CHUNK).fill(0)),
  count: 0,
});

/**
 * The number of set bits of a 32-bit value.
 *
 * @example
 * popcount32(0b1011); // 3
 */
export const popcount32 = (x: number): number => {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
};

/** The bits `lo..hi` (0 <= lo <= hi <= 31) of a word, as an unsigned 32-bit mask. */
const maskBetween = (lo: number, hi: number): number => ((0xffffffff >>> (31 - (hi - lo))) << lo) >>> 0;

/** The position of the `k`-th (0-based) set bit of `v`; `k` is below `popcount32(v)`. */
const selectBit = (v: number, k: number): number => {
  let x = v >>> 0;
  for (let i = 0; i < k; i++) x = (x & (x - 1)) >>> 0;
  return 31 - Math.clz32(x & -x);
};

/** Visits the words overlapping chunk offsets `a..b`, each with the mask of its overlap; stops on true. */
const eachWord = (a: number, b: number, visit: (wordIndex: number, mask: number) => boolean): void => {
  const first = a >>> 5;
  const last = b >>> 5;
  for (let w = first; w <= last; w++) {
    const lo = w === first ? a & 31 : 0;
    const hi = w === last ? b & 31 : 31;
    if (visit(w, maskBetween(lo, hi))) return;
  }
};

/** Set bits of `chunk` at chunk offsets `a..b`. */
const usedIn = (chunk: Chunk, a: number, b: number): number => {
  if (chunk.count === 0) return 0;
  let n = 0;
  eachWord(a, b, (w, mask) => {
    n += popcount32((chunk.words[w] ?? 0) & mask);
    return false;
  });
  return n;
};

/** The chunk offset of the `k`-th clear bit among offsets `a..b`, which holds more than `k`. */
const selectFreeIn = (chunk: Chunk, a: number, b: number, k: number): number => {
  let left = k;
  // Stryker disable next-line UnaryOperator: the initial value is never returned: callers ask only for a chunk holding more than k free ports
  let found = -1;
  eachWord(a, b, (w, mask) => {
    const free = ~(chunk.words[w] ?? 0) & mask;
    const n = popcount32(free);
    if (left >= n) {
      left -= n;
      return false;
    }
    found = w * WORD_BITS + selectBit(free, left);
    return true;
  });
  return found;
};

/** A mutable working copy of one chunk, private to a single update. */
interface Draft {
  /** The chunk's index. */
  readonly c: number;
  readonly source: Chunk;
  readonly words: number[];
  count: number;
}

/**
 * A set of ports within `min..max` that never changes; updates return a new value.
 *
 * @example
 * const a = PortBitset.create({ min: 20000, max: 31999 });
 * const b = a.setMany([20000, 20005]);
 * b.has(20005); // true
 * a.has(20005); // false: `a` never changes
 * b.nthFree({ min: 20000, max: 20010 }, 0); // 20001
 */
export class PortBitset {
  private constructor(
    /** The first port the set covers. */
    readonly min: number,
    /** The last port the set covers. */
    readonly max: number,
    /** How many ports are in the set. */
    readonly used: number,
    private readonly chunks: readonly Chunk[],
  ) {}

  /**
   * An empty set over `range`. Throws a RangeError when `range` is not `min <= max` integers (a bug).
   *
   * @example
   * PortBitset.create({ min: 1, max: 10 }).capacity; // 10
   */
  static create(range: PortRange): PortBitset {
    if (!Number.isInteger(range.min) || !Number.isInteger(range.max) || range.min > range.max) {
      throw new RangeError(`invalid port interval ${range.min}..${range.max}`);
    }
    const n = Math.ceil((range.max - range.min + 1) / CHUNK_BITS);
    return new PortBitset(range.min, range.max, 0, Object.freeze(new Array<Chunk>(n).fill(EMPTY_CHUNK)));
  }

  /** How many ports the set covers (`max - min + 1`). */
  get capacity(): number {
    return this.max - this.min + 1;
  }

  /** Whether `port` is an integer in `min..max`. */
  covers(port: number): boolean {
    return Number.isInteger(port) && port >= this.min && port <= this.max;
  }

  /** Whether `port` is in the set (ports outside `min..max` never are). */
  has(port: number): boolean {
    if (!this.covers(port)) return false;
    const i = port - this.min;
    const word = this.chunks[Math.floor(i / CHUNK_BITS)]?.words[(i >>> 5) & 31] ?? 0;
    return ((word >>> (i & 31)) & 1) === 1;
  }

  /**
   * The set with `ports` added; `this` when all were present. Throws a RangeError for a port outside
   * `min..max` (a bug: callers check `covers` first).
   */
  setMany(ports: Iterable<number>): PortBitset {
    return this.update(ports, true);
  }

  /** The set with `ports` removed; `this` when none was present. Ports outside `min..max` are ignored. */
  clearMany(ports: Iterable<number>): PortBitset {
    return this.update(ports, false);
  }

  /** How many ports of `range ∩ min..max` are in the set. O(chunks + words per chunk). */
  countUsed(range: PortRange): number {
    let n = 0;
    this.eachChunkPart(range, (chunk, a, b, whole) => {
      n += whole ? chunk.count : usedIn(chunk, a, b);
      return false;
    });
    return n;
  }

  /** How many ports of `range ∩ min..max` are not in the set. */
  countFree(range: PortRange): number {
    const lo = Math.max(range.min, this.min);
    const hi = Math.min(range.max, this.max);
    return hi < lo ? 0 : hi - lo + 1 - this.countUsed(range);
  }

  /**
   * The `k`-th (0-based, ascending) port of `range ∩ min..max` that is not in the set, or
   * `undefined` when fewer than `k + 1` are free. O(chunks + words per chunk + 32).
   */
  nthFree(range: PortRange, k: number): number | undefined {
    if (!Number.isInteger(k) || k < 0) return undefined;
    let left = k;
    let port: number | undefined;
    this.eachChunkPart(range, (chunk, a, b, whole, start) => {
      const free = b - a + 1 - (whole ? chunk.count : usedIn(chunk, a, b));
      if (left >= free) {
        left -= free;
        return false;
      }
      port = this.min + start + selectFreeIn(chunk, a, b, left);
      return true;
    });
    return port;
  }

  /** The ports in the set, ascending. O(capacity) in the worst case; for tests and diagnostics. */
  toArray(): number[] {
    const out: number[] = [];
    this.chunks.forEach((chunk, c) => {
      if (chunk.count === 0) return;
      chunk.words.forEach((word, w) => {
        for (let x = word >>> 0; x !== 0; x = (x & (x - 1)) >>> 0) {
          out.push(this.min + c * CHUNK_BITS + w * WORD_BITS + (31 - Math.clz32(x & -x)));
        }
      });
    });
    return out;
  }

  /**
   * Calls `visit` for each chunk overlapping `range ∩ min..max`, ascending, with the overlap as chunk
   * offsets `a..b`, whether the overlap is the chunk's whole live part, and the chunk's first index.
   * Stops when `visit` returns true.
   */
  private eachChunkPart(
    range: PortRange,
    visit: (chunk: Chunk, a: number, b: number, whole: boolean, start: number) => boolean,
  ): void {
    const lo = Math.max(range.min, this.min) - this.min;
    const hi = Math.min(range.max, this.max) - this.min;
    if (hi < lo) return;
    // Stryker disable next-line ArithmeticOperator: lo and hi are clamped to the set, so a later end only turns a whole-chunk shortcut into the per-word count, with the same result
    const last = this.capacity - 1;
    for (let c = Math.floor(lo / CHUNK_BITS); c <= Math.floor(hi / CHUNK_BITS); c++) {
      const start = c * CHUNK_BITS;
      const end = Math.min(start + CHUNK_BITS - 1, last);
      const a = Math.max(lo, start) - start;
      const b = Math.min(hi, end) - start;
      const whole = a === 0 && b === end - start;
      if (visit(this.chunks[c] ?? EMPTY_CHUNK, a, b, whole, start)) return;
    }
  }

  /** Sets or clears `ports`, copying each touched chunk once and sharing every other one. */
  private update(ports: Iterable<number>, value: boolean): PortBitset {
    // A lobby touches one or two chunks and a range consecutive ones: an array with the last draft
    // tried first beats a Map here.
    const drafts: Draft[] = [];
    let d: Draft | undefined;
    let delta = 0;
    for (const port of ports) {
      if (!this.covers(port)) {
        if (value) throw new RangeError(`port ${port} outside ${this.min}..${this.max}`);
        continue;
      }
      const i = port - this.min;
      const c = Math.floor(i / CHUNK_BITS);
      if (d === undefined || d.c !== c) d = drafts.find((x) => x.c === c);
      if (d === undefined) {
        const source = this.chunks[c] ?? EMPTY_CHUNK;
        // Spread, not slice(): V8 slices a frozen array through a slow generic path (~40× slower).
        d = { c, source, words: [...source.words], count: source.count };
        drafts.push(d);
      }
      const w = (i >>> 5) & 31;
      const bit = 1 << (i & 31);
      const word = d.words[w] ?? 0;
      if (((word & bit) !== 0) === value) continue;
      d.words[w] = (value ? word | bit : word & ~bit) >>> 0;
      d.count += value ? 1 : -1;
      delta += value ? 1 : -1;
    }
    if (delta === 0) return this;
    const chunks = [...this.chunks];
    for (const draft of drafts) {
      if (draft.count === draft.source.count) continue;
      chunks[draft.c] = draft.count === 0 ? EMPTY_CHUNK : Object.freeze({ words: Object.freeze(draft.words), count: draft.count });
    }
    return new PortBitset(this.min, this.max, this.used + delta, Object.freeze(chunks));
  }
}
