/**
 * Demand recording, off the hot path: a request's answer and the matchmaker's events are pushed
 * onto an in-memory buffer (no await, no I/O), and a timer flushes the buffer to the
 * {@link DemandStore} in batches. Player ids become keyed pseudonyms in the flush ({@link seatKeys}),
 * so no raw id is ever stored; client addresses are never recorded at all.
 *
 * A flush shares the event loop with the requests, so it works in batches and lets the requests
 * waiting meanwhile run between them: at the http benchmark's ~13k finds/s even a 250 ms buffer
 * was ~3,300 facts, which keyed, encoded and written in one go held the loop for 5–18 ms per flush
 * (the answers caught behind it made the server's p99 several ms worse). Each batch is made and
 * written within one turn, so its facts die young (kept across turns, they were promoted). Requests,
 * nearly all the facts, go from the buffer straight into {@link DemandRequestColumns}: no object
 * per request is made on the way to the store.
 */
import * as crypto from 'node:crypto';
import type { MatchEvent } from '../core/events.js';
import { REQUEST_NUMBERS, requestFlags, SEAT_KEY_BYTES, wordIndex, type DemandFact, type DemandRequestColumns, type DemandRequestFact, type DemandStore } from '../io/demand.js';
import type { Clock, Timers } from '../io/index.js';
import type { EventHub } from './hub.js';

/** Seven days: how long facts are kept by default (`TAVERN_DEMAND_RETENTION`). */
export const DEFAULT_DEMAND_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** A request as the edge saw it (player ids raw: the flush turns them into seat keys). */
export type RequestRecord = Omit<DemandRequestFact, 'type' | 'seats'> & { readonly playerIds: readonly string[] };

export interface DemandRecorderOptions {
  readonly store: DemandStore;
  readonly clock: Clock;
  readonly timers: Timers;
  /** The key of the seat keys (a server secret: seat keys cannot be inverted or recomputed without it; see {@link seatKeys}). */
  readonly key: string;
  /** How often the buffer is written (default 1 s). */
  readonly flushEveryMs?: number;
  /** Facts (requests included) per write (default 1,000): each batch is made and written in one turn of the event loop. */
  readonly batch?: number;
  /** Facts held at most while the store is failing; older ones are dropped (counted) beyond it (default 200,000). */
  readonly maxBuffered?: number;
  readonly retentionMs?: number;
  /** A flush or a prune failed (the facts stay buffered, up to `maxBuffered`). */
  readonly onError?: (error: unknown) => void;
}

/** In the buffer, marks a decision's events (the next value). */
const EVENTS = Symbol('events');
/** Values a buffered request takes (see `request`). */
const REQUEST_VALUES = 11;

/** The events a recorder keeps facts of. */
const RECORDED_EVENTS: ReadonlySet<MatchEvent['type']> = new Set(['lobby-created', 'lobby-ready', 'lobby-stopping', 'lobby-stopped', 'player-connected', 'player-removed']);

/** Lobbies whose mode and region a recorder remembers at most (their created facts hold them too). */
const MAX_KNOWN_LOBBIES = 100_000;

/** One namespace's requests of a batch as columns in the making (`ids`: their raw player ids, keyed into the columns' seats). */
interface Run {
  readonly namespaceId: string;
  readonly base: number;
  readonly numbers: number[];
  readonly words: string[];
  readonly index: Map<string, number>;
  readonly ids: string[];
}

const wordOf = (run: Run, text: string | undefined): number => wordIndex(run.words, run.index, text);

const requestsIn = (run: DemandRequestColumns): number => run.numbers.length / REQUEST_NUMBERS;

/** The columns without their `n` first requests. */
function withoutFirst(c: DemandRequestColumns, n: number): DemandRequestColumns {
  let seats = 0;
  for (let i = 0; i < n; i++) seats += c.numbers[i * REQUEST_NUMBERS + 7] as number;
  return { ...c, numbers: c.numbers.slice(n * REQUEST_NUMBERS), seats: c.seats.subarray(seats * SEAT_KEY_BYTES) };
}

/** What a failed write left to retry: facts and request columns, keyed already. */
interface Unwritten {
  readonly facts: DemandFact[];
  readonly runs: DemandRequestColumns[];
}

/** Lets whatever is waiting on the event loop (requests) run before going on. */
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** SHA-256, one shot where Node has it (20.12+: a third of `createHash`'s cost). */
const sha256 = (text: string): Buffer =>
  typeof crypto.hash === 'function' ? crypto.hash('sha256', text, 'buffer') : crypto.createHash('sha256').update(text).digest();

/** Where each of a UUID's 16 bytes starts in its text (`8-4-4-4-12` hex digits). */
const UUID_BYTE_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34] as const;
/** A hex digit's value by its character code (−1: not a hex digit). */
const HEX_VALUE = new Int8Array(128).fill(-1);
[...'0123456789abcdef'].forEach((c, v) => (HEX_VALUE[c.charCodeAt(0)] = HEX_VALUE[c.toUpperCase().charCodeAt(0)] = v));

/** Writes the 16 bytes of `id` at `to` if it is a UUID (true), else returns false. */
function uuidBytes(id: string, out: Uint8Array, to: number): boolean {
  if (id.length !== 36 || id[8] !== '-' || id[13] !== '-' || id[18] !== '-' || id[23] !== '-') return false;
  for (let j = 0; j < 16; j++) {
    const at = UUID_BYTE_AT[j] as number;
    const hi = id.charCodeAt(at);
    const lo = id.charCodeAt(at + 1);
    const h = hi < 128 ? (HEX_VALUE[hi] as number) : -1;
    const l = lo < 128 ? (HEX_VALUE[lo] as number) : -1;
    if (h < 0 || l < 0) return false;
    out[to + j] = (h << 4) | l;
  }
  return true;
}

/**
 * The seat keys of player ids: 96-bit keyed pseudonyms ({@link SEAT_KEY_BYTES} bytes each, in
 * order), the same for an id on every instance that shares the key, which cannot be inverted or
 * recomputed without it. Tavern's player ids are random UUIDs: a UUID's key is its 16 bytes
 * encrypted with AES-128 under `aesKey` (a pseudorandom permutation, so distinct ids never collide
 * before the cut), truncated to 96 bits (so even the key's holder cannot decrypt it back), and one
 * cipher call covers the whole batch. Any other id takes the first 96 bits of SHA-256 over
 * `shaKey` and the id. Ids that differ only in the case of their hex digits share a key (Tavern's
 * are lowercase). The batch is what makes this cheap: a SHA-256 per id cost four times as much
 * (`bench/RESULTS.md`).
 *
 * @example
 * const bytes = seatKeyBytes(aesKey, 'secret', [crypto.randomUUID(), 'p1']); // 24 bytes: two keys
 */
export function seatKeyBytes(aesKey: Uint8Array, shaKey: string, ids: readonly string[]): Buffer {
  const keys = Buffer.allocUnsafe(ids.length * SEAT_KEY_BYTES);
  const blocks = Buffer.allocUnsafe(ids.length * 16);
  const uuids: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as string;
    if (uuidBytes(id, blocks, uuids.length * 16)) uuids.push(i);
    else sha256(`${shaKey}:${id}`).copy(keys, i * SEAT_KEY_BYTES, 0, SEAT_KEY_BYTES);
  }
  if (uuids.length === 0) return keys;
  const cipher = crypto.createCipheriv('aes-128-ecb', aesKey, null).setAutoPadding(false);
  const out = Buffer.concat([cipher.update(blocks.subarray(0, uuids.length * 16)), cipher.final()]);
  for (let k = 0; k < uuids.length; k++) {
    const to = (uuids[k] as number) * SEAT_KEY_BYTES;
    for (let b = 0; b < SEAT_KEY_BYTES; b++) keys[to + b] = out[k * 16 + b] as number;
  }
  return keys;
}

/**
 * {@link seatKeyBytes} as the seats of facts: each key's hex (24 digits).
 *
 * @example
 * const [key] = seatKeys(aesKey, 'secret', [crypto.randomUUID()]);
 */
export function seatKeys(aesKey: Uint8Array, shaKey: string, ids: readonly string[]): string[] {
  const bytes = seatKeyBytes(aesKey, shaKey, ids);
  return ids.map((_, i) => bytes.toString('hex', i * SEAT_KEY_BYTES, (i + 1) * SEAT_KEY_BYTES));
}

/**
 * @example
 * const recorder = new DemandRecorder({ store: stores.demand, clock, timers, key });
 * recorder.attach(matchmaker.hub);
 * recorder.request({ namespaceId, at, kind: 'find', gameMode: 'default', region: 'eu', party: 1, outcome: 'ok', waitMs: 12, playerIds });
 * await recorder.close();
 */
export class DemandRecorder {
  readonly #o: DemandRecorderOptions;
  /** The AES key of {@link seatKeys}, derived from the options' key. */
  readonly #aesKey: Uint8Array;
  /**
   * What the hot path buffers until a flush, flat: a request is its values in a row, a decision's
   * events {@link EVENTS} and the events; times are offsets from {@link #base} (small integers,
   * where a timestamp is a boxed number). So a find leaves no object of its own behind for the
   * flush to hold, and the two buffers are reused, so they grow once. Measured side by side with
   * recording off (`npm run bench -- http --side-by-side`): a record object per find held until
   * the flush 0.947–0.964×, this 0.962–0.968× (the machine's noise is about ±1 %).
   */
  #pending: unknown[] = [];
  /** Values in {@link #pending} (its slots beyond are free). */
  #count = 0;
  /** The other buffer, emptied by the last flush: the two are reused, so they grow once. */
  #spare: unknown[] = [];
  #base = 0;
  /** What a failed write left to retry. */
  #unwritten: Unwritten = { facts: [], runs: [] };
  #cancel: (() => void) | undefined;
  #flushing: Promise<void> | undefined;
  #closed = false;
  /** Lobbies this instance saw created: their game mode and region (ready and stopped facts carry them). */
  readonly #lobbies = new Map<string, { readonly gameMode: string; readonly region: string }>();
  /** Facts dropped because the store kept failing and the buffer was full. */
  dropped = 0;

  constructor(options: DemandRecorderOptions) {
    this.#o = options;
    this.#aesKey = new Uint8Array(crypto.hkdfSync('sha256', options.key, '', 'tavern demand seat keys', 16));
  }

  /** Records the seat and lobby events of every decision the hub publishes; returns the unsubscribe. */
  attach(hub: EventHub): () => void {
    return hub.subscribe((events) => {
      for (const e of events) {
        if (RECORDED_EVENTS.has(e.type)) {
          if (this.#closed) return;
          this.#pending[this.#count++] = EVENTS;
          this.#pending[this.#count++] = events;
          this.#schedule();
          return;
        }
      }
    });
  }

  /** Records a request's answer (never waits, never throws). */
  request(r: RequestRecord): void {
    if (this.#closed) return;
    const b = this.#pending;
    let n = this.#count;
    if (n === 0) this.#base = r.at;
    const ids = r.playerIds;
    // Its values in the order `#take` reads them; one player as its id (in the state anyway), none as undefined.
    b[n++] = r.namespaceId;
    b[n++] = r.at - this.#base;
    b[n++] = r.kind;
    b[n++] = r.party;
    b[n++] = r.outcome;
    b[n++] = r.waitMs;
    b[n++] = ids.length === 1 ? ids[0] : ids.length === 0 ? undefined : ids;
    b[n++] = r.gameMode;
    b[n++] = r.region;
    b[n++] = r.gates;
    b[n++] = r.seatReady;
    this.#count = n;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#cancel === undefined) this.#cancel = this.#o.timers.after(this.#o.flushEveryMs ?? 1_000, () => void this.flush());
  }

  /**
   * Takes up to `room` items from the buffer at `i` (times from `base`): events as facts onto
   * `facts`, requests as columns, one per namespace, onto `runs`. Their raw player ids become seat
   * keys in one {@link seatKeyBytes} call: the same on every instance sharing the key, so a session
   * links to its request wherever it ran. Returns where the next item starts.
   */
  #take(buffer: readonly unknown[], base: number, i: number, count: number, room: number, facts: DemandFact[], runs: DemandRequestColumns[]): number {
    const made = facts.length;
    const byNamespace = new Map<string, Run>();
    for (let n = 0; n < room && i < count; n++) {
      if (buffer[i] === EVENTS) {
        for (const e of buffer[i + 1] as readonly MatchEvent[]) this.#eventFact(e, facts);
        i += 2;
        continue;
      }
      const namespaceId = buffer[i] as string;
      let run = byNamespace.get(namespaceId);
      if (run === undefined) {
        run = { namespaceId, base, numbers: [], words: [], index: new Map(), ids: [] };
        byNamespace.set(namespaceId, run);
      }
      const players = buffer[i + 6] as string | readonly string[] | undefined;
      const flags = requestFlags(buffer[i + 9] as RequestRecord['gates'], buffer[i + 10] as boolean | undefined);
      let seats = 0;
      if (typeof players === 'string') {
        run.ids.push(players);
        seats = 1;
      } else if (players !== undefined) {
        for (const id of players) run.ids.push(id);
        seats = players.length;
      }
      run.numbers.push(
        buffer[i + 1] as number, wordOf(run, buffer[i + 2] as string), wordOf(run, buffer[i + 7] as string | undefined), wordOf(run, buffer[i + 8] as string | undefined),
        buffer[i + 3] as number, wordOf(run, buffer[i + 4] as string), buffer[i + 5] as number, seats, flags,
      );
      i += REQUEST_VALUES;
    }
    const ids: string[] = [];
    for (let f = made; f < facts.length; f++) {
      const fact = facts[f] as DemandFact;
      if (fact.type === 'seat') ids.push(fact.seat);
    }
    for (const run of byNamespace.values()) for (const id of run.ids) ids.push(id);
    const keys = seatKeyBytes(this.#aesKey, this.#o.key, ids);
    let k = 0;
    for (let f = made; f < facts.length; f++) {
      const fact = facts[f] as DemandFact;
      // Made by `#eventFact` for this batch: its to rewrite.
      if (fact.type === 'seat') {
        (fact as { seat: string }).seat = keys.toString('hex', k * SEAT_KEY_BYTES, (k + 1) * SEAT_KEY_BYTES);
        k += 1;
      }
    }
    for (const { namespaceId, numbers, words, ids: seated } of byNamespace.values()) {
      // An index store, not `push`: TurboFan's inlined push took the empty arrays for small-integer
      // ones and deoptimized `#take`, which was compiled three times (~30 ms each) instead of once.
      runs[runs.length] = { namespaceId, base, numbers, words, seats: keys.subarray(k * SEAT_KEY_BYTES, (k += seated.length) * SEAT_KEY_BYTES) };
    }
    return i;
  }

  #eventFact(e: MatchEvent, out: DemandFact[]): void {
    switch (e.type) {
      case 'lobby-created': {
        const { lobby } = e;
        // A lobby stopped through another instance is never deleted here: the map is bounded instead.
        if (this.#lobbies.size >= MAX_KNOWN_LOBBIES) this.#lobbies.clear();
        this.#lobbies.set(lobby.id, { gameMode: lobby.gameMode, region: lobby.region });
        out.push({ type: 'lobby', namespaceId: lobby.namespaceId, at: e.at, lobbyId: lobby.id, step: 'created', gameMode: lobby.gameMode, region: lobby.region });
        return;
      }
      case 'lobby-ready':
      case 'lobby-stopping':
      case 'lobby-stopped': {
        const where = this.#lobbies.get(e.lobbyId);
        if (e.type === 'lobby-stopped') this.#lobbies.delete(e.lobbyId);
        const base = { type: 'lobby', namespaceId: e.namespaceId, at: e.at, lobbyId: e.lobbyId, ...where } as const;
        if (e.type === 'lobby-ready') out.push({ ...base, step: 'ready' });
        else if (e.type === 'lobby-stopping') out.push({ ...base, step: 'stopping', reason: e.reason });
        else out.push({ ...base, step: 'stopped', reason: e.reason, failed: e.failed });
        return;
      }
      case 'player-connected':
        // The raw id until `#take` keys it.
        out.push({ type: 'seat', namespaceId: e.namespaceId, at: e.at, seat: e.playerId, step: 'connected' });
        return;
      case 'player-removed':
        out.push({ type: 'seat', namespaceId: e.namespaceId, at: e.at, seat: e.playerId, step: 'removed' });
        return;
      case 'captcha-verified':
      case 'player-reserved':
      case 'lobby-closed-set':
      case 'seat-failed':
      case 'seat-ready':
      case 'version-published':
        return;
    }
  }

  /** Writes what is buffered now (in batches); resolves once written or failed (then kept to retry). */
  flush(): Promise<void> {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#flushing ??= this.#write().finally(() => {
      this.#flushing = undefined;
      if (this.#count > 0 && !this.#closed) this.#cancel ??= this.#o.timers.after(this.#o.flushEveryMs ?? 1_000, () => void this.flush());
    });
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const pending = this.#pending;
    const count = this.#count;
    const base = this.#base;
    this.#pending = this.#spare;
    this.#count = 0;
    try {
      await this.#writeFrom(pending, count, base);
    } finally {
      // Its slots no longer hold what they held (ids, events) once written.
      pending.fill(undefined, 0, count);
      this.#spare = pending;
    }
  }

  async #writeFrom(pending: readonly unknown[], count: number, base: number): Promise<void> {
    let { facts, runs } = this.#unwritten;
    this.#unwritten = { facts: [], runs: [] };
    const batch = Math.max(1, this.#o.batch ?? 1_000);
    let next = 0;
    while (facts.length > 0 || runs.length > 0 || next < count) {
      // A batch is made and written in one turn of the event loop, so what it makes dies young.
      if (facts.length < batch && runs.length === 0) next = this.#take(pending, base, next, count, batch - facts.length, facts, runs);
      const write = facts.length > batch ? facts.slice(0, batch) : facts;
      let size = write.length;
      let taken = 0;
      while (taken < runs.length && size < batch) size += requestsIn(runs[taken++] as DemandRequestColumns);
      const columns = taken === runs.length ? runs : runs.slice(0, taken);
      try {
        await this.#o.store.appendDemand(write, columns);
      } catch (error) {
        this.#o.onError?.(error);
        // The rest of the buffer joins what is left, keyed: no raw id is kept across flushes.
        while (next < count) next = this.#take(pending, base, next, count, batch, facts, runs);
        this.#keep(facts, runs);
        if (!this.#closed) this.#cancel ??= this.#o.timers.after(this.#o.flushEveryMs ?? 1_000, () => void this.flush());
        return;
      }
      facts = write === facts ? [] : facts.slice(batch);
      runs = columns === runs ? [] : runs.slice(taken);
      if (facts.length > 0 || runs.length > 0 || next < count) await yieldToLoop();
    }
  }

  /** Keeps what a failed write left, at most `maxBuffered` facts: the oldest of each kind go first (counted). */
  #keep(facts: DemandFact[], runs: DemandRequestColumns[]): void {
    const max = this.#o.maxBuffered ?? 200_000;
    let excess = facts.length + runs.reduce((n, run) => n + requestsIn(run), 0) - max;
    if (excess <= 0) {
      this.#unwritten = { facts, runs };
      return;
    }
    this.dropped += excess;
    const kept: DemandRequestColumns[] = [];
    for (const run of runs) {
      const n = requestsIn(run);
      const drop = Math.min(n, excess);
      excess -= drop;
      if (drop < n) kept.push(drop === 0 ? run : withoutFirst(run, drop));
    }
    this.#unwritten = { facts: facts.slice(excess), runs: kept };
  }

  /** Deletes facts older than the retention; returns how many. */
  prune(): Promise<number> {
    return this.#o.store.pruneDemand(this.#o.clock.now() - (this.#o.retentionMs ?? DEFAULT_DEMAND_RETENTION_MS));
  }

  /** Writes what is buffered and stops recording. */
  async close(): Promise<void> {
    await this.#flushing;
    await this.flush();
    this.#closed = true;
    this.#cancel?.();
    this.#cancel = undefined;
  }
}
