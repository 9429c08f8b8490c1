/**
 * `tomlKeyLines`: the line on which each key of a TOML document is first defined, for messages
 * that name a key's file and line (smol-toml gives values, not positions). It follows tables
 * (`[a.b]`), arrays of tables (`[[a.b]]`, indexed from 0 under their current parent), dotted and
 * quoted keys, inline tables and arrays (items indexed), and skips strings of every kind
 * (multi-line ones may hold anything) and comments. The document has already parsed, so the scan
 * trusts its syntax; on anything it does not expect it moves on one character, so it always ends.
 */

/** A key path as a map key: its segments, array indexes as decimal strings. */
export const pathKey = (path: readonly string[]): string => JSON.stringify(path);

interface Scan {
  readonly text: string;
  i: number;
  line: number;
  readonly lines: Map<string, number>;
}

const BARE = /[A-Za-z0-9_-]/;

const peek = (s: Scan, n = 0): string => s.text[s.i + n] ?? '';
const startsWith = (s: Scan, token: string): boolean => s.text.startsWith(token, s.i);

function advance(s: Scan, n = 1): void {
  for (let k = 0; k < n && s.i < s.text.length; k += 1) {
    if (s.text[s.i] === '\n') s.line += 1;
    s.i += 1;
  }
}

/** Skips spaces and tabs, and with `newlines` also line ends and comments. */
function skipBlank(s: Scan, newlines: boolean): void {
  for (;;) {
    const c = peek(s);
    if (c === ' ' || c === '\t' || (newlines && (c === '\n' || c === '\r'))) advance(s);
    else if (newlines && c === '#') while (s.i < s.text.length && peek(s) !== '\n') advance(s);
    else return;
  }
}

/** Reads a string at the cursor (any of the four kinds) and returns its raw content. */
function readString(s: Scan): string {
  const quote = peek(s);
  const triple = quote.repeat(3);
  const multi = startsWith(s, triple);
  const close = multi ? triple : quote;
  advance(s, close.length);
  let out = '';
  while (s.i < s.text.length && !startsWith(s, close)) {
    if (quote === '"' && peek(s) === '\\') {
      out += peek(s, 1);
      advance(s, 2);
    } else {
      out += peek(s);
      advance(s);
    }
  }
  advance(s, close.length);
  // A multi-line string may end with up to two more quotes inside it (`""""` closes after one).
  while (multi && peek(s) === quote) advance(s);
  return out;
}

/** Reads a (dotted) key; bare segments as written, quoted ones unescaped as far as names need. */
function readKey(s: Scan): string[] {
  const segments: string[] = [];
  for (;;) {
    skipBlank(s, false);
    const c = peek(s);
    if (c === '"' || c === "'") segments.push(readString(s));
    else {
      let bare = '';
      while (BARE.test(peek(s))) {
        bare += peek(s);
        advance(s);
      }
      if (bare === '') return segments;
      segments.push(bare);
    }
    skipBlank(s, false);
    if (peek(s) !== '.') return segments;
    advance(s);
  }
}

const record = (s: Scan, path: readonly string[], line: number): void => {
  for (let n = 1; n <= path.length; n += 1) if (!s.lines.has(pathKey(path.slice(0, n)))) s.lines.set(pathKey(path.slice(0, n)), line);
};

/** Reads a value at the cursor; inline tables and arrays record their members under `path`. */
function readValue(s: Scan, path: readonly string[]): void {
  const c = peek(s);
  if (c === '"' || c === "'") readString(s);
  else if (c === '{') readInlineTable(s, path);
  else if (c === '[') readArray(s, path);
  else while (s.i < s.text.length && !/[,\]}\n#]/.test(peek(s))) advance(s);
}

/** `key = value` at the cursor, recorded under `base`. */
function readPair(s: Scan, base: readonly string[]): void {
  const line = s.line;
  const key = readKey(s);
  if (key.length === 0) return advance(s);
  const path = [...base, ...key];
  record(s, path, line);
  skipBlank(s, false);
  if (peek(s) === '=') advance(s);
  skipBlank(s, false);
  readValue(s, path);
}

function readInlineTable(s: Scan, path: readonly string[]): void {
  advance(s);
  for (let start = -1; s.i < s.text.length && start !== s.i;) {
    start = s.i;
    skipBlank(s, true);
    if (peek(s) === '}') return advance(s);
    if (peek(s) === ',') advance(s);
    else readPair(s, path);
  }
}

function readArray(s: Scan, path: readonly string[]): void {
  advance(s);
  let index = 0;
  for (let start = -1; s.i < s.text.length && start !== s.i;) {
    start = s.i;
    skipBlank(s, true);
    if (peek(s) === ']') return advance(s);
    if (peek(s) === ',') {
      advance(s);
      continue;
    }
    const item = [...path, String(index)];
    record(s, item, s.line);
    readValue(s, item);
    index += 1;
  }
}

/** The path a `[header]` or `[[header]]` names, array-of-tables segments resolved to their current index. */
function headerPath(segments: readonly string[], isArray: boolean, counts: Map<string, number>): string[] {
  const resolved: string[] = [];
  segments.forEach((segment, n) => {
    resolved.push(segment);
    const key = pathKey(resolved);
    const count = counts.get(key);
    if (isArray && n === segments.length - 1) {
      counts.set(key, (count ?? 0) + 1);
      resolved.push(String(count ?? 0));
    } else if (count !== undefined) resolved.push(String(count - 1));
  });
  return resolved;
}

/**
 * The 1-based line where each key path is first defined, keyed by {@link pathKey}.
 *
 * @example
 * tomlKeyLines('[matchmaker]\nmax_player = 8\n').get(pathKey(['matchmaker', 'max_player'])); // 2
 */
export function tomlKeyLines(text: string): ReadonlyMap<string, number> {
  const s: Scan = { text, i: 0, line: 1, lines: new Map() };
  const counts = new Map<string, number>();
  let table: string[] = [];
  for (let start = -1; s.i < text.length && start !== s.i;) {
    start = s.i;
    skipBlank(s, true);
    if (s.i >= text.length) break;
    if (peek(s) === '[') {
      const isArray = peek(s, 1) === '[';
      const line = s.line;
      advance(s, isArray ? 2 : 1);
      table = headerPath(readKey(s), isArray, counts);
      record(s, table, line);
      advance(s, isArray ? 2 : 1);
    } else {
      readPair(s, table);
    }
    skipBlank(s, false);
    if (peek(s) === '#') skipBlank(s, true);
  }
  return s.lines;
}
