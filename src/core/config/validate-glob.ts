/**
 * The CDN route glob syntax of wire.md §6.3 (Rivet `lib/util/core/src/glob.rs`): segments split on
 * `/` (a backslash keeps the next character in the segment), `*` matches within one segment, a
 * segment that is exactly `**` matches any depth (consecutive `**` segments collapse), and a
 * segment with `**` beside other characters is invalid.
 */

type Token = { readonly kind: 'char'; readonly char: string } | { readonly kind: 'any' } | { readonly kind: 'recursive' };

function segmentsOf(glob: string): readonly string[] {
  const segments: string[] = [];
  let current = '';
  let escaped = false;
  for (const ch of glob) {
    if (escaped) escaped = false;
    else if (ch === '/') {
      segments.push(current);
      current = '';
      continue;
    } else escaped = ch === '\\';
    current += ch;
  }
  segments.push(current);
  return segments;
}

function segmentTokens(segment: string): readonly Token[] | undefined {
  const tokens: Token[] = [];
  let previousStar = false;
  for (const ch of segment) {
    if (ch === '*' && previousStar) return undefined;
    tokens.push(ch === '*' ? { kind: 'any' } : { kind: 'char', char: ch });
    previousStar = ch === '*';
  }
  return tokens;
}

function tokenize(glob: string): readonly Token[] | undefined {
  const segments = segmentsOf(glob);
  const tokens: Token[] = [];
  let previousDouble = false;
  for (const [i, segment] of segments.entries()) {
    if (segment === '**') {
      if (!previousDouble) tokens.push({ kind: 'recursive' });
      previousDouble = true;
      continue;
    }
    previousDouble = false;
    const parsed = segmentTokens(segment);
    if (parsed === undefined) return undefined;
    tokens.push(...parsed);
    if (i !== segments.length - 1) tokens.push({ kind: 'char', char: '/' });
  }
  return tokens;
}

/**
 * A canonical key of a valid, non-empty glob (two globs with equal keys match the same paths, e.g.
 * `**\/**\/x` and `**\/x`), or `undefined` when the glob is empty or invalid.
 *
 * @example
 * globKey('**\/*.html') !== undefined; // true
 * globKey('a**'); // undefined
 */
export function globKey(glob: string): string | undefined {
  const tokens = tokenize(glob);
  if (tokens === undefined || tokens.length === 0) return undefined;
  return JSON.stringify(tokens.map((t) => (t.kind === 'char' ? `c${t.char}` : t.kind)));
}

const escapeRegExp = (ch: string): string => ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * The regular expression a valid, non-empty glob matches request paths with (the path includes its
 * leading `/`): `*` is `[^/]+`, a `**` segment is `.*`, every other character itself (Rivet turns
 * the glob into Traefik's `Path(/<regex>)` the same way). `undefined` when the glob is invalid.
 *
 * @example
 * globRegExp('assets/*.js')?.test('/assets/app.js'); // true
 * globRegExp('**\/*.wasm')?.test('/a/b/c.wasm'); // true
 */
export function globRegExp(glob: string): RegExp | undefined {
  const tokens = tokenize(glob);
  if (tokens === undefined || tokens.length === 0) return undefined;
  const body = tokens.map((t) => (t.kind === 'char' ? (t.char === '\\' ? '' : escapeRegExp(t.char)) : t.kind === 'any' ? '[^/]+' : '.*')).join('');
  return new RegExp(`^/${body}$`, 'u');
}
