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
import { asEntry, asKey, asValue, diffNodes, Entries, forEachIn, type OnChange } from './pmap-walk.js';
import { type Added, BITS, branchOf, childBase, COLLIDED, DATA, datamap, deleteIn, entryAt, hashKey, isCollision, type Key, MASK, type Node, nodemap, popcount, setIn } from './pmap-trie.js';

export { hashKey, type Key } from './pmap-trie.js';

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
