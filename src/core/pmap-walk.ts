/**
 * Walking {@link PMap}'s trie (`pmap-trie.ts`): its entries in trie order, and the keys that differ
 * between two tries, skipping every subtree they share.
 */
import { childBase, COLLIDED, collisionOf, DATA, datamap, isCollision, type Key, type Node, nodemap, popcount } from './pmap-trie.js';

/**
 * The entries under a node in trie order (slot by slot; a collision node's in key order), through
 * an explicit stack: ticks and idle plans iterate whole namespaces.
 */
export class Entries<T> implements IterableIterator<T> {
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

export const asKey = (k: Key): Key => k;
export const asValue = (_: Key, v: unknown): unknown => v;
export const asEntry = (k: Key, v: unknown): readonly [Key, unknown] => [k, v];

export function forEachIn(n: Node, f: (value: unknown, key: Key) => void): void {
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

export type OnChange = (key: Key, before: unknown, after: unknown) => void;

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
export function diffNodes(a: Node | undefined, b: Node | undefined, onChange: OnChange): void {
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
