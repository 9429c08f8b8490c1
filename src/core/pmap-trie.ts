/**
 * The trie behind {@link PMap} (`pmap.ts`): the node layout, hashing, and the path-copying set and
 * delete. Nodes are never changed once built; every update returns new nodes along one path.
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
export type Node = unknown[];

export const BITS = 5;
export const MASK = 31;
const MAX_SHIFT = 30;
/** Index of the first entry's key in a branch, and in a collision node. */
export const DATA = 2;
export const COLLIDED = 3;

export const popcount = (x: number): number => {
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

export const datamap = (n: Node): number => n[0] as number;
export const nodemap = (n: Node): number => n[1] as number;
export const isCollision = (n: Node): boolean => ((n[0] as number) | (n[1] as number)) === 0;
/** Where a branch's children start. */
export const childBase = (n: Node): number => DATA + 2 * popcount(datamap(n));

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

export const branchOf = (dm: number, nm: number, items: readonly unknown[]): Node => {
  const out = new Array<unknown>(DATA + items.length);
  out[0] = dm;
  out[1] = nm;
  for (let j = 0; j < items.length; j++) out[DATA + j] = items[j];
  return out;
};

/** A collision node of `hash` holding `items` (key, value, …) in key order. */
export const collisionOf = (hash: number, items: readonly unknown[]): Node => branchOf(0, 0, [hash, ...items]);

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
export interface Added {
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
export function setIn(n: Node, key: Key, value: unknown, hash: number, shift: number, out: Added): Node {
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
export const entryAt = (n: Node): number => (isCollision(n) ? COLLIDED : DATA);

/** A node that should live inline in its parent: one entry and no children, or a collision of one. */
const loneEntry = (n: Node): number => {
  if (isCollision(n)) return n.length === COLLIDED + 2 ? COLLIDED : -1;
  return nodemap(n) === 0 && n.length === DATA + 2 ? DATA : -1;
};

/** The collision node a branch holds with nothing beside it: it belongs in the branch's own slot, where an insertion puts it. */
const loneCollision = (n: Node): Node | undefined =>
  !isCollision(n) && datamap(n) === 0 && n.length === DATA + 1 && isCollision(n[DATA] as Node) ? (n[DATA] as Node) : undefined;

/** The node without `key` (undefined when it became empty), or the same node when absent. */
export function deleteIn(n: Node, key: Key, hash: number, shift: number): Node | undefined {
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
  const deleted = deleteIn(child, key, hash, shift + BITS);
  if (deleted === child) return n;
  const next = deleted === undefined ? undefined : (loneCollision(deleted) ?? deleted);
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
