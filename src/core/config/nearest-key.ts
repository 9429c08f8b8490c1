/**
 * `nearestKey`: the known key a mistyped one most likely meant, for "did you mean" messages.
 * Keys are compared folded (lowercase, without `_` and `-`), so `maxPlayers`, `max-players` and
 * `MAX_PLAYERS` all find `max_players`; the distance is Damerau–Levenshtein's (optimal string
 * alignment: insertions, deletions, substitutions and swaps of two neighbours each cost one).
 */

/**
 * A key folded for comparison: lowercase, `_` and `-` removed.
 *
 * @example
 * foldKey('Max-Players'); // 'maxplayers'
 */
export const foldKey = (key: string): string => key.toLowerCase().replaceAll(/[_-]/g, '');

/**
 * The optimal-string-alignment distance between `a` and `b`, stopping early once every path is
 * above `limit` (then any number above `limit` is returned).
 *
 * @example
 * editDistance('protocl', 'protocol'); // 1
 * editDistance('tier', 'tire'); // 1 (a swap)
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current: number[] = [i];
    let best = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] ?? 0) + 1);
      current.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** How far a key may be from the one it meant: one edit for keys of up to four letters, else two. */
const allowance = (folded: string): number => (folded.length <= 4 ? 1 : 2);

/**
 * The known key closest to `key` within the allowance (one edit for short keys, two otherwise),
 * the first in `known`'s order on a tie; `undefined` when none is that close.
 *
 * @example
 * nearestKey('max_player', ['max_players', 'tier']); // 'max_players'
 * nearestKey('protocl', ['port', 'protocol']); // 'protocol'
 * nearestKey('privileged', ['image', 'env', 'ports']); // undefined
 */
export function nearestKey(key: string, known: Iterable<string>): string | undefined {
  const folded = foldKey(key);
  const limit = allowance(folded);
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    // Only a strictly closer key replaces the best so far.
    const cap = best === undefined ? limit : best.distance - 1;
    if (cap < 0) break;
    const distance = editDistance(folded, foldKey(candidate), cap);
    if (distance <= cap) best = { key: candidate, distance };
  }
  return best?.key;
}
