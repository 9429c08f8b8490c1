/**
 * The bad-input suite (reliability.md §1.2, §4 "JSON body decoding (all endpoints)"): for EVERY route
 * that reads a JSON body, and for the query-string routes' queries, at least 2,000 generated
 * malformed requests each (`max(2000, FC_NUM_RUNS)`, the run's global fast-check seed), sent with
 * valid auth for the route so the body really is decoded and validated:
 *
 * - arbitrary JSON values;
 * - the route's valid body with members deleted, replaced by wrong types, edge numbers written raw
 *   (`1e400`, `-0`, `2^53+1`, `2^64-1`), unicode edge strings (lone surrogates, NUL, BOM, RTL marks),
 *   `__proto__` / `constructor` / `prototype` keys, or renamed to those keys;
 * - the valid body with `__proto__` / `constructor` / `prototype` injected into every object;
 * - huge strings: 64 KiB, 512 KiB, exactly the 1 MiB cap and one byte over it;
 * - deep nesting (129 to 100,000 levels, balanced or not, at the top or inside a member);
 * - invalid UTF-8 byte sequences inserted into the body;
 * - JSON syntax errors (truncations, trailing commas, comments, NaN, single quotes…) and raw bytes;
 * - a `content-length` announcing more than the cap.
 *
 * Every answer is JSON; a non-200 is a 4xx whose `{code, message}` comes from the catalog with the
 * catalog's status (never an auth error: the route's auth is valid), never a 5xx; `app.handle`
 * never rejects; Object.prototype (and friends) are never polluted. The purely malformed generators
 * (invalid UTF-8, syntax errors, over the cap, too deep) must get their specific 4xx.
 */
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/core/errors.js';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from '../../src/server/body.js';
import { ADMIN, defaultConfig, harness, str, type Harness } from './harness.js';

/** Per endpoint, whatever FC_NUM_RUNS says (it may raise it). */
const NUM_RUNS = Math.max(2_000, Number(process.env['FC_NUM_RUNS'] ?? 0) || 0);
const CAP = MAX_BODY_BYTES;
const enc = new TextEncoder();

// ---------------------------------------------------------------------------------------------
// Values: a JSON tree whose objects have no prototype (so `__proto__` is an ordinary key here) and
// whose leaves may be raw JSON text (numbers JSON.stringify cannot write, deep nesting, proto objects).
// ---------------------------------------------------------------------------------------------

class Raw {
  constructor(readonly text: string) {}
}
type Tree = null | boolean | number | string | Raw | Tree[] | { [key: string]: Tree };
type Obj = { [key: string]: Tree };

const isObj = (v: Tree | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Raw);

/** A null-prototype deep copy of a JSON value. */
const toTree = (v: unknown): Tree => {
  if (v instanceof Raw) return v;
  if (Array.isArray(v)) return v.map(toTree);
  if (typeof v === 'object' && v !== null) {
    const out = Object.create(null) as Obj;
    for (const k of Object.keys(v)) out[k] = toTree((v as Record<string, unknown>)[k]);
    return out;
  }
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  return null;
};

/** JSON text of a tree; `inject` (members' text) is put first in every object. */
const toJson = (v: Tree, inject?: string): string => {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map((x) => toJson(x, inject)).join(',')}]`;
  if (isObj(v)) {
    const members = Object.keys(v).map((k) => `${JSON.stringify(k)}:${toJson(v[k] ?? null, inject)}`);
    if (inject !== undefined) members.unshift(inject);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
};

type Path = readonly (string | number)[];

/** Every member's path (not the root). */
const pathsOf = (v: Tree, at: Path = []): Path[] => {
  if (Array.isArray(v)) return v.flatMap((x, i) => [[...at, i], ...pathsOf(x, [...at, i])]);
  if (isObj(v)) return Object.keys(v).flatMap((k) => [[...at, k], ...pathsOf(v[k] ?? null, [...at, k])]);
  return [];
};

type Op =
  | { readonly kind: 'delete' }
  | { readonly kind: 'set'; readonly value: Tree }
  | { readonly kind: 'add'; readonly key: string; readonly value: Tree }
  | { readonly kind: 'rename'; readonly key: string };

/** Applies `op` at `path` of a copy of `root` (the root itself for `[]`). */
const apply = (root: Tree, path: Path, op: Op): Tree => {
  const copy = toTree(root);
  if (path.length === 0) {
    if (op.kind === 'set') return op.value;
    if (op.kind === 'add' && isObj(copy)) copy[op.key] = op.value;
    return op.kind === 'delete' ? null : copy;
  }
  let parent: Tree = copy;
  for (const step of path.slice(0, -1)) {
    parent = Array.isArray(parent) ? (parent[step as number] ?? null) : isObj(parent) ? (parent[step as string] ?? null) : null;
  }
  const last = path[path.length - 1] as string | number;
  if (Array.isArray(parent) && typeof last === 'number') {
    if (op.kind === 'delete') parent.splice(last, 1);
    else if (op.kind === 'set') parent[last] = op.value;
    else if (op.kind === 'add') parent.push(op.value);
    else parent[last] = toTree({ [op.key]: parent[last] ?? null });
  } else if (isObj(parent) && typeof last === 'string') {
    const current = parent[last] ?? null;
    if (op.kind === 'delete') delete parent[last];
    else if (op.kind === 'set') parent[last] = op.value;
    else if (op.kind === 'add') {
      if (isObj(current)) current[op.key] = op.value;
      else parent[op.key] = op.value;
    } else {
      delete parent[last];
      parent[op.key] = current;
    }
  }
  return copy;
};

// ---------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** Raw objects that would pollute a prototype if copied carelessly. */
const PROTO_TEXTS = [
  '{"__proto__":{"polluted":"yes","isAdmin":true,"kind":"admin"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"prototype":{"polluted":"yes"}}',
  '{"__proto__":null}',
  '{"__proto__":[]}',
  '{"__proto__":"x"}',
  '[{"__proto__":{"polluted":"yes"}}]',
  '{"__proto__":{"__proto__":{"polluted":"yes"}},"toString":"x","hasOwnProperty":1,"valueOf":{}}',
];

/** Members injected into every object of a body. */
const INJECTIONS = [
  '"__proto__":{"polluted":"yes","isAdmin":true}',
  '"constructor":{"prototype":{"polluted":"yes"}}',
  '"prototype":{"polluted":"yes"}',
  '"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"prototype":{"polluted":"yes"}',
  '"__proto__":null',
  '"__proto__":"x","constructor":"y","prototype":0',
];

/** Numbers JSON.parse reads but JSON.stringify never writes, and integer edges. */
const EDGE_NUMBERS = [
  '1e400', '-1e400', '-0', '-0.0', '1e-400', '9007199254740993', '9007199254740992', '-9007199254740993',
  '18446744073709551615', '18446744073709551616', '4294967295', '4294967296', '2147483647', '2147483648', '-2147483649',
  '123456789012345678901234567890', '1E2', '0.5', '-1', '0', '256', '257', '32768', '32769', '65535', '65536', '26000',
];

/** Strings that trip normalisation, length and encoding assumptions. */
const UNICODE_EDGES = [
  '', ' ', '\u0000', 'a\u0000b', '\ud800', '\udfff', 'a\ud800b', '\udc00\ud800', '\ufeff', '\ufeffdefault', '\u202e', 'e\u0301', '👍🏽',
  '\u2028\u2029', 'İ', 'ß', '\uffff', '\u{10ffff}', 'Ａ', 'DEFAULT', 'default\u0000', 'default ', ' default', '٣', '\u200b', '\t\n\r',
  '../..', '%00', '%2e%2e', '\\', 'a'.repeat(300), 'é'.repeat(200), 'default', 'local', 'prod', '__proto__', 'constructor',
];

/** Keys worth adding: the routes' own members and the prototype keys. */
const KEYS = [
  'name_id', 'display_name', 'developer_group_id', 'version_id', 'config', 'matchmaker', 'game_modes', 'regions', 'docker', 'ports',
  'port', 'protocol', 'port_range', 'min', 'max', 'image_id', 'cdn', 'site_id', 'captcha', 'hcaptcha', 'turnstile', 'client_response',
  'verification_data', 'tags', 'max_players', 'game_mode', 'region', 'publicity', 'lobby_config', 'lobby_id', 'is_closed', 'player_token',
  'hostname', 'lobby_ports', 'label', 'target_port', 'proxy_protocol', 'domain', 'enabled', 'auth_type', 'image_tag', 'image_file', 'path',
  'content_length', 'files', 'lobby_count_max', 'device_link_token', 'game_id', 'idle_lobbies', 'actions', ...PROTO_KEYS,
];

/** Deep nesting as raw text (cached: the 100,000-level ones are 200 KB). */
const deepCache = new Map<string, string>();
const deepText = (depth: number, shape: 'array' | 'object' | 'mixed' | 'open'): string => {
  const key = `${shape}:${depth}`;
  const cached = deepCache.get(key);
  if (cached !== undefined) return cached;
  let text: string;
  if (shape === 'array') text = '['.repeat(depth) + ']'.repeat(depth);
  else if (shape === 'object') text = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  else if (shape === 'mixed') text = '[{"__proto__":'.repeat(Math.ceil(depth / 2)) + 'null' + '}]'.repeat(Math.ceil(depth / 2));
  else text = '[{"a":'.repeat(Math.ceil(depth / 2));
  deepCache.set(key, text);
  return text;
};
const DEPTHS = [MAX_JSON_DEPTH + 1, 200, 1_000, 10_000, 100_000];
const deep = fc.record({ depth: fc.constantFrom(...DEPTHS), shape: fc.constantFrom<'array' | 'object' | 'mixed' | 'open'>('array', 'object', 'mixed', 'open') });

/** A wrong value for any member: other types, edge numbers, unicode edges, prototype objects. */
const wrong: fc.Arbitrary<Tree> = fc.oneof(
  fc.constantFrom<Tree>(null, true, false, 0, 1, -1, 1.5, -1.5, '', 'x', [], [null], ['default'], 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER, -(2 ** 53), 1e308),
  fc.constant(null).map(() => toTree({})),
  fc.jsonValue({ maxDepth: 2 }).map(toTree),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(...UNICODE_EDGES),
  fc.constantFrom(...EDGE_NUMBERS).map((t) => new Raw(t)),
  fc.constantFrom(...PROTO_TEXTS).map((t) => new Raw(t)),
  fc.uuid(),
  fc.array(fc.constantFrom(...UNICODE_EDGES), { maxLength: 4 }),
);

/** A key to add or rename to. */
const keyArb = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...KEYS) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) });

// ---------------------------------------------------------------------------------------------
// Samples: a body, and what the answer must be
// ---------------------------------------------------------------------------------------------

/** `any`: 200 or a catalog 4xx; the others are the exact answer of a purely malformed body. */
type Expect = 'any' | 'bad-body' | 'too-large';

interface Sample {
  readonly kind: string;
  readonly body: string | Uint8Array;
  readonly expect: Expect;
  readonly headers?: Readonly<Record<string, string>>;
}

/** How deeply `text` nests (scanning outside strings), capped at `stop`. */
const nesting = (text: string, stop: number): number => {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      max = Math.max(max, ++depth);
      if (max >= stop) return max;
    } else if (c === 93 || c === 125) depth--;
  }
  return max;
};

/** What the edge must answer for these bytes (the decoding rules of wire.md §1.3 and body.ts). */
const oracle = (bytes: Uint8Array): Expect => {
  if (bytes.byteLength > CAP) return 'too-large';
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'bad-body';
  }
  if (text.trim() === '') return 'any';
  if (nesting(text, MAX_JSON_DEPTH + 1) > MAX_JSON_DEPTH) return 'bad-body';
  try {
    JSON.parse(text);
  } catch {
    return 'bad-body';
  }
  return 'any';
};

const sampleOf = (kind: string, text: string): Sample => ({ kind, body: text, expect: oracle(enc.encode(text)) });

/** Byte sequences that are invalid UTF-8 wherever they stand between two characters. */
const BAD_UTF8: readonly (readonly number[])[] = [
  [0xff], [0xfe], [0x80], [0xbf], [0xc0, 0x80], [0xc1, 0xbf], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98],
  [0xc3, 0x28], [0xe2, 0x28, 0xa1], [0xf0, 0x28, 0x8c, 0x28],
];

/** `text` as UTF-8 with bad sequences spliced in at character boundaries. */
const withBadUtf8 = (text: string, inserts: readonly { at: number; seq: number }[]): Uint8Array => {
  const points = [...text];
  const cuts = [...new Set(inserts.map((i) => i.at % (points.length + 1)))].sort((a, b) => a - b);
  const parts: Uint8Array[] = [];
  let from = 0;
  cuts.forEach((cut, n) => {
    parts.push(enc.encode(points.slice(from, cut).join('')));
    parts.push(Uint8Array.from(BAD_UTF8[(inserts[n]?.seq ?? 0) % BAD_UTF8.length] ?? [0xff]));
    from = cut;
  });
  parts.push(enc.encode(points.slice(from).join('')));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
};

/** Distinct members of 12 bytes each, enough to fill the cap. */
const KEYS_FILL = Array.from({ length: Math.ceil(CAP / 12) + 1 }, (_, i) => `"k${i.toString(36).padStart(6, '0')}":1,`).join('');

/** Ways to break JSON syntax (most break it; the oracle decides). */
const SYNTAX_DEFECTS: readonly ((t: string) => string)[] = [
  (t) => t.replace(/}$/, ',}'),
  (t) => t.replace(/]/, ',]'),
  (t) => t.replaceAll('"', "'"),
  (t) => `${t}}`,
  (t) => `{${t}`,
  (t) => `${t} x`,
  (t) => `${t}${t}`,
  (t) => t.replace(':', ''),
  (t) => t.replace(/"([a-z_]+)":/, '$1:'),
  (t) => `${t}//c`,
  (t) => `/*c*/${t}`,
  (t) => t.replace(/\d+/, 'NaN'),
  (t) => t.replace(/\d+/, 'Infinity'),
  (t) => t.replace(/\d+/, '0x10'),
  (t) => t.replace(/\d+/, '+1'),
  (t) => t.replace(/\d+/, '01'),
  (t) => t.replace(/\d+/, '1.'),
  (t) => t.replace(/\d+/, '.5'),
  (t) => t.replace(/\d+/, '1e'),
  (t) => t.replace('"', '"\u0000'),
  (t) => t.replace('"', '"\n'),
  (t) => t.replace('"', '"\\x41'),
  (t) => t.replace('"', '"\\u12'),
  (t) => t.replace('"', '"\\ud8'),
  (t) => t.replace('"', '"\\'),
  (t) => t.replace('true', 'True'),
  (t) => t.replace('null', 'nul'),
  (t) => t.replace(/,/, ',,'),
  (t) => t.slice(0, -1),
  (t) => t.replace(/[{[]/, ''),
  () => 'undefined',
  () => '{"a"}',
  () => '{,}',
  () => '[1,]',
  () => '{"a":1,"a":}',
  () => '"\\ud800',
  () => '\u0000',
  () => '{}{}',
  () => '{"a":1} {"b":2}',
];

/** The generated bodies for a route whose valid body is `base`. */
const samples = (base: unknown): fc.Arbitrary<Sample> => {
  const tree = toTree(base);
  const baseText = toJson(tree);
  const paths = pathsOf(tree);
  const pathArb = fc.nat({ max: paths.length }).map((i): Path => (i === paths.length ? [] : (paths[i] ?? [])));
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 3, arbitrary: fc.constant({ kind: 'delete' } as const) },
    { weight: 8, arbitrary: wrong.map((value): Op => ({ kind: 'set', value })) },
    { weight: 2, arbitrary: fc.record({ key: keyArb, value: wrong }).map((r): Op => ({ kind: 'add', ...r })) },
    { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS).map((key): Op => ({ kind: 'rename', key })) },
  );
  const mutated = fc.array(fc.record({ path: pathArb, op }), { minLength: 1, maxLength: 3 }).map((edits) =>
    edits.reduce<Tree>((t, e) => apply(t, e.path, e.op), tree),
  );

  const arbitraryJson = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.json({ maxDepth: 2 }).map((s) => JSON.parse(s) as unknown)).map((v) => sampleOf('json', JSON.stringify(v) ?? 'null'));

  const mutation = mutated.map((t) => sampleOf('mutated', toJson(t)));

  const proto = fc.record({ t: fc.oneof(fc.constant(tree), mutated), inject: fc.constantFrom(...INJECTIONS) }).map(({ t, inject }) => sampleOf('proto', toJson(t, inject)));

  const deepBody = fc.record({ d: deep, path: pathArb, inside: fc.boolean() }).map(({ d, path, inside }) => {
    const text = deepText(d.depth, d.shape);
    return inside ? sampleOf('deep', toJson(apply(tree, path, { kind: 'set', value: new Raw(text) }))) : sampleOf('deep', text);
  });

  // A member grown to a size: 64 KiB, 512 KiB, exactly the cap, one unit over it (valid JSON otherwise).
  const huge = fc.record({
    size: fc.constantFrom<number | 'fit' | 'over'>(1 << 16, 1 << 19, 'fit', 'over'),
    char: fc.constantFrom('a', 'é', '\u0000', '😀', '"', '\ud800'),
    path: pathArb,
    shape: fc.constantFrom('string', 'array', 'keys', 'whitespace'),
  }).map(({ size, char, path, shape }): Sample => {
    const MARK = '\u0001HUGE\u0001';
    const leaf = { string: `"${MARK}"`, array: `[${MARK}1]`, keys: `{${MARK}"z":1}`, whitespace: `${MARK}1` }[shape];
    const template = toJson(apply(tree, path, { kind: 'set', value: new Raw(leaf) }));
    const rest = enc.encode(template).byteLength - enc.encode(MARK).byteLength;
    const target = size === 'fit' ? CAP : size === 'over' ? CAP + 1 : size;
    // Every unit of a shape has the same byte length (keys: 12 bytes each).
    const unit = shape === 'string' ? JSON.stringify(char).slice(1, -1) : shape === 'array' ? '1,' : shape === 'whitespace' ? ' ' : KEYS_FILL.slice(0, 12);
    const unitBytes = enc.encode(unit).byteLength;
    const count = Math.max(0, size === 'over' ? Math.ceil((target - rest) / unitBytes) : Math.floor((target - rest) / unitBytes));
    const fill = shape === 'keys' ? KEYS_FILL.slice(0, count * unitBytes) : unit.repeat(count);
    const bytes = rest + count * unitBytes;
    if (size === 'over' && bytes <= CAP) throw new Error(`an over-the-cap body of ${bytes} bytes`);
    return { kind: 'huge', body: template.replace(MARK, () => fill), expect: bytes > CAP ? 'too-large' : 'any' };
  });

  const badUtf8 = fc.record({
    text: fc.oneof(fc.constant(baseText), mutated.map((t) => toJson(t))),
    inserts: fc.array(fc.record({ at: fc.nat(), seq: fc.nat() }), { minLength: 1, maxLength: 3 }),
  }).map(({ text, inserts }): Sample => {
    const bytes = withBadUtf8(text, inserts);
    return { kind: 'utf8', body: bytes, expect: bytes.byteLength > CAP ? 'too-large' : 'bad-body' };
  });

  const syntax = fc.oneof(
    fc.nat().map((i) => sampleOf('truncated', baseText.slice(0, 1 + (i % Math.max(1, baseText.length - 1))))),
    fc.record({ text: fc.oneof(fc.constant(baseText), mutated.map((t) => toJson(t))), defect: fc.nat({ max: SYNTAX_DEFECTS.length - 1 }) })
      .map(({ text, defect }) => sampleOf('syntax', (SYNTAX_DEFECTS[defect] ?? ((t: string) => t))(text))),
    fc.string({ unit: 'binary', maxLength: 64 }).map((s) => sampleOf('garbage', s)),
    fc.uint8Array({ maxLength: 128 }).map((bytes): Sample => ({ kind: 'bytes', body: bytes, expect: oracle(bytes) })),
  );

  const lying = fc.integer({ min: CAP + 1, max: 2 ** 40 }).map((n): Sample => ({ kind: 'content-length', body: baseText, expect: 'too-large', headers: { 'content-length': String(n) } }));

  // Per 200 runs: 28 arbitrary JSON, 74 mutations, 20 prototype keys everywhere, 16 invalid UTF-8,
  // 32 syntax errors, 24 too deep, 3 huge, 3 lying content-lengths.
  return fc.oneof(
    { weight: 28, arbitrary: arbitraryJson },
    { weight: 74, arbitrary: mutation },
    { weight: 20, arbitrary: proto },
    { weight: 16, arbitrary: badUtf8 },
    { weight: 32, arbitrary: syntax },
    { weight: 24, arbitrary: deepBody },
    { weight: 3, arbitrary: huge },
    { weight: 3, arbitrary: lying },
  );
};

// ---------------------------------------------------------------------------------------------
// Checking answers
// ---------------------------------------------------------------------------------------------

/** Codes that mean the request was refused before its body was read: never expected here. */
const AUTH_CODES = new Set(['API_UNAUTHORIZED', 'API_FORBIDDEN', 'CLAIMS_MISSING_ENTITLEMENT', 'CLAIMS_ENTITLEMENT_EXPIRED', 'TOKEN_REVOKED']);

const PROTOTYPES: readonly [string, object][] = [
  ['Object', Object.prototype], ['Array', Array.prototype], ['Function', Function.prototype], ['String', String.prototype],
  ['Number', Number.prototype], ['Boolean', Boolean.prototype], ['Promise', Promise.prototype],
];
/** Each prototype's own properties and their descriptors' fields (value or get/set, flags), as taken before any request. */
const snapshot = (o: object): Map<PropertyKey, readonly unknown[]> =>
  new Map(Reflect.ownKeys(o).map((k) => [k, Object.values(Object.getOwnPropertyDescriptor(o, k) ?? {})]));
const same = (a: readonly unknown[] | undefined, b: readonly unknown[]): boolean => a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
const PRISTINE = PROTOTYPES.map(([, p]) => snapshot(p));
const COUNTS = PRISTINE.map((m) => m.size);

/** A description of the pollution, if a built-in prototype gained (or, with `full`, changed) a property. */
const pollution = (full = false): string | undefined => {
  for (const [i, [name, proto]] of PROTOTYPES.entries()) {
    if (Reflect.ownKeys(proto).length !== COUNTS[i]) return `${name}.prototype gained or lost properties`;
    if (!full) continue;
    const now = snapshot(proto);
    for (const [k, v] of PRISTINE[i] ?? []) if (!same(now.get(k), v)) return `${name}.prototype.${String(k)} changed`;
  }
  const probe = {} as Record<string, unknown>;
  if (Object.getPrototypeOf(probe) !== Object.prototype || probe['polluted'] !== undefined || probe['isAdmin'] !== undefined) return 'a fresh object is polluted';
  return undefined;
};

interface Tally {
  runs: number;
  ms: number;
  readonly statuses: Map<number, number>;
  readonly codes: Map<string, number>;
  readonly kinds: Map<string, number>;
}
const tallies = new Map<string, Tally>();
const tally = (name: string): Tally => {
  let t = tallies.get(name);
  if (t === undefined) tallies.set(name, (t = { runs: 0, ms: 0, statuses: new Map(), codes: new Map(), kinds: new Map() }));
  return t;
};
const bump = <K>(m: Map<K, number>, k: K): void => void m.set(k, (m.get(k) ?? 0) + 1);

/**
 * Runs a request to completion: while it is pending, the manual clock moves 250 ms per event-loop
 * turn that has timers due (seat waits, long polls); a request still pending after 20 s of wall
 * time is a hang.
 */
async function drive(h: Harness, promise: Promise<Response>): Promise<Response> {
  let done = false;
  void promise.then(() => (done = true), () => (done = true));
  const deadline = performance.now() + 20_000;
  while (!done) {
    await new Promise<void>((r) => setImmediate(r));
    if (!done && h.timers.pending > 0) h.timers.advance(250);
    if (performance.now() > deadline) throw new Error('the request never finished');
  }
  return promise;
}

/** Throws `message()` unless `condition` (cheaper than `expect` in a loop of 60,000). */
function must(condition: boolean, message: () => string): asserts condition {
  if (!condition) throw new Error(message());
}

/** Checks one answer against the sample's expectation; returns its status and code. */
async function check(res: Response, expected: Expect, what: () => string): Promise<{ status: number; code?: string }> {
  const text = await res.text();
  const status = res.status;
  const said = (): string => `${what()}\n  → ${status} ${text.slice(0, 500)}`;
  must(/^application\/json/.test(res.headers.get('content-type') ?? ''), () => `not JSON: ${said()}`);
  must(/^[0-9a-f-]{36}$/.test(res.headers.get('rvt-ray-id') ?? ''), () => `no ray id: ${said()}`);
  const parsed = JSON.parse(text) as unknown;
  must(status < 500, () => `a 5xx: ${said()}`);
  const problem = pollution();
  must(problem === undefined, () => `${problem ?? ''} after ${what()}`);
  if (status === 200) {
    must(expected === 'any', () => `accepted, expected ${expected}: ${said()}`);
    return { status };
  }
  const body = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const code = body['code'];
  must(typeof code === 'string' && Object.hasOwn(ERRORS, code), () => `not a catalog code: ${said()}`);
  must(typeof body['message'] === 'string', () => `no message: ${said()}`);
  must(status >= 400 && ERRORS[code as keyof typeof ERRORS].status === status, () => `status ${status} is not ${code}'s: ${said()}`);
  must(!AUTH_CODES.has(code), () => `refused at auth: ${said()}`);
  if (expected === 'bad-body') must(code === 'API_BAD_BODY', () => `expected API_BAD_BODY: ${said()}`);
  if (expected === 'too-large') must(status === 413 && code === 'API_BODY_TOO_LARGE', () => `expected 413 API_BODY_TOO_LARGE: ${said()}`);
  return { status, code };
}

const describeSample = (s: Sample): string => {
  const text = typeof s.body === 'string' ? s.body : Buffer.from(s.body).toString('latin1');
  return `[${s.kind}, expect ${s.expect}] ${text.length > 300 ? `${text.slice(0, 300)}… (${text.length} chars)` : text}`;
};

// ---------------------------------------------------------------------------------------------
// The routes
// ---------------------------------------------------------------------------------------------

interface BodyRoute {
  readonly method: 'POST' | 'PUT';
  readonly path: string;
  readonly token: string;
  readonly base: unknown;
  /** Extra headers per run (distinct client addresses for the matchmaker). */
  readonly headers?: (run: number) => Record<string, string>;
  /** What the valid body answers when it is not 200 (a state the route needs but the suite cannot make). */
  readonly baseCode?: string;
}

/** Every generator must have run (the syntax ones share a label set). */
const KINDS = ['json', 'mutated', 'proto', 'utf8', 'deep', 'huge', 'content-length'];
const SYNTAX_KINDS = ['truncated', 'syntax', 'garbage', 'bytes'];
/** The purely malformed generators: never a 200, always their specific 4xx. */
const MALFORMED = new Set(['truncated', 'utf8', 'deep', 'content-length']);

/** Fuzzes one route's body; the valid body must be accepted (or refused for a reason other than auth) first. */
async function fuzzBody(h: Harness, name: string, route: () => BodyRoute): Promise<void> {
  const r = route();
  const t = tally(name);
  const first = await check(await drive(h, h.app.handle(h.request(r.method, r.path, { token: r.token, body: r.base, ...(r.headers ? { headers: r.headers(0) } : {}) }))), 'any', () => `${name}: the valid body`);
  expect(first.code, `${name}: the valid body`).toBe(r.baseCode);
  const started = performance.now();
  let run = 0;
  await fc.assert(
    fc.asyncProperty(samples(r.base), async (s) => {
      run++;
      must(!MALFORMED.has(s.kind) || s.expect !== 'any', () => `the ${s.kind} generator made a well-formed body: ${describeSample(s)}`);
      const request = h.request(r.method, r.path, { token: r.token, raw: s.body, headers: { ...r.headers?.(run), ...s.headers } });
      const answer = await check(await drive(h, h.app.handle(request)), s.expect, () => `${r.method} ${name} ${describeSample(s)}`);
      t.runs++;
      bump(t.statuses, answer.status);
      if (answer.code !== undefined) bump(t.codes, answer.code);
      bump(t.kinds, s.kind);
    }),
    { numRuns: NUM_RUNS },
  );
  t.ms += performance.now() - started;
  expect(t.runs).toBeGreaterThanOrEqual(NUM_RUNS);
  expect(KINDS.filter((k) => (t.kinds.get(k) ?? 0) === 0), 'generators that never ran').toEqual([]);
  expect(SYNTAX_KINDS.some((k) => (t.kinds.get(k) ?? 0) > 0)).toBe(true);
  expect(pollution(true)).toBeUndefined();
  // The server still answers afterwards.
  expect((await h.call('GET', '/health')).status).toBe(200);
}

const TIMEOUT = 120_000;

// ---------------------------------------------------------------------------------------------
// Cloud routes (admin or the game's cloud token)
// ---------------------------------------------------------------------------------------------

describe('bad bodies: cloud routes', () => {
  let h: Harness;
  let s: Awaited<ReturnType<Harness['setup']>>;
  let uploadId: string;
  let linkToken: string;
  beforeAll(async () => {
    h = harness({ readyAfterMs: 0 });
    s = await h.setup();
    const build = await h.call('POST', `/cloud/games/${s.gameId}/builds`, { token: s.cloud, body: { display_name: 'Pending', image_tag: 'pending:1', image_file: { path: 'image.tar', content_length: 3 } } });
    uploadId = str(build.body['upload_id']);
    linkToken = str((await h.call('POST', '/cloud/devices/links')).body['device_link_token']);
  });
  afterAll(() => h.cleanup());

  const g = (): string => `/cloud/games/${s.gameId}`;
  const n = (): string => `${g()}/namespaces/${s.nsId}`;
  const config = (): unknown => ({
    matchmaker: {
      regions: { local: { idle_lobbies: { min: 0, max: 1 } } },
      max_players: 4,
      docker: { image_id: s.buildId, network_mode: 'host', env: { A: 'b' }, args: ['x'], ports: { p: { port: 7777, protocol: 'udp' }, r: { port_range: { min: 26000, max: 26001 }, protocol: 'tcp', proxy: 'none' } } },
      game_modes: { default: { actions: { find: { enabled: true } } }, custom: { max_players: 2, actions: { create: { enabled: true, enable_public: true } } } },
    },
  });

  const routes: Record<string, () => BodyRoute> = {
    'POST /cloud/games': () => ({ method: 'POST', path: '/cloud/games', token: ADMIN, base: { name_id: 'fuzz', display_name: 'Fuzz', developer_group_id: randomUUID() } }),
    'POST /cloud/games/validate': () => ({ method: 'POST', path: '/cloud/games/validate', token: s.cloud, base: { name_id: 'fuzz', display_name: 'Fuzz' } }),
    'POST …/namespaces': () => ({ method: 'POST', path: `${g()}/namespaces`, token: s.cloud, base: { display_name: 'Fuzz', name_id: 'fuzz', version_id: s.versionId } }),
    'POST …/namespaces/validate': () => ({ method: 'POST', path: `${g()}/namespaces/validate`, token: s.cloud, base: { display_name: 'Fuzz', name_id: 'fuzz2' } }),
    'PUT …/namespaces/{ns}/version': () => ({ method: 'PUT', path: `${n()}/version`, token: s.cloud, base: { version_id: s.versionId } }),
    'POST …/namespaces/{ns}/mm-config': () => ({ method: 'POST', path: `${n()}/mm-config`, token: s.cloud, base: { lobby_count_max: 16, max_players: 8 } }),
    'POST …/namespaces/{ns}/mm-config/validate': () => ({ method: 'POST', path: `${n()}/mm-config/validate`, token: s.cloud, base: { lobby_count_max: 16, max_players: 8 } }),
    'PUT …/namespaces/{ns}/domain-public-auth': () => ({ method: 'PUT', path: `${n()}/domain-public-auth`, token: s.cloud, base: { enabled: true } }),
    'PUT …/namespaces/{ns}/cdn-auth': () => ({ method: 'PUT', path: `${n()}/cdn-auth`, token: s.cloud, base: { auth_type: 'basic' } }),
    'POST …/namespaces/{ns}/domains': () => ({ method: 'POST', path: `${n()}/domains`, token: s.cloud, base: { domain: 'fuzz.example.com' } }),
    'POST …/namespaces/{ns}/tokens/development': () => ({ method: 'POST', path: `${n()}/tokens/development`, token: s.cloud, base: { hostname: 'localhost', ports: { default: { port: 7777, protocol: 'udp' }, range: { port_range: { min: 26000, max: 26010 }, protocol: 'tcp' } } } }),
    'POST …/namespaces/{ns}/tokens/development (lobby_ports)': () => ({ method: 'POST', path: `${n()}/tokens/development`, token: s.cloud, base: { hostname: 'localhost', lobby_ports: [{ label: 'default', target_port: 7777, proxy_protocol: 'udp' }, { label: 'r', port_range: { min: 26000, max: 26001 }, proxy_protocol: 'tcp' }] } }),
    'POST …/namespaces/{ns}/tokens/development/validate': () => ({ method: 'POST', path: `${n()}/tokens/development/validate`, token: s.cloud, base: { hostname: 'localhost', lobby_ports: [{ label: 'default', target_port: 7777, proxy_protocol: 'udp' }] } }),
    'POST …/versions': () => ({ method: 'POST', path: `${g()}/versions`, token: s.cloud, base: { display_name: 'fuzz', config: config() } }),
    'POST …/versions/validate': () => ({ method: 'POST', path: `${g()}/versions/validate`, token: s.cloud, base: { display_name: 'fuzz-validate', config: config() } }),
    'POST …/builds': () => ({ method: 'POST', path: `${g()}/builds`, token: s.cloud, base: { display_name: 'Build', image_tag: 'fuzz:1', image_file: { path: 'image.tar', content_type: 'application/x-tar', content_length: 10 }, multipart_upload: false, kind: 'docker_image', compression: 'none' } }),
    'POST …/cdn/sites': () => ({ method: 'POST', path: `${g()}/cdn/sites`, token: s.cloud, base: { display_name: 'Site', files: [{ path: 'index.html', content_type: 'text/html', content_length: 10 }, { path: 'a/b.js', content_length: 1 }] } }),
    // Nothing was PUT: completing is refused after the body was read.
    'POST /cloud/uploads/{id}/complete': () => ({ method: 'POST', path: `/cloud/uploads/${uploadId}/complete`, token: s.cloud, base: {}, baseCode: 'UPLOAD_INCOMPLETE' }),
    'POST /cloud/devices/links/complete': () => ({ method: 'POST', path: '/cloud/devices/links/complete', token: ADMIN, base: { device_link_token: linkToken, game_id: s.gameId } }),
  };

  for (const [name, route] of Object.entries(routes)) it(name, () => fuzzBody(h, name, route), TIMEOUT);
});

// ---------------------------------------------------------------------------------------------
// Player-facing matchmaker routes (a public namespace token)
// ---------------------------------------------------------------------------------------------

describe('bad bodies: matchmaker routes', () => {
  let h: Harness;
  let s: Awaited<ReturnType<Harness['setup']>>;
  let lobbyId: string;
  beforeAll(async () => {
    h = harness({ readyAfterMs: 0 });
    s = await h.setup();
    const found = await drive(h, h.app.handle(h.request('POST', '/matchmaker/lobbies/find', { token: s.pub, body: { game_modes: ['default'] } })));
    lobbyId = (JSON.parse(await found.text()) as { lobby: { lobby_id: string } }).lobby.lobby_id;
  });
  afterAll(() => h.cleanup());

  // Distinct client addresses, 40 per route: seats stay bounded by the per-client cap.
  const clients = (net: number) => (run: number): Record<string, string> => ({ 'x-forwarded-for': `198.51.${net}.${run % 40}` });
  const captcha = { hcaptcha: { client_response: 'x' }, turnstile: { client_response: 'y' } };
  const routes: Record<string, () => BodyRoute> = {
    'POST /matchmaker/lobbies/find': () => ({
      method: 'POST', path: '/matchmaker/lobbies/find', token: s.pub, headers: clients(100),
      base: { game_modes: ['custom'], regions: ['local', 'lnd-atl'], prevent_auto_create_lobby: false, tags: { a: 'b' }, max_players: 3, captcha, verification_data: { v: [1, 'x'] } },
    }),
    'POST /matchmaker/lobbies/join': () => ({ method: 'POST', path: '/matchmaker/lobbies/join', token: s.pub, headers: clients(101), base: { lobby_id: lobbyId, captcha, verification_data: null } }),
    'POST /matchmaker/lobbies/create': () => ({
      method: 'POST', path: '/matchmaker/lobbies/create', token: s.pub, headers: clients(102),
      base: { game_mode: 'custom', region: 'local', publicity: 'public', tags: { a: 'b' }, max_players: 3, lobby_config: { map: 'dust', n: [1, 2] }, captcha, verification_data: 'v' },
    }),
  };

  for (const [name, route] of Object.entries(routes)) it(name, () => fuzzBody(h, name, route), TIMEOUT);
});

// ---------------------------------------------------------------------------------------------
// Lobby-facing routes (the lobby's own token), and the query-string routes
// ---------------------------------------------------------------------------------------------

describe('bad bodies and queries: lobby routes and queries', () => {
  let h: Harness;
  let s: Awaited<ReturnType<Harness['setup']>>;
  let lobbyId: string;
  let lobbyToken: string;
  let playerToken: string;
  let linkToken: string;
  beforeAll(async () => {
    h = harness({ readyAfterMs: 0, config: { logWatchMs: 3_000, logPollMs: 1_000 } });
    s = await h.setup((buildId) => defaultConfig(buildId));
    const found = await drive(h, h.app.handle(h.request('POST', '/matchmaker/lobbies/find', { token: s.pub, body: { game_modes: ['default'] } })));
    const body = JSON.parse(await found.text()) as { lobby: { lobby_id: string }; player: { token: string } };
    lobbyId = body.lobby.lobby_id;
    playerToken = body.player.token;
    lobbyToken = h.runtime.startOf(lobbyId)?.env['RIVET_TOKEN'] ?? '';
    expect(lobbyToken).not.toBe('');
    linkToken = str((await h.call('POST', '/cloud/devices/links')).body['device_link_token']);
  });
  afterAll(() => h.cleanup());

  const routes: Record<string, () => BodyRoute> = {
    'POST /matchmaker/lobbies/ready': () => ({ method: 'POST', path: '/matchmaker/lobbies/ready', token: lobbyToken, base: {} }),
    'PUT /matchmaker/lobbies/closed': () => ({ method: 'PUT', path: '/matchmaker/lobbies/closed', token: lobbyToken, base: { is_closed: false } }),
    'PUT /matchmaker/lobbies/state': () => ({ method: 'PUT', path: '/matchmaker/lobbies/state', token: lobbyToken, base: { map: 'dust', players: [{ id: 1, name: 'a' }], open: true } }),
    'POST /matchmaker/players/connected': () => ({ method: 'POST', path: '/matchmaker/players/connected', token: lobbyToken, base: { player_token: playerToken } }),
    'POST /matchmaker/players/disconnected': () => ({ method: 'POST', path: '/matchmaker/players/disconnected', token: lobbyToken, base: { player_token: playerToken } }),
  };

  for (const [name, route] of Object.entries(routes)) it(name, () => fuzzBody(h, name, route), TIMEOUT);

  // The lobby state the body fuzz stored must still be readable (and listable) afterwards.
  it('GET /matchmaker/lobbies/{id}/state and lobbies/list?include_state=true answer after the state fuzz', async () => {
    for (const [method, path, token] of [['GET', `/matchmaker/lobbies/${lobbyId}/state`, lobbyToken], ['GET', '/matchmaker/lobbies/list?include_state=true', s.pub]] as const) {
      const res = await h.app.handle(h.request(method, path, { token }));
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    }
  });

  interface QueryRoute {
    readonly method: 'GET' | 'PUT';
    readonly path: (query: string) => string;
    readonly token?: () => string;
    readonly body?: string;
    /** The query's names and some valid values. */
    readonly params: () => Readonly<Record<string, readonly string[]>>;
  }

  const queryRoutes: Record<string, QueryRoute> = {
    'GET …/matchmaker/lobbies/{id}/logs': {
      method: 'GET', path: (q) => `/cloud/games/${s.gameId}/matchmaker/lobbies/${lobbyId}/logs${q}`, token: () => s.cloud,
      params: () => ({ stream: ['std_out', 'std_err'], watch_index: ['0', '1', '5', '999999999999999'] }),
    },
    'GET /cloud/devices/links': {
      method: 'GET', path: (q) => `/cloud/devices/links${q}`, token: () => s.cloud,
      params: () => ({ device_link_token: [linkToken, 'device_link.x'], watch_index: ['', '1'] }),
    },
    'GET /matchmaker/lobbies/list': {
      method: 'GET', path: (q) => `/matchmaker/lobbies/list${q}`, token: () => s.pub,
      params: () => ({ include_state: ['true', 'false', 'TRUE', '1'] }),
    },
    'PUT /uploads/{key} (presigned query)': {
      method: 'PUT', path: (q) => `/uploads/${randomUUID()}/image.tar${q}`, body: 'abc',
      params: () => ({ part: ['1', '0'], offset: ['0'], length: ['3'], expires: ['1', '99999999999999'], signature: ['00', 'a'.repeat(64)], upload: [randomUUID()] }),
    },
  };

  /** Lone surrogates as U+FFFD (what a browser sends; `encodeURIComponent` throws on them). */
  const wellFormed = (x: string): string => x.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

  const RAW_QUERY_BITS = ['%', '%z', '%zz', '%ff', '%fe%ff', '%c0%80', '%ed%a0%80', '%f4%90%80%80', '%00', '+', '&&', '==', '=&=', ';', '%26', '%3D', '%E2%80%AE', '%ef%bb%bf'];

  const queryArb = (params: Readonly<Record<string, readonly string[]>>): fc.Arbitrary<string> => {
    const names = Object.keys(params);
    const valid = Object.values(params).flat();
    const key = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) });
    const value = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...valid) },
      { weight: 3, arbitrary: fc.constantFrom(...EDGE_NUMBERS, '', 'NaN', 'Infinity', '-Infinity', '0x10', '1.5', ' 1', '1 ', '00001', '9'.repeat(40)) },
      { weight: 3, arbitrary: fc.constantFrom(...UNICODE_EDGES) },
      { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
      { weight: 1, arbitrary: fc.constantFrom(1 << 12, 1 << 15).map((n) => 'a'.repeat(n)) },
    );
    // Lone surrogates cannot be percent-encoded: they are sent as U+FFFD, as a browser would.
    const encoded = fc.record({ key, value }).map(({ key: k, value: v }) => `${encodeURIComponent(wellFormed(k))}=${encodeURIComponent(wellFormed(v))}`);
    const raw = fc.record({ key, bit: fc.constantFrom(...RAW_QUERY_BITS), value: fc.constantFrom(...valid, '') }).map(({ key: k, bit, value: v }) => `${encodeURIComponent(wellFormed(k))}=${v}${bit}`);
    return fc.array(fc.oneof({ weight: 3, arbitrary: encoded }, { weight: 1, arbitrary: raw }, { weight: 1, arbitrary: fc.constantFrom(...RAW_QUERY_BITS) }), { maxLength: 5 })
      .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.join('&')}`));
  };

  for (const [name, route] of Object.entries(queryRoutes)) {
    it(`query: ${name}`, async () => {
      const t = tally(`query: ${name}`);
      const started = performance.now();
      await fc.assert(
        fc.asyncProperty(queryArb(route.params()), async (query) => {
          const token = route.token?.();
          const request = h.request(route.method, route.path(query), { ...(token === undefined ? {} : { token }), ...(route.body === undefined ? {} : { raw: route.body }) });
          const answer = await check(await drive(h, h.app.handle(request)), 'any', () => `${route.method} ${name} ${query.slice(0, 300)}`);
          t.runs++;
          bump(t.statuses, answer.status);
          if (answer.code !== undefined) bump(t.codes, answer.code);
        }),
        { numRuns: NUM_RUNS },
      );
      t.ms += performance.now() - started;
      expect(t.runs).toBeGreaterThanOrEqual(NUM_RUNS);
      expect(pollution(true)).toBeUndefined();
      expect((await h.call('GET', '/health')).status).toBe(200);
    }, TIMEOUT);
  }
});

// ---------------------------------------------------------------------------------------------
// Regressions found by this suite
// ---------------------------------------------------------------------------------------------

describe('bad bodies: regressions', () => {
  let h: Harness;
  let s: Awaited<ReturnType<Harness['setup']>>;
  beforeAll(async () => {
    h = harness({ readyAfterMs: 0 });
    s = await h.setup();
  });
  afterAll(() => h.cleanup());

  /** `leaf` inside `depth` arrays. */
  const nested = (depth: number, leaf = '1'): string => '['.repeat(depth) + leaf + ']'.repeat(depth);

  it('a lobby_config nested 10,000 deep is API_BAD_BODY (it was a 500: JSON.stringify overflowed the stack in the create rules)', async () => {
    const raw = `{"game_mode":"custom","lobby_config":${nested(10_000)}}`;
    const res = await h.call('POST', '/matchmaker/lobbies/create', { token: s.pub, raw });
    expect([res.status, res.body['code']]).toEqual([400, 'API_BAD_BODY']);
  });

  it('a lobby state nested 10,000 deep is refused (it was stored, then GET state and lobbies/list answered 500)', async () => {
    const found = await drive(h, h.app.handle(h.request('POST', '/matchmaker/lobbies/find', { token: s.pub, body: { game_modes: ['default'] } })));
    const lobbyId = (JSON.parse(await found.text()) as { lobby: { lobby_id: string } }).lobby.lobby_id;
    const lobbyToken = h.runtime.startOf(lobbyId)?.env['RIVET_TOKEN'] ?? '';
    const set = await h.call('PUT', '/matchmaker/lobbies/state', { token: lobbyToken, raw: nested(10_000) });
    expect([set.status, set.body['code']]).toEqual([400, 'API_BAD_BODY']);
    expect((await h.call('GET', `/matchmaker/lobbies/${lobbyId}/state`, { token: lobbyToken })).status).toBe(200);
    expect((await h.call('GET', '/matchmaker/lobbies/list?include_state=true', { token: s.pub })).status).toBe(200);
  });

  it(`bodies nest at most ${MAX_JSON_DEPTH} levels (serde_json's default recursion limit, which Rivet had)`, async () => {
    const found = await drive(h, h.app.handle(h.request('POST', '/matchmaker/lobbies/find', { token: s.pub, body: { game_modes: ['default'] } })));
    const lobbyId = (JSON.parse(await found.text()) as { lobby: { lobby_id: string } }).lobby.lobby_id;
    const lobbyToken = h.runtime.startOf(lobbyId)?.env['RIVET_TOKEN'] ?? '';
    expect((await h.call('PUT', '/matchmaker/lobbies/state', { token: lobbyToken, raw: nested(MAX_JSON_DEPTH) })).status).toBe(200);
    expect((await h.call('PUT', '/matchmaker/lobbies/state', { token: lobbyToken, raw: `{"a":${nested(MAX_JSON_DEPTH - 1, '"[[[{{{"')}}` })).status).toBe(200);
    expect((await h.call('PUT', '/matchmaker/lobbies/state', { token: lobbyToken, raw: nested(MAX_JSON_DEPTH + 1) })).body['code']).toBe('API_BAD_BODY');
    expect((await h.call('PUT', '/matchmaker/lobbies/state', { token: lobbyToken, raw: '{"a":'.repeat(MAX_JSON_DEPTH + 1) })).body['code']).toBe('API_BAD_BODY');
    const state = await h.call('GET', `/matchmaker/lobbies/${lobbyId}/state`, { token: lobbyToken });
    expect(state.status).toBe(200);
  });
});

afterAll(() => {
  const lines = [...tallies].map(([name, t]) => {
    const statuses = [...t.statuses].sort(([a], [b]) => a - b).map(([k, v]) => `${k}×${v}`).join(' ');
    const codes = [...t.codes].sort(([, a], [, b]) => b - a).slice(0, 4).map(([k, v]) => `${k}×${v}`).join(' ');
    return `  ${name}: ${t.runs} runs in ${(t.ms / 1000).toFixed(1)} s; ${statuses}; ${codes}`;
  });
  process.stdout.write(`bad-input fuzz (${NUM_RUNS} runs per endpoint):\n${lines.join('\n')}\n`);
});
