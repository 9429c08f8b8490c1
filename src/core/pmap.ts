/**
 * A persistent hash map (a hash array mapped trie): every update returns a new map that shares all
 * untouched nodes with the old one, so changing one entry of a 100,000-entry map copies at most a
 * handful of small nodes, never the whole map. Old values stay valid and unchanged forever.
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

/**
 * A node is one array (the CHAMP layout): `[datamap, nodemap, k0, v0, k1, v1, …, child0, child1, …]`.
 * A bit of `datamap` says an entry sits inline at that slot, a bit of `nodemap` that a child node
 * does; both are compacted in slot order. Entries inline and one object per level halve the
 * pointers a lookup follows, and a set allocates one array per level instead of a node, its slot
 * array and a leaf. Keys whose 32-bit hashes are equal share a collision node
 * `[0, 0, hash, k0, v0, …]` (both maps empty, which no branch is), its entries in key order.
 */
type Node = unknown[];

const BITS = 5;
const MASK = 31;
const MAX_SHIFT = 30;
/** Index of the first entry's key in a branch, and in a collision node. */
const DATA = 2;
const COLLIDED = 3;

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
  // `| 0` keeps the loop in int32: the basis is above 2^31, and without it V8 runs it in float64 (2× slower).
  let h = 0x811c9dc5 | 0;
  const n = key.length;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
};

const datamap = (n: Node): number => n[0] as number;
const nodemap = (n: Node): number => n[1] as number;
const isCollision = (n: Node): boolean => ((n[0] as number) | (n[1] as number)) === 0;
/** Where a branch's children start. */
const childBase = (n: Node): number => DATA + 2 * popcount(datamap(n));

/** The order of keys within a collision node: numbers before strings, then ascending. */
const keyBefore = (a: Key, b: Key): boolean => (typeof a === typeof b ? a < b : typeof a === 'number');

/** A copy of `n` with `count` slots replaced by `items` at `at` (a splice that never mutates `n`). */
const spliced = (n: Node, at: number, count: number, items: readonly unknown[]): Node => {
  const len = n.length - count + items.length;
  const out = new Array<unknown>(len);
  for (let j = 0; j < at; j++) out[j] = n[j];
  for (let j = 0; j < items.length; j++) out[at + j] = items[j];
  for (let j = at + count; j < n.length; j++) out[j - count + items.length] = n[j];
  return out;
};

/** A copy of `n` with slot `i` set to `v`. */
const withSlot = (n: Node, i: number, v: unknown): Node => {
  const out = n.slice();
  out[i] = v;
  return out;
};

const branchOf = (dm: number, nm: number, items: readonly unknown[]): Node => {
  const out = new Array<unknown>(DATA + items.length);
  out[0] = dm;
  out[1] = nm;
  for (let j = 0; j < items.length; j++) out[DATA + j] = items[j];
  return out;
};

/** A collision node of `hash` holding `items` (key, value, …) in key order. */
const collisionOf = (hash: number, items: readonly unknown[]): Node => branchOf(0, 0, [hash, ...items]);

/** The node holding two entries whose hashes agree below `shift`. */
const merge = (k1: Key, v1: unknown, h1: number, k2: Key, v2: unknown, h2: number, shift: number): Node => {
  if (shift > MAX_SHIFT || h1 === h2) {
    return collisionOf(h1, keyBefore(k1, k2) ? [k1, v1, k2, v2] : [k2, v2, k1, v1]);
  }
  const c1 = (h1 >>> shift) & MASK;
  const c2 = (h2 >>> shift) & MASK;
  if (c1 === c2) return branchOf(0, 1 << c1, [merge(k1, v1, h1, k2, v2, h2, shift + BITS)]);
  return branchOf((1 << c1) | (1 << c2), 0, c1 < c2 ? [k1, v1, k2, v2] : [k2, v2, k1, v1]);
};

/** Per-call scratch: whether the set added a key (so the size grows). */
interface Added {
  added: boolean;
}

function setInCollision(n: Node, key: Key, value: unknown, hash: number, shift: number, out: Added): Node {
  if ((n[2] as number) !== hash) {
    // Another hash reached this slot: the collision moves one level down, under a branch.
    return setIn(branchOf(0, 1 << (((n[2] as number) >>> shift) & MASK), [n]), key, value, hash, shift, out);
  }
  let at = COLLIDED;
  for (; at < n.length; at += 2) {
    const k = n[at] as Key;
    if (k === key) return n[at + 1] === value ? n : withSlot(n, at + 1, value);
    if (!keyBefore(k, key)) break;
  }
  // Kept in key order, so iteration order depends on the keys alone, never on insertion order.
  out.added = true;
  return spliced(n, at, 0, [key, value]);
}

/** The node with `key` bound to `value`, or the same node when nothing changes. */
function setIn(n: Node, key: Key, value: unknown, hash: number, shift: number, out: Added): Node {
  if (isCollision(n)) return setInCollision(n, key, value, hash, shift, out);
  const dm = datamap(n);
  const nm = nodemap(n);
  const bit = 1 << ((hash >>> shift) & MASK);
  if ((dm & bit) !== 0) {
    const at = DATA + 2 * popcount(dm & (bit - 1));
    const k = n[at] as Key;
    if (k === key) return n[at + 1] === value ? n : withSlot(n, at + 1, value);
    // Two keys in one slot: they move one level down, into a new child.
    out.added = true;
    const child = merge(k, n[at + 1], hashKey(k), key, value, hash, shift + BITS);
    const without = spliced(n, at, 2, []);
    const ci = childBase(n) - 2 + popcount(nm & (bit - 1));
    const next = spliced(without, ci, 0, [child]);
    next[0] = dm ^ bit;
    next[1] = nm | bit;
    return next;
  }
  if ((nm & bit) !== 0) {
    const ci = childBase(n) + popcount(nm & (bit - 1));
    const child = n[ci] as Node;
    const next = setIn(child, key, value, hash, shift + BITS, out);
    return next === child ? n : withSlot(n, ci, next);
  }
  out.added = true;
  const next = spliced(n, DATA + 2 * popcount(dm & (bit - 1)), 0, [key, value]);
  next[0] = dm | bit;
  return next;
}

/** Where the first entry of a node holding entries sits. */
const entryAt = (n: Node): number => (isCollision(n) ? COLLIDED : DATA);

/** A node that should live inline in its parent: one entry and no children, or a collision of one. */
const loneEntry = (n: Node): number => {
  if (isCollision(n)) return n.length === COLLIDED + 2 ? COLLIDED : -1;
  return nodemap(n) === 0 && n.length === DATA + 2 ? DATA : -1;
};

/** The node without `key` (undefined when it became empty), or the same node when absent. */
function deleteIn(n: Node, key: Key, hash: number, shift: number): Node | undefined {
  if (isCollision(n)) {
    for (let at = COLLIDED; at < n.length; at += 2) if (n[at] === key) return n.length === COLLIDED + 2 ? undefined : spliced(n, at, 2, []);
    return n;
  }
  const dm = datamap(n);
  const nm = nodemap(n);
  const bit = 1 << ((hash >>> shift) & MASK);
  if ((dm & bit) !== 0) {
    const at = DATA + 2 * popcount(dm & (bit - 1));
    if (n[at] !== key) return n;
    if (n.length === DATA + 2) return undefined;
    const next = spliced(n, at, 2, []);
    next[0] = dm ^ bit;
    return next;
  }
  if ((nm & bit) === 0) return n;
  const ci = childBase(n) + popcount(nm & (bit - 1));
  const child = n[ci] as Node;
  const next = deleteIn(child, key, hash, shift + BITS);
  if (next === child) return n;
  if (next === undefined) {
    if (n.length === DATA + 1) return undefined;
    const out = spliced(n, ci, 1, []);
    out[1] = nm ^ bit;
    return out;
  }
  const lone = loneEntry(next);
  if (lone < 0) return withSlot(n, ci, next);
  // A child left with one entry: the entry moves up into this node, so lookups stay short.
  const out = spliced(spliced(n, ci, 1, []), DATA + 2 * popcount(dm & (bit - 1)), 0, [next[lone], next[lone + 1]]);
  out[0] = dm | bit;
  out[1] = nm ^ bit;
  return out;
}

/**
 * The entries under a node in trie order (slot by slot; a collision node's in key order), through
 * an explicit stack: ticks and idle plans iterate whole namespaces.
 */
class Entries<T> implements IterableIterator<T> {
  readonly #nodes: Node[] = [];
  /** Per node on the stack: the slots not visited yet, and the next entry and child indexes. */
  readonly #rest: number[] = [];
  readonly #data: number[] = [];
  readonly #child: number[] = [];
  readonly #pick: (key: Key, value: unknown) => T;

  constructor(root: Node | undefined, pick: (key: Key, value: unknown) => T) {
    this.#pick = pick;
    if (root !== undefined) this.#push(root);
  }

  #push(n: Node): void {
    const collision = isCollision(n);
    this.#nodes.push(n);
    this.#rest.push(collision ? 0 : datamap(n) | nodemap(n));
    this.#data.push(collision ? COLLIDED : DATA);
    this.#child.push(collision ? n.length : childBase(n));
  }

  #pop(): void {
    this.#nodes.pop();
    this.#rest.pop();
    this.#data.pop();
    this.#child.pop();
  }

  next(): IteratorResult<T> {
    while (this.#nodes.length > 0) {
      const top = this.#nodes.length - 1;
      const n = this.#nodes[top] as Node;
      if (isCollision(n)) {
        const at = this.#data[top] as number;
        if (at >= n.length) {
          this.#pop();
          continue;
        }
        this.#data[top] = at + 2;
        return { value: this.#pick(n[at] as Key, n[at + 1]), done: false };
      }
      const rest = this.#rest[top] as number;
      if (rest === 0) {
        this.#pop();
        continue;
      }
      const bit = rest & -rest;
      this.#rest[top] = rest ^ bit;
      if ((datamap(n) & bit) !== 0) {
        const at = this.#data[top] as number;
        this.#data[top] = at + 2;
        return { value: this.#pick(n[at] as Key, n[at + 1]), done: false };
      }
      const ci = this.#child[top] as number;
      this.#child[top] = ci + 1;
      this.#push(n[ci] as Node);
    }
    return { value: undefined, done: true };
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this;
  }
}

const asKey = (k: Key): Key => k;
const asValue = (_: Key, v: unknown): unknown => v;
const asEntry = (k: Key, v: unknown): readonly [Key, unknown] => [k, v];

function forEachIn(n: Node, f: (value: unknown, key: Key) => void): void {
  if (isCollision(n)) {
    for (let at = COLLIDED; at < n.length; at += 2) f(n[at + 1], n[at] as Key);
    return;
  }
  const dm = datamap(n);
  let rest = dm | nodemap(n);
  let at = DATA;
  let ci = childBase(n);
  while (rest !== 0) {
    const bit = rest & -rest;
    rest ^= bit;
    if ((dm & bit) !== 0) {
      f(n[at + 1], n[at] as Key);
      at += 2;
    } else forEachIn(n[ci++] as Node, f);
  }
}

type OnChange = (key: Key, before: unknown, after: unknown) => void;

/** Every entry of `n` reported as added (`side` 1) or removed (`side` 0). */
const reportAll = (n: Node, side: 0 | 1, onChange: OnChange): void =>
  forEachIn(n, (v, k) => (side === 0 ? onChange(k, v, undefined) : onChange(k, undefined, v)));

/** The slot `bit` of a branch: an entry (its key index), a child (its index, negated minus one), or absent (undefined). */
const slotOf = (n: Node, bit: number): number | undefined => {
  const dm = datamap(n);
  if ((dm & bit) !== 0) return DATA + 2 * popcount(dm & (bit - 1));
  const nm = nodemap(n);
  return (nm & bit) !== 0 ? -1 - (childBase(n) + popcount(nm & (bit - 1))) : undefined;
};

/** Compares two sides of one trie position by their entries (collision nodes, an entry against a child). */
function diffEntries(a: Node | undefined, b: Node | undefined, onChange: OnChange): void {
  const before = new Map<Key, unknown>();
  if (a !== undefined) forEachIn(a, (v, k) => before.set(k, v));
  if (b !== undefined) {
    forEachIn(b, (v, k) => {
      const old = before.get(k);
      if (old !== v) onChange(k, old, v);
      before.delete(k);
    });
  }
  for (const [k, old] of before) onChange(k, old, undefined);
}

/** A one-entry collision node: an inline entry, compared like a node. */
const single = (k: Key, v: unknown): Node => collisionOf(0, [k, v]);

/**
 * Reports every key whose value differs between the subtrees `a` (before) and `b` (after) at the
 * same trie position. Identical nodes are skipped whole; two branches are compared slot by slot;
 * anything else (collision nodes, an entry against a child) by their entries.
 */
function diffNodes(a: Node | undefined, b: Node | undefined, onChange: OnChange): void {
  if (a === b) return;
  if (a === undefined || b === undefined || isCollision(a) || isCollision(b)) {
    diffEntries(a, b, onChange);
    return;
  }
  let bits = datamap(a) | nodemap(a) | datamap(b) | nodemap(b);
  while (bits !== 0) {
    const bit = bits & -bits;
    bits ^= bit;
    const sa = slotOf(a, bit);
    const sb = slotOf(b, bit);
    if (sa !== undefined && sb !== undefined && sa >= 0 && sb >= 0) {
      const ka = a[sa] as Key;
      const kb = b[sb] as Key;
      if (ka === kb) {
        if (a[sa + 1] !== b[sb + 1]) onChange(ka, a[sa + 1], b[sb + 1]);
      } else {
        onChange(ka, a[sa + 1], undefined);
        onChange(kb, undefined, b[sb + 1]);
      }
    } else if (sa !== undefined && sb !== undefined && sa < 0 && sb < 0) {
      diffNodes(a[-1 - sa] as Node, b[-1 - sb] as Node, onChange);
    } else if (sb === undefined) {
      if (sa !== undefined && sa >= 0) onChange(a[sa] as Key, a[sa + 1], undefined);
      else if (sa !== undefined) reportAll(a[-1 - sa] as Node, 0, onChange);
    } else if (sa === undefined) {
      if (sb >= 0) onChange(b[sb] as Key, undefined, b[sb + 1]);
      else reportAll(b[-1 - sb] as Node, 1, onChange);
    } else {
      const na = sa >= 0 ? single(a[sa] as Key, a[sa + 1]) : (a[-1 - sa] as Node);
      const nb = sb >= 0 ? single(b[sb] as Key, b[sb + 1]) : (b[-1 - sb] as Node);
      diffEntries(na, nb, onChange);
    }
  }
}

export class PMap<K extends Key, V> {
  private static readonly EMPTY = new PMap<never, never>(0, undefined);

  private constructor(
    /** Number of entries. */
    readonly size: number,
    private readonly root: Node | undefined,
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

  /**
   * The value bound to `key`. A caller that works on one key several times may pass its
   * {@link hashKey} (and must pass exactly that) to spare hashing it again; so may `set` and `delete`.
   */
  get(key: K, hash = hashKey(key)): V | undefined {
    let n = this.root;
    let shift = 0;
    while (n !== undefined) {
      const dm = n[0] as number;
      const nm = n[1] as number;
      if ((dm | nm) === 0) {
        for (let at = COLLIDED; at < n.length; at += 2) if (n[at] === key) return n[at + 1] as V;
        return undefined;
      }
      const bit = 1 << ((hash >>> shift) & MASK);
      if ((dm & bit) !== 0) {
        const at = DATA + 2 * popcount(dm & (bit - 1));
        return n[at] === key ? (n[at + 1] as V) : undefined;
      }
      if ((nm & bit) === 0) return undefined;
      n = n[DATA + 2 * popcount(dm) + popcount(nm & (bit - 1))] as Node;
      shift += BITS;
    }
    return undefined;
  }

  has(key: K, hash = hashKey(key)): boolean {
    return this.get(key, hash) !== undefined;
  }

  /** A map with `key` bound to `value`; `this` when nothing changes. Values must not be `undefined`. */
  set(key: K, value: V, hash = hashKey(key)): PMap<K, V> {
    if (this.root === undefined) return new PMap(1, branchOf(1 << (hash & MASK), 0, [key, value]));
    const out: Added = { added: false };
    const root = setIn(this.root, key, value, hash, 0, out);
    return root === this.root ? this : new PMap(this.size + (out.added ? 1 : 0), root);
  }

  /** A map without `key`; `this` when it was absent. */
  delete(key: K, hash = hashKey(key)): PMap<K, V> {
    if (this.root === undefined) return this;
    const root = deleteIn(this.root, key, hash, 0);
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
    const n = this.firstNode();
    if (n === undefined) return undefined;
    const at = entryAt(n);
    return [n[at] as K, n[at + 1] as V];
  }

  /** The key of {@link first}, without allocating an entry. */
  firstKey(): K | undefined {
    const n = this.firstNode();
    return n === undefined ? undefined : (n[entryAt(n)] as K);
  }

  /** The node holding the leftmost entry. */
  private firstNode(): Node | undefined {
    let n = this.root;
    while (n !== undefined && !isCollision(n)) {
      const dm = datamap(n);
      const rest = dm | nodemap(n);
      if ((dm & rest & -rest) !== 0) return n;
      n = n[childBase(n)] as Node;
    }
    return n;
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
    diffNodes(this.root, other.root, onChange as OnChange);
  }

  /**
   * Calls `f(value, key)` for every entry, in the order of {@link entries}, without building an
   * entry (or an iterator result) per key.
   *
   * @example
   * PMap.from([['a', 1]]).forEach((v, k) => log(k, v)); // a 1
   */
  forEach(f: (value: V, key: K) => void): void {
    if (this.root !== undefined) forEachIn(this.root, f as (value: unknown, key: Key) => void);
  }

  entries(): IterableIterator<readonly [K, V]> {
    return new Entries(this.root, asEntry) as IterableIterator<readonly [K, V]>;
  }

  keys(): IterableIterator<K> {
    return new Entries(this.root, asKey) as IterableIterator<K>;
  }

  values(): IterableIterator<V> {
    return new Entries(this.root, asValue) as IterableIterator<V>;
  }

  [Symbol.iterator](): IterableIterator<readonly [K, V]> {
    return this.entries();
  }
}
