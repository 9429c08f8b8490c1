/**
 * Demand recording, off the hot path: a request's answer and the matchmaker's events are pushed
 * onto an in-memory buffer (no await, no I/O), and a timer flushes the buffer to the
 * {@link DemandStore} in batches. Player ids become keyed pseudonyms in the flush ({@link seatKeys}),
 * so no raw id is ever stored; client addresses are never recorded at all.
 *
 * A flush shares the event loop with the requests, so it works in batches and lets the requests
 * waiting meanwhile run between them: at the http benchmark's ~13k finds/s a 250 ms buffer is
 * ~3,300 facts, which keyed, encoded and written in one go held the loop for 5–18 ms per flush
 * (the answers caught behind it made the server's p99 several ms worse). Each batch is made and
 * written within one turn, so its facts die young (kept across turns, they were promoted).
 */
import * as crypto from 'node:crypto';
import type { MatchEvent } from '../core/events.js';
import type { DemandFact, DemandRequestFact, DemandStore } from '../io/demand.js';
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
  /** Facts per write (default 1,000): each batch is made and written in one turn of the event loop. */
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

/** Lets whatever is waiting on the event loop (requests) run before going on. */
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** SHA-256, one shot where Node has it (20.12+: a third of `createHash`'s cost). */
const sha256 = (text: string): string =>
  typeof crypto.hash === 'function' ? crypto.hash('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');

/** Hex digits a seat key keeps (96 bits): too few to invert, enough that no two seats share one. */
const SEAT_KEY_HEX = 24;

/** Looks like a UUID (`8-4-4-4-12`): its digits are checked only if the batch's hex does not decode. */
const isUuidShaped = (id: string): boolean => id.length === 36 && id[8] === '-' && id[13] === '-' && id[18] === '-' && id[23] === '-';
const isUuid = (id: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);

/**
 * The seat keys of player ids: 96-bit keyed pseudonyms, the same for an id on every instance that
 * shares the key, which cannot be inverted or recomputed without it. Tavern's player ids are
 * random UUIDs: a UUID's key is its 16 bytes encrypted with AES-128 under `aesKey` (a
 * pseudorandom permutation, so distinct ids never collide before the cut), truncated to 96 bits
 * (so even the key's holder cannot decrypt it back), and one cipher call covers the whole batch.
 * Any other id takes the first 96 bits of SHA-256 over `shaKey` and the id. Ids that differ only
 * in the case of their hex digits share a key (Tavern's are lowercase). The batch is what makes
 * this cheap: a SHA-256 per id cost four times as much (`bench/RESULTS.md`).
 *
 * @example
 * const keys = seatKeys(aesKey, 'secret', [crypto.randomUUID(), 'p1']); // two keys of 24 hex digits
 */
export const seatKeys = (aesKey: Uint8Array, shaKey: string, ids: readonly string[]): string[] =>
  keysWhere(isUuidShaped, aesKey, shaKey, ids) ?? (keysWhere(isUuid, aesKey, shaKey, ids) as string[]);

/** {@link seatKeys}, taking the ids `uuid` accepts as UUIDs; undefined if one of them is not hex after all. */
function keysWhere(uuid: (id: string) => boolean, aesKey: Uint8Array, shaKey: string, ids: readonly string[]): string[] | undefined {
  const keys = new Array<string>(ids.length);
  const uuids: number[] = [];
  let hex = '';
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as string;
    if (uuid(id)) {
      uuids.push(i);
      hex += id.slice(0, 8) + id.slice(9, 13) + id.slice(14, 18) + id.slice(19, 23) + id.slice(24);
    } else keys[i] = sha256(`${shaKey}:${id}`).slice(0, SEAT_KEY_HEX);
  }
  if (uuids.length === 0) return keys;
  const bytes = Buffer.from(hex, 'hex');
  // Hex decoding stops at the first pair that is not hex.
  if (bytes.length !== uuids.length * 16) return undefined;
  const cipher = crypto.createCipheriv('aes-128-ecb', aesKey, null).setAutoPadding(false);
  const out = Buffer.concat([cipher.update(bytes), cipher.final()]).toString('hex');
  uuids.forEach((i, k) => (keys[i] = out.slice(k * 32, k * 32 + SEAT_KEY_HEX)));
  return keys;
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
  /** Facts made from pending items that a failed write left to retry. */
  #unwritten: DemandFact[] = [];
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
    // Its values in the order `#factsAt` reads them; one player as its id (in the state anyway), none as undefined.
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
   * Replaces the raw player ids of the facts made from `from` on by their seat keys, in one
   * {@link seatKeys} call: the same on every instance sharing the key, so a session links to its
   * request wherever it ran.
   */
  #keySeats(facts: DemandFact[], from: number): void {
    const ids: string[] = [];
    for (let i = from; i < facts.length; i++) {
      const f = facts[i] as DemandFact;
      if (f.type === 'request') ids.push(...f.seats);
      else if (f.type === 'seat') ids.push(f.seat);
    }
    if (ids.length === 0) return;
    const keys = seatKeys(this.#aesKey, this.#o.key, ids);
    let k = 0;
    for (let i = from; i < facts.length; i++) {
      const f = facts[i] as DemandFact;
      // Both were made by `#factsAt` for this batch: theirs to rewrite.
      if (f.type === 'request') {
        const seats = f.seats as string[];
        for (let j = 0; j < seats.length; j++) seats[j] = keys[k++] as string;
      } else if (f.type === 'seat') (f as { seat: string }).seat = keys[k++] as string;
    }
  }

  /** The facts of the buffered item at `i` (times from `base`); returns where the next item starts. */
  #factsAt(buffer: readonly unknown[], base: number, i: number, out: DemandFact[]): number {
    if (buffer[i] === EVENTS) {
      for (const e of buffer[i + 1] as readonly MatchEvent[]) this.#eventFact(e, out);
      return i + 2;
    }
    const players = buffer[i + 6] as string | readonly string[] | undefined;
    // Assigned member by member: spreads of optional members cost an object each, per request.
    const fact: { -readonly [K in keyof DemandRequestFact]: DemandRequestFact[K] } = {
      type: 'request',
      namespaceId: buffer[i] as string,
      at: base + (buffer[i + 1] as number),
      kind: buffer[i + 2] as RequestRecord['kind'],
      party: buffer[i + 3] as number,
      outcome: buffer[i + 4] as string,
      waitMs: buffer[i + 5] as number,
      // Raw ids until `#keySeats` (a copy: the array is rewritten).
      seats: players === undefined ? [] : typeof players === 'string' ? [players] : [...players],
    };
    const gameMode = buffer[i + 7] as string | undefined;
    const region = buffer[i + 8] as string | undefined;
    const gates = buffer[i + 9] as RequestRecord['gates'];
    const seatReady = buffer[i + 10] as boolean | undefined;
    if (gameMode !== undefined) fact.gameMode = gameMode;
    if (region !== undefined) fact.region = region;
    if (gates !== undefined) fact.gates = gates;
    if (seatReady !== undefined) fact.seatReady = seatReady;
    out.push(fact);
    return i + REQUEST_VALUES;
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
    let facts = this.#unwritten;
    this.#unwritten = [];
    const batch = Math.max(1, this.#o.batch ?? 1_000);
    let next = 0;
    while (facts.length > 0 || next < count) {
      // A batch is made and written in one turn of the event loop, so its facts die young.
      const made = facts.length;
      while (facts.length < batch && next < count) next = this.#factsAt(pending, base, next, facts);
      this.#keySeats(facts, made);
      const write = facts.length > batch ? facts.slice(0, batch) : facts;
      try {
        await this.#o.store.appendDemand(write);
      } catch (error) {
        this.#o.onError?.(error);
        const rest = facts.length;
        while (next < count) next = this.#factsAt(pending, base, next, facts);
        this.#keySeats(facts, rest);
        const max = this.#o.maxBuffered ?? 200_000;
        this.dropped += Math.max(0, facts.length - max);
        this.#unwritten = facts.slice(Math.max(0, facts.length - max));
        if (!this.#closed) this.#cancel ??= this.#o.timers.after(this.#o.flushEveryMs ?? 1_000, () => void this.flush());
        return;
      }
      facts = write === facts ? [] : facts.slice(batch);
      if (facts.length > 0 || next < count) await yieldToLoop();
    }
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
