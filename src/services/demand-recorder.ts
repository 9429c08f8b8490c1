/**
 * Demand recording, off the hot path: a request's answer and the matchmaker's events are pushed
 * onto an in-memory buffer (no await, no I/O), and a timer flushes the buffer to the
 * {@link DemandStore} in batches. Player ids become keyed digests in the flush, so no raw id is
 * ever stored; client addresses are never recorded at all.
 */
import * as crypto from 'node:crypto';
import type { MatchEvent } from '../core/events.js';
import type { DemandFact, DemandRequestFact, DemandStore } from '../io/demand.js';
import type { Clock, Timers } from '../io/index.js';
import type { EventHub } from './hub.js';

/** Seven days: how long facts are kept by default (`TAVERN_DEMAND_RETENTION`). */
export const DEFAULT_DEMAND_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** A request as the edge saw it (player ids raw: the flush digests them). */
export type RequestRecord = Omit<DemandRequestFact, 'type' | 'seats'> & { readonly playerIds: readonly string[] };

export interface DemandRecorderOptions {
  readonly store: DemandStore;
  readonly clock: Clock;
  readonly timers: Timers;
  /** The key of the player-id digests (a server secret: the digests cannot be reversed or recomputed without it). */
  readonly key: string;
  /** How often the buffer is written (default 1 s). */
  readonly flushEveryMs?: number;
  /** Facts per write (default 5,000). */
  readonly batch?: number;
  /** Facts held at most while the store is failing; older ones are dropped (counted) beyond it (default 200,000). */
  readonly maxBuffered?: number;
  readonly retentionMs?: number;
  /** A flush or a prune failed (the facts stay buffered, up to `maxBuffered`). */
  readonly onError?: (error: unknown) => void;
}

/** A buffered item: the hot path stores what it has, the flush turns it into facts. */
type Pending =
  | { readonly request: RequestRecord }
  | { readonly events: readonly MatchEvent[] };

/** The events a recorder keeps facts of. */
const RECORDED_EVENTS: ReadonlySet<MatchEvent['type']> = new Set(['lobby-created', 'lobby-ready', 'lobby-stopped', 'player-connected', 'player-removed']);

/** Lobbies whose mode and region a recorder remembers at most (their created facts hold them too). */
const MAX_KNOWN_LOBBIES = 100_000;

/** SHA-256, one shot where Node has it (20.12+: a third of `createHash`'s cost). */
const sha256 = (text: string): string =>
  typeof crypto.hash === 'function' ? crypto.hash('sha256', text, 'base64url') : crypto.createHash('sha256').update(text).digest('base64url');

/**
 * @example
 * const recorder = new DemandRecorder({ store: stores.demand, clock, timers, key });
 * recorder.attach(matchmaker.hub);
 * recorder.request({ namespaceId, at, kind: 'find', gameMode: 'default', region: 'eu', party: 1, outcome: 'ok', waitMs: 12, playerIds });
 * await recorder.close();
 */
export class DemandRecorder {
  readonly #o: DemandRecorderOptions;
  #pending: Pending[] = [];
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
  }

  /** Records the seat and lobby events of every decision the hub publishes; returns the unsubscribe. */
  attach(hub: EventHub): () => void {
    return hub.subscribe((events) => {
      for (const e of events) {
        if (RECORDED_EVENTS.has(e.type)) {
          this.#push({ events });
          return;
        }
      }
    });
  }

  /** Records a request's answer (never waits, never throws). */
  request(record: RequestRecord): void {
    this.#push({ request: record });
  }

  #push(item: Pending): void {
    if (this.#closed) return;
    this.#pending.push(item);
    if (this.#cancel === undefined) this.#cancel = this.#o.timers.after(this.#o.flushEveryMs ?? 1_000, () => void this.flush());
  }

  /**
   * A player's seat key: SHA-256 of the server's secret key and the player id (22 characters), the
   * same on every instance sharing the key, so a session links to its request wherever it ran.
   */
  #digest(playerId: string): string {
    return sha256(`${this.#o.key}:${playerId}`).slice(0, 22);
  }

  #facts(item: Pending, out: DemandFact[]): void {
    if ('request' in item) {
      const r = item.request;
      // Assigned member by member: spreads of optional members cost an object each, per request.
      const fact: { -readonly [K in keyof DemandRequestFact]: DemandRequestFact[K] } = {
        type: 'request', namespaceId: r.namespaceId, at: r.at, kind: r.kind, party: r.party, outcome: r.outcome, waitMs: r.waitMs, seats: r.playerIds.map((id) => this.#digest(id)),
      };
      if (r.gameMode !== undefined) fact.gameMode = r.gameMode;
      if (r.region !== undefined) fact.region = r.region;
      if (r.gates !== undefined) fact.gates = r.gates;
      if (r.seatReady !== undefined) fact.seatReady = r.seatReady;
      out.push(fact);
      return;
    }
    for (const e of item.events) this.#eventFact(e, out);
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
      case 'lobby-stopped': {
        const where = this.#lobbies.get(e.lobbyId);
        if (e.type === 'lobby-stopped') this.#lobbies.delete(e.lobbyId);
        const base = { type: 'lobby', namespaceId: e.namespaceId, at: e.at, lobbyId: e.lobbyId, ...where } as const;
        out.push(e.type === 'lobby-ready' ? { ...base, step: 'ready' } : { ...base, step: 'stopped', reason: e.reason, failed: e.failed });
        return;
      }
      case 'player-connected':
        out.push({ type: 'seat', namespaceId: e.namespaceId, at: e.at, seat: this.#digest(e.playerId), step: 'connected' });
        return;
      case 'player-removed':
        out.push({ type: 'seat', namespaceId: e.namespaceId, at: e.at, seat: this.#digest(e.playerId), step: 'removed' });
        return;
      case 'captcha-verified':
      case 'player-reserved':
      case 'lobby-closed-set':
      case 'lobby-stopping':
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
      if (this.#pending.length > 0 && !this.#closed) this.#cancel ??= this.#o.timers.after(this.#o.flushEveryMs ?? 1_000, () => void this.flush());
    });
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const pending = this.#pending;
    this.#pending = [];
    const facts = this.#unwritten;
    this.#unwritten = [];
    for (const item of pending) this.#facts(item, facts);
    const batch = Math.max(1, this.#o.batch ?? 5_000);
    for (let i = 0; i < facts.length; i += batch) {
      try {
        await this.#o.store.appendDemand(facts.slice(i, i + batch));
      } catch (error) {
        this.#o.onError?.(error);
        const left = facts.slice(i);
        const max = this.#o.maxBuffered ?? 200_000;
        this.dropped += Math.max(0, left.length - max);
        this.#unwritten = left.slice(Math.max(0, left.length - max));
        if (!this.#closed) this.#cancel ??= this.#o.timers.after(this.#o.flushEveryMs ?? 1_000, () => void this.flush());
        return;
      }
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
