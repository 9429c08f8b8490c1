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

const LEAF = 0;
const BRANCH = 1;
const COLLISION = 2;

/**
 * One node shape for leaves, branches and collision lists, so every property access stays
 * monomorphic (V8 keeps one hidden class): a leaf has `key`/`value`; a branch has `bitmap` and
 * `slots`; a collision node has `hash` and its leaves in `slots`.
 */
class Node<K, V> {
  constructor(
    readonly kind: number,
    readonly hash: number,
    readonly key: K | undefined,
    readonly value: V | undefined,
    readonly bitmap: number,
    readonly slots: readonly Node<K, V>[],
  ) {}
}

const NO_SLOTS: readonly never[] = Object.freeze([]);
const leaf = <K, V>(hash: number, key: K, value: V): Node<K, V> => new Node(LEAF, hash, key, value, 0, NO_SLOTS);
const branch = <K, V>(bitmap: number, slots: readonly Node<K, V>[]): Node<K, V> =>
  new Node<K, V>(BRANCH, 0, undefined, undefined, bitmap, slots);
const collision = <K, V>(hash: number, leaves: readonly Node<K, V>[]): Node<K, V> =>
  new Node<K, V>(COLLISION, hash, undefined, undefined, 0, leaves);

const BITS = 5;
const MASK = 31;
const MAX_SHIFT = 30;

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
  const n = arr.length;
  const out = new Array<T>(n + 1);
  for (let j = 0; j < i; j++) out[j] = arr[j] as T;
  out[i] = v;
  for (let j = i; j < n; j++) out[j + 1] = arr[j] as T;
  return out;
};

const removed = <T>(arr: readonly T[], i: number): T[] => {
  const n = arr.length;
  const out = new Array<T>(n - 1);
  for (let j = 0; j < i; j++) out[j] = arr[j] as T;
  for (let j = i + 1; j < n; j++) out[j - 1] = arr[j] as T;
  return out;
};

/** The order of keys within a collision node: numbers before strings, then ascending. */
const keyBefore = <K>(a: K, b: K): boolean =>
  typeof a === typeof b ? (a as Key) < (b as Key) : typeof a === 'number';

/** A branch holding two leaves whose hashes differ at or below `shift`, or a collision node. */
const merge = <K, V>(a: Node<K, V>, b: Node<K, V>, shift: number): Node<K, V> => {
  if (shift > MAX_SHIFT || a.hash === b.hash) return collision(a.hash, keyBefore(a.key as K, b.key as K) ? [a, b] : [b, a]);
  const ia = (a.hash >>> shift) & MASK;
  const ib = (b.hash >>> shift) & MASK;
  if (ia === ib) return branch(1 << ia, [merge(a, b, shift + BITS)]);
  return branch((1 << ia) | (1 << ib), ia < ib ? [a, b] : [b, a]);
};

/** Per-call scratch: whether the set added a key (so the size grows). */
interface Added {
  added: boolean;
}

/** The node with `l` set in it, or the same node when nothing changes. */
function setIn<K, V>(s: Node<K, V>, l: Node<K, V>, shift: number, out: Added): Node<K, V> {
  if (s.kind === BRANCH) {
    const bit = 1 << ((l.hash >>> shift) & MASK);
    const i = popcount(s.bitmap & (bit - 1));
    if ((s.bitmap & bit) === 0) {
      out.added = true;
      return branch(s.bitmap | bit, inserted(s.slots, i, l));
    }
    const child = s.slots[i] as Node<K, V>;
    const next = setIn(child, l, shift + BITS, out);
    return next === child ? s : branch(s.bitmap, replaced(s.slots, i, next));
  }
  if (s.kind === COLLISION) {
    if (s.hash !== l.hash) return setIn(branch(1 << ((s.hash >>> shift) & MASK), [s]), l, shift, out);
    const i = s.slots.findIndex((x) => x.key === l.key);
    if (i < 0) {
      out.added = true;
      // Kept in key order, so iteration order depends on the keys alone, never on insertion order.
      let at = 0;
      while (at < s.slots.length && keyBefore(s.slots[at]?.key as K, l.key as K)) at++;
      return collision(s.hash, inserted(s.slots, at, l));
    }
    return (s.slots[i] as Node<K, V>).value === l.value ? s : collision(s.hash, replaced(s.slots, i, l));
  }
  if (s.key === l.key) return s.value === l.value ? s : l;
  out.added = true;
  return merge(s, l, shift);
}

/** The node without `key` (undefined when it became empty), or the same node when absent. */
function deleteIn<K, V>(s: Node<K, V>, key: K, hash: number, shift: number): Node<K, V> | undefined {
  if (s.kind === BRANCH) {
    const bit = 1 << ((hash >>> shift) & MASK);
    if ((s.bitmap & bit) === 0) return s;
    const i = popcount(s.bitmap & (bit - 1));
    const child = s.slots[i] as Node<K, V>;
    const next = deleteIn(child, key, hash, shift + BITS);
    if (next === child) return s;
    if (next !== undefined) {
      return s.slots.length === 1 && next.kind !== BRANCH ? next : branch(s.bitmap, replaced(s.slots, i, next));
    }
    if (s.slots.length === 1) return undefined;
    const slots = removed(s.slots, i);
    const last = slots[0] as Node<K, V>;
    // A branch left with one leaf collapses into that leaf so lookups stay short.
    return slots.length === 1 && last.kind !== BRANCH ? last : branch(s.bitmap ^ bit, slots);
  }
  if (s.kind === COLLISION) {
    const i = s.slots.findIndex((x) => x.key === key);
    if (i < 0) return s;
    const leaves = removed(s.slots, i);
    return leaves.length === 1 ? leaves[0] : collision(s.hash, leaves);
  }
  return s.key === key ? undefined : s;
}

/**
 * The leaves under a node in trie order, through an explicit stack: a recursive generator pays a
 * generator frame per level per leaf, and ticks and idle plans iterate whole namespaces.
 */
class Leaves<K, V, T> implements IterableIterator<T> {
  readonly #nodes: Node<K, V>[] = [];
  readonly #next: number[] = [];
  readonly #pick: (leaf: Node<K, V>) => T;

  constructor(root: Node<K, V> | undefined, pick: (leaf: Node<K, V>) => T) {
    this.#pick = pick;
    if (root !== undefined) {
      this.#nodes.push(root);
      this.#next.push(0);
    }
  }

  next(): IteratorResult<T> {
    const nodes = this.#nodes;
    const next = this.#next;
    while (nodes.length > 0) {
      const top = nodes.length - 1;
      const node = nodes[top] as Node<K, V>;
      if (node.kind === LEAF) {
        nodes.pop();
        next.pop();
        return { value: this.#pick(node), done: false };
      }
      const i = next[top] as number;
      if (i >= node.slots.length) {
        nodes.pop();
        next.pop();
        continue;
      }
      next[top] = i + 1;
      const child = node.slots[i] as Node<K, V>;
      if (child.kind === LEAF) return { value: this.#pick(child), done: false };
      nodes.push(child);
      next.push(0);
    }
    return { value: undefined, done: true };
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this;
  }
}

const asLeaf = <K, V>(l: Node<K, V>): Node<K, V> => l;
const asKey = <K, V>(l: Node<K, V>): K => l.key as K;
const asValue = <K, V>(l: Node<K, V>): V => l.value as V;
const asEntry = <K, V>(l: Node<K, V>): readonly [K, V] => [l.key as K, l.value as V];

/** Every leaf under `s` (none when `s` is undefined). */
const leavesOf = <K, V>(s: Node<K, V> | undefined): Iterable<Node<K, V>> => new Leaves(s, asLeaf);

/**
 * Reports every key whose value differs between the subtrees `a` (before) and `b` (after) at the
 * same trie position (so their branches split on the same hash bits). Identical nodes are skipped whole; two branches are compared slot by slot;
 * anything else (leaves, collision lists, a leaf against a branch) by its leaves.
 */
function diffNodes<K, V>(
  a: Node<K, V> | undefined,
  b: Node<K, V> | undefined,
  onChange: (key: K, before: V | undefined, after: V | undefined) => void,
): void {
  if (a === b) return;
  if (a !== undefined && b !== undefined && a.kind === BRANCH && b.kind === BRANCH) {
    let bits = a.bitmap | b.bitmap;
    while (bits !== 0) {
      const bit = bits & -bits;
      bits ^= bit;
      const below = bit - 1;
      const ca = (a.bitmap & bit) === 0 ? undefined : a.slots[popcount(a.bitmap & below)];
      const cb = (b.bitmap & bit) === 0 ? undefined : b.slots[popcount(b.bitmap & below)];
      diffNodes(ca, cb, onChange);
    }
    return;
  }
  const before = new Map<K, V>();
  for (const l of leavesOf(a)) before.set(l.key as K, l.value as V);
  for (const l of leavesOf(b)) {
    const key = l.key as K;
    const old = before.get(key);
    if (old !== l.value) onChange(key, old, l.value);
    before.delete(key);
  }
  for (const [key, old] of before) onChange(key, old, undefined);
}

function forEachIn<K, V>(s: Node<K, V>, f: (value: V, key: K) => void): void {
  if (s.kind === LEAF) f(s.value as V, s.key as K);
  else for (const child of s.slots) forEachIn(child, f);
}

export class PMap<K extends Key, V> {
  private static readonly EMPTY = new PMap<never, never>(0, undefined);

  private constructor(
    /** Number of entries. */
    readonly size: number,
    private readonly root: Node<K, V> | undefined,
  ) {}

  static empty<K extends Key, V>(): PMap<K, V> {
    return PMap.EMPTY;
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
      if (s.kind === BRANCH) {
        const bit = 1 << ((hash >>> shift) & MASK);
        if ((s.bitmap & bit) === 0) return undefined;
        s = s.slots[popcount(s.bitmap & (bit - 1))];
        shift += BITS;
      } else if (s.kind === COLLISION) {
        return s.slots.find((l) => l.key === key)?.value;
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
    const l = leaf(hashKey(key), key, value);
    if (this.root === undefined) return new PMap(1, l);
    const out: Added = { added: false };
    const root = setIn(this.root, l, 0, out);
    return root === this.root ? this : new PMap(this.size + (out.added ? 1 : 0), root);
  }

  /** A map without `key`; `this` when it was absent. */
  delete(key: K): PMap<K, V> {
    if (this.root === undefined) return this;
    const root = deleteIn(this.root, key, hashKey(key), 0);
    if (root === this.root) return this;
    return root === undefined ? PMap.empty() : new PMap(this.size - 1, root);
  }

  /** A map with `key` bound to `f(current)`; `f` gets `undefined` when the key is absent. */
  update(key: K, f: (current: V | undefined) => V | undefined): PMap<K, V> {
    const next = f(this.get(key));
    return next === undefined ? this.delete(key) : this.set(key, next);
  }

  /** Some entry, the same one for the same contents: the leftmost in hash order. O(depth). */
  first(): readonly [K, V] | undefined {
    const l = this.firstLeaf();
    return l === undefined ? undefined : [l.key as K, l.value as V];
  }

  /** The key of {@link first}, without allocating an entry. */
  firstKey(): K | undefined {
    return this.firstLeaf()?.key;
  }

  private firstLeaf(): Node<K, V> | undefined {
    let s = this.root;
    while (s !== undefined && s.kind !== LEAF) s = s.slots[0];
    return s;
  }

  /**
   * Calls `onChange(key, before, after)` for every key whose value differs (by `===`) between this
   * map (before) and `other` (after): `before` undefined for an added key, `after` for a deleted
   * one. Subtrees the two maps share are skipped, so comparing a map with one derived from it by a
   * few updates costs about as much as those updates, whatever the size. Order is unspecified.
   *
   * @example
   * const a = PMap.from([['x', 1], ['y', 2]]);
   * a.diff(a.set('x', 3).delete('y'), (k, before, after) => log(k, before, after)); // x 1 3, y 2 undefined
   */
  diff(other: PMap<K, V>, onChange: (key: K, before: V | undefined, after: V | undefined) => void): void {
    diffNodes(this.root, other.root, onChange);
  }

  /**
   * Calls `f(value, key)` for every entry, in the order of {@link entries}, without building an
   * entry (or an iterator result) per key.
   *
   * @example
   * PMap.from([['a', 1]]).forEach((v, k) => log(k, v)); // a 1
   */
  forEach(f: (value: V, key: K) => void): void {
    if (this.root !== undefined) forEachIn(this.root, f);
  }

  entries(): IterableIterator<readonly [K, V]> {
    return new Leaves<K, V, readonly [K, V]>(this.root, asEntry);
  }

  keys(): IterableIterator<K> {
    return new Leaves<K, V, K>(this.root, asKey);
  }

  values(): IterableIterator<V> {
    return new Leaves<K, V, V>(this.root, asValue);
  }

  [Symbol.iterator](): IterableIterator<readonly [K, V]> {
    return this.entries();
  }
}
