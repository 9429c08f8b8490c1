/**
 * How the SQL demand stores keep facts: one row per namespace per append ("chunk": its facts as
 * one JSON document, in time order, spanning at most {@link MAX_CHUNK_SPAN_MS}), so a flush of
 * thousands of facts is a few inserts, not thousands. Reads merge chunks back into the
 * {@link DemandStore} order (time, then append order); a fact's `seq` is its chunk's times 65,536
 * plus its index in the chunk.
 *
 * Three formats are read. Format 1, a JSON array of one tuple per fact ({@link Encoded}). Format
 * 2, {@link ChunkV2}, written for facts: requests (nearly every fact) as runs of numbers in one
 * flat array, their strings once each in a word list, their seat keys in one list, and the rarer
 * seat and lobby facts as format-1 tuples with their index; against format 1 it takes half the
 * bytes and 40 % of the time to encode. Format 3, {@link ChunkV3}, written for the recorder's
 * {@link DemandRequestColumns}: format 2's requests with their numbers as varints and their seat
 * keys as bytes, both in base64, made with no object per request (`bench/RESULTS.md`).
 */
import {
  REQUEST_FLAGS,
  REQUEST_NUMBERS,
  requestFlags,
  wordIndex,
  SEAT_KEY_BYTES,
  type DemandCursor,
  type DemandFact,
  type DemandLobbyFact,
  type DemandRequestColumns,
  type DemandRequestFact,
  type DemandSeatFact,
  type StoredDemandFact,
} from '../io/demand.js';

/**
 * A fact as stored in format 1: a tuple without its namespace (the chunk's) and without key
 * names. `r`: request, `s`: seat step, `l`: lobby step. A request's last number holds its
 * {@link REQUEST_FLAGS} (a chunk written before seat readiness was kept has neither of its bits).
 */
type Encoded =
  | readonly ['r', number, DemandRequestFact['kind'], string | null, string | null, number, string, number, readonly string[], number]
  | readonly ['s', number, string, DemandSeatFact['step']]
  | readonly ['l', number, string, DemandLobbyFact['step'], string | null, string | null, string | null, number];

const { captcha: GATE_CAPTCHA, verification: GATE_VERIFICATION, seatReadinessKnown: SEAT_READINESS_KNOWN, seatReady: SEAT_READY } = REQUEST_FLAGS;

const encode = (f: DemandFact): Encoded => {
  switch (f.type) {
    case 'request':
      return ['r', f.at, f.kind, f.gameMode ?? null, f.region ?? null, f.party, f.outcome, f.waitMs, f.seats, requestFlags(f.gates, f.seatReady)];
    case 'seat':
      return ['s', f.at, f.seat, f.step];
    case 'lobby':
      return ['l', f.at, f.lobbyId, f.step, f.gameMode ?? null, f.region ?? null, f.reason ?? null, f.failed === undefined ? -1 : Number(f.failed)];
  }
};

const decode = (e: Encoded, namespaceId: string): DemandFact => {
  switch (e[0]) {
    case 'r': {
      const [, at, kind, gameMode, region, party, outcome, waitMs, seats, flags] = e;
      const gates = flags & (GATE_CAPTCHA | GATE_VERIFICATION);
      return {
        type: 'request', namespaceId, at, kind, ...(gameMode === null ? {} : { gameMode }), ...(region === null ? {} : { region }), party,
        ...(gates === 0 ? {} : { gates: { captcha: (gates & GATE_CAPTCHA) !== 0, verification: (gates & GATE_VERIFICATION) !== 0 } }),
        outcome, waitMs, seats,
        ...((flags & SEAT_READINESS_KNOWN) === 0 ? {} : { seatReady: (flags & SEAT_READY) !== 0 }),
      };
    }
    case 's':
      return { type: 'seat', namespaceId, at: e[1], seat: e[2], step: e[3] };
    case 'l': {
      const [, at, lobbyId, step, gameMode, region, reason, failed] = e;
      return {
        type: 'lobby', namespaceId, at, lobbyId, step, ...(gameMode === null ? {} : { gameMode }), ...(region === null ? {} : { region }),
        ...(reason === null ? {} : { reason }), ...(failed === -1 ? {} : { failed: failed === 1 }),
      };
    }
  }
};

/**
 * A chunk in format 2: its requests as {@link DemandRequestColumns} (`a`: base, `w`: words, `n`:
 * numbers, `k`: seats), and `e`: every other fact, as its index in the chunk followed by its
 * format-1 tuple; requests fill the other indexes in order.
 */
interface ChunkV2 {
  readonly v: 2;
  readonly a: number;
  readonly w: readonly string[];
  readonly n: readonly number[];
  readonly k: readonly string[];
  readonly e: readonly (readonly [number, ...Encoded])[];
}

/**
 * A chunk in format 3: {@link DemandRequestColumns} with `n` as base64 of the numbers as zigzag
 * LEB128 varints and `k` as base64 of the seat keys' bytes.
 */
interface ChunkV3 {
  readonly v: 3;
  readonly a: number;
  readonly w: readonly string[];
  readonly n: string;
  readonly k: string;
}

/** Where format 3's varints are written (grown as needed; one event loop, so one buffer). */
let scratch = Buffer.allocUnsafe(1 << 16);

/** The numbers as base64 of their zigzag varints; undefined if one is not an integer format 3 can hold. */
function varints(numbers: readonly number[]): string | undefined {
  if (scratch.length < numbers.length * 8) scratch = Buffer.allocUnsafe(numbers.length * 8);
  let p = 0;
  for (let i = 0; i < numbers.length; i++) {
    const x = numbers[i] as number;
    if (!Number.isSafeInteger(x) || Math.abs(x) >= 2 ** 48) return undefined;
    let z = x < 0 ? -2 * x - 1 : 2 * x;
    while (z >= 0x80) {
      scratch[p++] = (z % 0x80) | 0x80;
      z = Math.floor(z / 0x80);
    }
    scratch[p++] = z;
  }
  return scratch.toString('base64', 0, p);
}

/** The numbers of base64 zigzag varints. */
function numbersOf(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const numbers: number[] = [];
  for (let p = 0; p < bytes.length; ) {
    let z = 0;
    let scale = 1;
    let b: number;
    do {
      b = bytes[p++] as number;
      z += (b & 0x7f) * scale;
      scale *= 0x80;
    } while (b >= 0x80);
    numbers.push(z % 2 === 1 ? -(z + 1) / 2 : z / 2);
  }
  return numbers;
}

/** The facts (one namespace's, at least one) as a format-2 chunk body. */
function encodeChunk(facts: readonly DemandFact[]): string {
  const base = (facts[0] as DemandFact).at;
  const w: string[] = [];
  const index = new Map<string, number>();
  const word = (text: string | undefined): number => wordIndex(w, index, text);
  const n: number[] = [];
  const k: string[] = [];
  const e: (readonly [number, ...Encoded])[] = [];
  for (let i = 0; i < facts.length; i++) {
    const f = facts[i] as DemandFact;
    if (f.type !== 'request') {
      e.push([i, ...encode(f)]);
      continue;
    }
    n.push(f.at - base, word(f.kind), word(f.gameMode), word(f.region), f.party, word(f.outcome), f.waitMs, f.seats.length, requestFlags(f.gates, f.seatReady));
    for (const seat of f.seats) k.push(seat);
  }
  const chunk: ChunkV2 = { v: 2, a: base, w, n, k, e };
  return JSON.stringify(chunk);
}

/** Requests as facts, in order, from their columns with their seats as strings. */
function requestsOf(c: Omit<DemandRequestColumns, 'seats'>, seats: readonly string[]): DemandRequestFact[] {
  const word = (i: number): string | null => (i < 0 ? null : (c.words[i] as string));
  const facts: DemandRequestFact[] = [];
  let seat = 0;
  for (let at = 0; at < c.numbers.length; at += REQUEST_NUMBERS) {
    const num = (field: number): number => c.numbers[at + field] as number;
    const tuple = ['r', c.base + num(0), c.words[num(1)] as DemandRequestFact['kind'], word(num(2)), word(num(3)), num(4), c.words[num(5)] as string, num(6), seats.slice(seat, (seat += num(7))), num(8)] as const;
    facts.push(decode(tuple, c.namespaceId) as DemandRequestFact);
  }
  return facts;
}

/** Seat keys' bytes as their hex, one string per key. */
function hexKeys(bytes: Uint8Array): string[] {
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  const keys: string[] = [];
  for (let i = 0; i < hex.length; i += 2 * SEAT_KEY_BYTES) keys.push(hex.slice(i, i + 2 * SEAT_KEY_BYTES));
  return keys;
}

/** The requests of columns as facts, in order. */
export const requestFacts = (c: DemandRequestColumns): DemandRequestFact[] => requestsOf(c, hexKeys(c.seats));

/** The facts of a format-2 chunk, in its order. */
function decodeChunk(c: ChunkV2, namespaceId: string): DemandFact[] {
  const requests = requestsOf({ namespaceId, base: c.a, words: c.w, numbers: c.n }, c.k);
  const facts = new Array<DemandFact>(requests.length + c.e.length);
  for (const [i, ...tuple] of c.e) facts[i] = decode(tuple, namespaceId);
  let r = 0;
  for (let j = 0; j < facts.length; j++) if (facts[j] === undefined) facts[j] = requests[r++] as DemandRequestFact;
  return facts;
}

/** The longest time a chunk covers: a read starts this long before its window. */
export const MAX_CHUNK_SPAN_MS = 60_000;
/** Facts per chunk at most (below the 65,536 of a fact's seq). */
export const MAX_CHUNK_FACTS = 10_000;
const SEQ_SHIFT = 65_536;

/** A chunk to insert. */
export interface NewChunk {
  readonly namespaceId: string;
  readonly firstAt: number;
  readonly lastAt: number;
  readonly count: number;
  /** The facts, as a format-2 chunk ({@link ChunkV2}), or requests only as a format-3 one ({@link ChunkV3}). */
  readonly facts: string;
}

/** A stored chunk as a read sees it. */
export interface ChunkRow {
  readonly seq: number;
  readonly namespaceId: string;
  readonly firstAt: number;
  readonly facts: string;
}

/**
 * The chunks of an append: per namespace, facts in time order (stable), cut at
 * {@link MAX_CHUNK_SPAN_MS} and {@link MAX_CHUNK_FACTS}; then each request columns as one chunk as
 * they are (in their order, which need not be time order), or cut like facts if they do not fit one.
 *
 * @example
 * toChunks(facts, requests).forEach((c) => insert.run(c.namespaceId, c.firstAt, c.lastAt, c.count, c.facts));
 */
export function toChunks(facts: readonly DemandFact[], requests: readonly DemandRequestColumns[] = []): NewChunk[] {
  const byNamespace = new Map<string, DemandFact[]>();
  for (const f of facts) {
    const list = byNamespace.get(f.namespaceId);
    if (list === undefined) byNamespace.set(f.namespaceId, [f]);
    else list.push(f);
  }
  const chunks: NewChunk[] = [];
  for (const [namespaceId, list] of byNamespace) {
    // A recorder's batch is in time order already but for a few ties across instances' clocks.
    if (!list.every((f, i) => i === 0 || (list[i - 1] as DemandFact).at <= f.at)) list.sort((a, b) => a.at - b.at);
    let start = 0;
    for (let i = 1; i <= list.length; i++) {
      const first = list[start] as DemandFact;
      const next = list[i];
      if (next !== undefined && next.at - first.at <= MAX_CHUNK_SPAN_MS && i - start < MAX_CHUNK_FACTS) continue;
      const part = list.slice(start, i);
      chunks.push({ namespaceId, firstAt: first.at, lastAt: (part[part.length - 1] as DemandFact).at, count: part.length, facts: encodeChunk(part) });
      start = i;
    }
  }
  for (const c of requests) chunks.push(...columnChunks(c));
  return chunks;
}

/** Request columns as one chunk when they fit one (span and count), else cut through their facts. */
function columnChunks(c: DemandRequestColumns): NewChunk[] {
  const count = c.numbers.length / REQUEST_NUMBERS;
  if (count === 0) return [];
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < c.numbers.length; i += REQUEST_NUMBERS) {
    const at = c.numbers[i] as number;
    if (at < first) first = at;
    if (at > last) last = at;
  }
  const n = last - first > MAX_CHUNK_SPAN_MS || count > MAX_CHUNK_FACTS ? undefined : varints(c.numbers);
  if (n === undefined) return toChunks(requestFacts(c));
  const k = Buffer.from(c.seats.buffer, c.seats.byteOffset, c.seats.byteLength).toString('base64');
  const chunk: ChunkV3 = { v: 3, a: c.base, w: c.words, n, k };
  return [{ namespaceId: c.namespaceId, firstAt: c.base + first, lastAt: c.base + last, count, facts: JSON.stringify(chunk) }];
}

/** The facts of a chunk (any format), each with its seq. */
export const factsOf = (row: ChunkRow): StoredDemandFact[] => {
  const body = JSON.parse(row.facts) as Encoded[] | ChunkV2 | ChunkV3;
  const facts = Array.isArray(body)
    ? body.map((e) => decode(e, row.namespaceId))
    : body.v === 3
      ? requestsOf({ namespaceId: row.namespaceId, base: body.a, words: body.w, numbers: numbersOf(body.n) }, hexKeys(Buffer.from(body.k, 'base64')))
      : decodeChunk(body, row.namespaceId);
  return facts.map((fact, i) => ({ seq: row.seq * SEQ_SHIFT + i, fact }));
};

const after = (a: DemandCursor, f: StoredDemandFact): boolean => f.fact.at > a.at || (f.fact.at === a.at && f.seq > a.seq);

/**
 * One page of a read: fetches chunks in (first_at, seq) order from `MAX_CHUNK_SPAN_MS` before the
 * page's start (`fetch(fromFirstAt, afterChunk, n)`: chunks of the namespace with `first_at >=
 * fromFirstAt`, after the chunk `afterChunk` in that order, `first_at < window.to`, at most `n`),
 * and stops once no later chunk can hold a fact before the `limit`-th found.
 *
 * @example
 * return readPage(window, after, limit, (from, afterChunk, n) => query(ns, from, afterChunk, window.to, n));
 */
export async function readPage(
  window: { readonly from: number; readonly to: number },
  cursor: DemandCursor | undefined,
  limit: number,
  fetch: (fromFirstAt: number, afterChunk: { readonly firstAt: number; readonly seq: number } | undefined, n: number) => Promise<readonly ChunkRow[]>,
): Promise<StoredDemandFact[]> {
  const max = Math.max(0, Math.floor(limit));
  if (max === 0) return [];
  const start = cursor ?? { at: window.from, seq: 0 };
  const found: StoredDemandFact[] = [];
  let last: { firstAt: number; seq: number } | undefined;
  for (;;) {
    const rows = await fetch(start.at - MAX_CHUNK_SPAN_MS, last, 16);
    for (const row of rows) {
      for (const f of factsOf(row)) if (f.fact.at >= window.from && f.fact.at < window.to && after(start, f)) found.push(f);
    }
    const end = rows[rows.length - 1];
    if (end === undefined) break;
    last = { firstAt: end.firstAt, seq: end.seq };
    found.sort((a, b) => a.fact.at - b.fact.at || a.seq - b.seq);
    // Chunks not read yet start after `end.firstAt`: none holds a fact before the limit-th found.
    if (found.length >= max && (found[max - 1] as StoredDemandFact).fact.at < end.firstAt) break;
    if (rows.length < 16) break;
  }
  found.sort((a, b) => a.fact.at - b.fact.at || a.seq - b.seq);
  return found.slice(0, max);
}

/**
 * A chunk straddling the retention bound, rewritten: the facts it keeps (as a new chunk body) and
 * how many it drops.
 *
 * @example
 * const { kept, dropped } = trimChunk(row, before);
 */
export function trimChunk(row: ChunkRow, before: number): { readonly kept: NewChunk | undefined; readonly dropped: number } {
  const facts = factsOf(row).map((f) => f.fact);
  const kept = facts.filter((f) => f.at >= before);
  const dropped = facts.length - kept.length;
  if (kept.length === 0) return { kept: undefined, dropped };
  return {
    kept: { namespaceId: row.namespaceId, firstAt: (kept[0] as DemandFact).at, lastAt: (kept[kept.length - 1] as DemandFact).at, count: kept.length, facts: encodeChunk(kept) },
    dropped,
  };
}
