/**
 * A persistent hash map (a hash array mapped trie): every update returns a new map that shares all
 * untouched nodes with the old one, so changing one entry of a 100,000-entry map copies at most a
 * handful of 32-slot nodes, never the whole map. Old values stay valid and unchanged forever.
 *
 * The core keeps lobbies, players and the routing index in these maps, so a decision on a large
 * world costs about as much as one on a small world ("immutability must not mean copying the
 * world"). Keys are strings or numbers; a class instance, so immer treats it as an opaque value.
 *
 * @example
 * const a = PMap.empty<string, number>().set('x', 1);
 * const b = a.set('x', 2);
 * a.get('x'); // 1
 * b.get('x'); // 2
 */
export type Key = string | number;

interface Leaf<K, V> {
  readonly hash: number;
  readonly key: K;
  readonly value: V;
}

interface Branch<K, V> {
  readonly bitmap: number;
  readonly slots: readonly Slot<K, V>[];
}

interface Collision<K, V> {
  readonly hash: number;
  readonly leaves: readonly Leaf<K, V>[];
}

type Slot<K, V> = Leaf<K, V> | Branch<K, V> | Collision<K, V>;

const BITS = 5;
const MASK = 31;
const MAX_SHIFT = 30;

const isBranch = <K, V>(s: Slot<K, V>): s is Branch<K, V> => 'bitmap' in s;
const isCollision = <K, V>(s: Slot<K, V>): s is Collision<K, V> => 'leaves' in s;

const popcount = (x: number): number => {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
};

/** FNV-1a for strings, an integer mix for numbers. */
export const hashKey = (key: Key): number => {
  if (typeof key === 'number') {
    let h = Math.imul(key | 0, 0x9e3779b1) ^ Math.imul((key / 4294967296) | 0, 0x85ebca6b);
    h ^= h >>> 16;
    return Math.imul(h, 0x7feb352d) >>> 0;
  }
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
};

const replaced = <T>(arr: readonly T[], i: number, v: T): T[] => {
  const out = arr.slice();
  out[i] = v;
  return out;
};

const inserted = <T>(arr: readonly T[], i: number, v: T): T[] => {
  const out = arr.slice(0, i);
  out.push(v);
  for (let j = i; j < arr.length; j++) out.push(arr[j] as T);
  return out;
};

const removed = <T>(arr: readonly T[], i: number): T[] => arr.slice(0, i).concat(arr.slice(i + 1));

/** A branch holding two leaves whose hashes differ at or below `shift`, or a collision node. */
const merge = <K, V>(a: Leaf<K, V>, b: Leaf<K, V>, shift: number): Slot<K, V> => {
  if (shift > MAX_SHIFT || a.hash === b.hash) return { hash: a.hash, leaves: [a, b] };
  const ia = (a.hash >>> shift) & MASK;
  const ib = (b.hash >>> shift) & MASK;
  if (ia === ib) return { bitmap: 1 << ia, slots: [merge(a, b, shift + BITS)] };
  return { bitmap: (1 << ia) | (1 << ib), slots: ia < ib ? [a, b] : [b, a] };
};

interface Change<K, V> {
  readonly slot: Slot<K, V> | undefined;
  readonly delta: number;
}

const NO_CHANGE = { slot: undefined, delta: 0 } as const;

function setIn<K, V>(s: Slot<K, V>, leaf: Leaf<K, V>, shift: number): Change<K, V> {
  if (isBranch(s)) {
    const bit = 1 << ((leaf.hash >>> shift) & MASK);
    const i = popcount(s.bitmap & (bit - 1));
    if ((s.bitmap & bit) === 0) {
      return { slot: { bitmap: s.bitmap | bit, slots: inserted(s.slots, i, leaf) }, delta: 1 };
    }
    const child = setIn(s.slots[i] as Slot<K, V>, leaf, shift + BITS);
    if (child.slot === undefined) return NO_CHANGE;
    return { slot: { bitmap: s.bitmap, slots: replaced(s.slots, i, child.slot) }, delta: child.delta };
  }
  if (isCollision(s)) {
    if (s.hash !== leaf.hash) return setIn({ bitmap: 1 << ((s.hash >>> shift) & MASK), slots: [s] }, leaf, shift);
    const i = s.leaves.findIndex((l) => l.key === leaf.key);
    if (i < 0) return { slot: { hash: s.hash, leaves: [...s.leaves, leaf] }, delta: 1 };
    if ((s.leaves[i] as Leaf<K, V>).value === leaf.value) return NO_CHANGE;
    return { slot: { hash: s.hash, leaves: replaced(s.leaves, i, leaf) }, delta: 0 };
  }
  if (s.key === leaf.key) return s.value === leaf.value ? NO_CHANGE : { slot: leaf, delta: 0 };
  return { slot: merge(s, leaf, shift), delta: 1 };
}

/** `slot: undefined` with delta -1 means "the child became empty". */
function deleteIn<K, V>(s: Slot<K, V>, key: K, hash: number, shift: number): Change<K, V> | null {
  if (isBranch(s)) {
    const bit = 1 << ((hash >>> shift) & MASK);
    if ((s.bitmap & bit) === 0) return null;
    const i = popcount(s.bitmap & (bit - 1));
    const child = deleteIn(s.slots[i] as Slot<K, V>, key, hash, shift + BITS);
    if (child === null) return null;
    if (child.slot !== undefined) {
      const only = s.slots.length === 1 && !isBranch(child.slot);
      return { slot: only ? child.slot : { bitmap: s.bitmap, slots: replaced(s.slots, i, child.slot) }, delta: -1 };
    }
    if (s.slots.length === 1) return { slot: undefined, delta: -1 };
    const slots = removed(s.slots, i);
    const last = slots[0] as Slot<K, V>;
    // A branch left with one leaf collapses into that leaf so lookups stay short.
    const collapse = slots.length === 1 && !isBranch(last);
    return { slot: collapse ? last : { bitmap: s.bitmap ^ bit, slots }, delta: -1 };
  }
  if (isCollision(s)) {
    const i = s.leaves.findIndex((l) => l.key === key);
    if (i < 0) return null;
    const leaves = removed(s.leaves, i);
    return { slot: leaves.length === 1 ? leaves[0] : { hash: s.hash, leaves }, delta: -1 };
  }
  return s.key === key ? { slot: undefined, delta: -1 } : null;
}

function* walk<K, V>(s: Slot<K, V>): Generator<Leaf<K, V>> {
  if (isBranch(s)) for (const c of s.slots) yield* walk(c);
  else if (isCollision(s)) yield* s.leaves;
  else yield s;
}

export class PMap<K extends Key, V> {
  private static readonly EMPTY = new PMap<never, never>(0, undefined);

  private constructor(
    /** Number of entries. */
    readonly size: number,
    private readonly root: Slot<K, V> | undefined,
  ) {}

  static empty<K extends Key, V>(): PMap<K, V> {
    return PMap.EMPTY as unknown as PMap<K, V>;
  }

  /** @example PMap.from([['a', 1]]).get('a') // 1 */
  static from<K extends Key, V>(entries: Iterable<readonly [K, V]>): PMap<K, V> {
    let m = PMap.empty<K, V>();
    for (const [k, v] of entries) m = m.set(k, v);
    return m;
  }

  get(key: K): V | undefined {
    const hash = hashKey(key);
    let s = this.root;
    let shift = 0;
    while (s !== undefined) {
      if (isBranch(s)) {
        const bit = 1 << ((hash >>> shift) & MASK);
        if ((s.bitmap & bit) === 0) return undefined;
        s = s.slots[popcount(s.bitmap & (bit - 1))];
        shift += BITS;
      } else if (isCollision(s)) {
        return s.leaves.find((l) => l.key === key)?.value;
      } else {
        return s.key === key ? s.value : undefined;
      }
    }
    return undefined;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  /** A map with `key` bound to `value`; `this` when nothing changes. Values must not be `undefined`. */
  set(key: K, value: V): PMap<K, V> {
    const leaf: Leaf<K, V> = { hash: hashKey(key), key, value };
    if (this.root === undefined) return new PMap(1, leaf);
    const change = setIn(this.root, leaf, 0);
    return change.slot === undefined ? this : new PMap(this.size + change.delta, change.slot);
  }

  /** A map without `key`; `this` when it was absent. */
  delete(key: K): PMap<K, V> {
    if (this.root === undefined) return this;
    const change = deleteIn(this.root, key, hashKey(key), 0);
    if (change === null) return this;
    return change.slot === undefined ? PMap.empty() : new PMap(this.size - 1, change.slot);
  }

  /** A map with `key` bound to `f(current)`; `f` gets `undefined` when the key is absent. */
  update(key: K, f: (current: V | undefined) => V | undefined): PMap<K, V> {
    const next = f(this.get(key));
    return next === undefined ? this.delete(key) : this.set(key, next);
  }

  /** Some entry, the same one for the same contents: the leftmost in hash order. O(depth). */
  first(): readonly [K, V] | undefined {
    let s = this.root;
    while (s !== undefined && isBranch(s)) s = s.slots[0];
    if (s === undefined) return undefined;
    const leaf = isCollision(s) ? s.leaves[0] : s;
    return leaf === undefined ? undefined : [leaf.key, leaf.value];
  }

  *entries(): Generator<readonly [K, V]> {
    if (this.root !== undefined) for (const l of walk(this.root)) yield [l.key, l.value];
  }

  *keys(): Generator<K> {
    if (this.root !== undefined) for (const l of walk(this.root)) yield l.key;
  }

  *values(): Generator<V> {
    if (this.root !== undefined) for (const l of walk(this.root)) yield l.value;
  }

  [Symbol.iterator](): Generator<readonly [K, V]> {
    return this.entries();
  }
}
