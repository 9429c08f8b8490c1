/**
 * How the SQL demand stores keep facts: one row per namespace per append ("chunk": its facts as
 * one JSON document, in time order, spanning at most {@link MAX_CHUNK_SPAN_MS}), so a flush of
 * thousands of facts is a few inserts, not thousands. Reads merge chunks back into the
 * {@link DemandStore} order (time, then append order); a fact's `seq` is its chunk's times 65,536
 * plus its index in the chunk.
 *
 * Two formats are read; the second is written. Format 1, a JSON array of one tuple per fact
 * ({@link Encoded}). Format 2, {@link ChunkV2}: requests (nearly every fact) as runs of numbers in
 * one flat array, their strings once each in a word list, their seat keys in one list, and the
 * rarer seat and lobby facts as format-1 tuples with their index. Against format 1 it takes half
 * the bytes and 40 % of the time to encode (`bench/RESULTS.md`).
 */
import type { DemandCursor, DemandFact, DemandLobbyFact, DemandRequestFact, DemandSeatFact, StoredDemandFact } from '../io/demand.js';

/**
 * A fact as stored in format 1: a tuple without its namespace (the chunk's) and without key
 * names. `r`: request, `s`: seat step, `l`: lobby step. A request's last number holds its flags:
 * the gates that ran, and whether its seat was ready at admission (two bits: known, ready; a chunk
 * written before it was kept has neither).
 */
type Encoded =
  | readonly ['r', number, DemandRequestFact['kind'], string | null, string | null, number, string, number, readonly string[], number]
  | readonly ['s', number, string, DemandSeatFact['step']]
  | readonly ['l', number, string, DemandLobbyFact['step'], string | null, string | null, string | null, number];

const GATE_CAPTCHA = 1;
const GATE_VERIFICATION = 2;
const SEAT_READINESS_KNOWN = 4;
const SEAT_READY = 8;

/** A request's flags: the gates that ran, and whether its seat was ready at admission. */
const flagsOf = (f: DemandRequestFact): number =>
  (f.gates?.captcha === true ? GATE_CAPTCHA : 0) | (f.gates?.verification === true ? GATE_VERIFICATION : 0) |
  (f.seatReady === undefined ? 0 : SEAT_READINESS_KNOWN | (f.seatReady ? SEAT_READY : 0));

const encode = (f: DemandFact): Encoded => {
  switch (f.type) {
    case 'request':
      return ['r', f.at, f.kind, f.gameMode ?? null, f.region ?? null, f.party, f.outcome, f.waitMs, f.seats, flagsOf(f)];
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
 * A chunk in format 2. `a`: the time the request times count from. `w`: the words (kinds, game
 * modes, regions, outcomes) the numbers point to. `n`: {@link REQUEST_NUMBERS} numbers per
 * request in order: at − `a`, kind, game mode, region, party, outcome, wait ms, seat keys, flags
 * (words as their index in `w`, −1 for none; seat keys: how many of `k` are the request's; flags
 * as in format 1). `k`: the requests' seat keys in order. `e`: every other fact, as its index in the
 * chunk followed by its format-1 tuple; requests fill the other indexes in order.
 */
interface ChunkV2 {
  readonly v: 2;
  readonly a: number;
  readonly w: readonly string[];
  readonly n: readonly number[];
  readonly k: readonly string[];
  readonly e: readonly (readonly [number, ...Encoded])[];
}

const REQUEST_NUMBERS = 9;

/** The facts (one namespace's, at least one) as a format-2 chunk body. */
function encodeChunk(facts: readonly DemandFact[]): string {
  const base = (facts[0] as DemandFact).at;
  const w: string[] = [];
  const index = new Map<string, number>();
  const word = (text: string | undefined): number => {
    if (text === undefined) return -1;
    let i = index.get(text);
    if (i === undefined) {
      i = w.push(text) - 1;
      index.set(text, i);
    }
    return i;
  };
  const n: number[] = [];
  const k: string[] = [];
  const e: (readonly [number, ...Encoded])[] = [];
  for (let i = 0; i < facts.length; i++) {
    const f = facts[i] as DemandFact;
    if (f.type !== 'request') {
      e.push([i, ...encode(f)]);
      continue;
    }
    n.push(f.at - base, word(f.kind), word(f.gameMode), word(f.region), f.party, word(f.outcome), f.waitMs, f.seats.length, flagsOf(f));
    for (const seat of f.seats) k.push(seat);
  }
  const chunk: ChunkV2 = { v: 2, a: base, w, n, k, e };
  return JSON.stringify(chunk);
}

/** The facts of a format-2 chunk, in its order. */
function decodeChunk(c: ChunkV2, namespaceId: string): DemandFact[] {
  const facts = new Array<DemandFact>(c.n.length / REQUEST_NUMBERS + c.e.length);
  for (const [i, ...tuple] of c.e) facts[i] = decode(tuple, namespaceId);
  const word = (i: number): string | null => (i < 0 ? null : (c.w[i] as string));
  let at = 0;
  let seat = 0;
  for (let j = 0; j < facts.length; j++) {
    if (facts[j] !== undefined) continue;
    const num = (field: number): number => c.n[at + field] as number;
    const seats = c.k.slice(seat, (seat += num(7)));
    facts[j] = decode(['r', c.a + num(0), c.w[num(1)] as DemandRequestFact['kind'], word(num(2)), word(num(3)), num(4), c.w[num(5)] as string, num(6), seats, num(8)], namespaceId);
    at += REQUEST_NUMBERS;
  }
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
  /** The facts, as a format-2 chunk ({@link ChunkV2}). */
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
 * {@link MAX_CHUNK_SPAN_MS} and {@link MAX_CHUNK_FACTS}.
 *
 * @example
 * toChunks(facts).forEach((c) => insert.run(c.namespaceId, c.firstAt, c.lastAt, c.count, c.facts));
 */
export function toChunks(facts: readonly DemandFact[]): NewChunk[] {
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
  return chunks;
}

/** The facts of a chunk (either format), each with its seq. */
export const factsOf = (row: ChunkRow): StoredDemandFact[] => {
  const body = JSON.parse(row.facts) as Encoded[] | ChunkV2;
  const facts = Array.isArray(body) ? body.map((e) => decode(e, row.namespaceId)) : decodeChunk(body, row.namespaceId);
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
