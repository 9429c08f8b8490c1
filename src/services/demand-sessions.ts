/**
 * Requests joined with their seats' sessions, in one pass over the facts in time order: a request
 * is handed over once its seats are removed (or {@link OPEN_SESSION_HORIZON_MS} after it), so only
 * the sessions open at a time are held, whatever the window's length. The export and the
 * calibration's observation (`demand.ts`) both read the recording through it.
 */
import type { DemandFact, DemandRequestFact, DemandStore } from '../io/demand.js';

/** `[from, to)` in epoch ms. */
export interface DemandWindow {
  readonly from: number;
  readonly to: number;
}

/** Facts per read. */
const PAGE = 5_000;

/** Lobby facts are read from this long before the window, so a lobby created before it still counts its hours and its region. */
export const LOBBY_LOOKBACK_MS = 24 * 60 * 60 * 1000;

/**
 * How long a request waits for its seats' sessions to end: one still open this long after its
 * request (by the facts' time) is counted as still open (up to now). A player's session is minutes
 * to hours; the bound keeps the memory to this much of the recording.
 */
export const OPEN_SESSION_HORIZON_MS = LOBBY_LOOKBACK_MS;

/**
 * The facts of a namespace in the window, in time order, a page (one store read) at a time.
 *
 * @example
 * for await (const page of factPages(store, namespaceId, { from, to })) console.log(page.length);
 */
export async function* factPages(store: DemandStore, namespaceId: string, window: DemandWindow): AsyncGenerator<readonly DemandFact[]> {
  let after: { at: number; seq: number } | undefined;
  for (;;) {
    const page = await store.readDemand(namespaceId, window, after, PAGE);
    if (page.length > 0) yield page.map((r) => r.fact);
    const last = page[page.length - 1];
    if (last === undefined || page.length < PAGE) return;
    after = { at: last.fact.at, seq: last.seq };
  }
}

/**
 * Every fact of a namespace in the window, in time order, read a page at a time.
 *
 * @example
 * for await (const f of facts(store, namespaceId, { from, to })) console.log(f.type);
 */
export async function* facts(store: DemandStore, namespaceId: string, window: DemandWindow): AsyncGenerator<DemandFact> {
  for await (const page of factPages(store, namespaceId, window)) yield* page;
}

/** A seat's session as the facts tell it. */
export interface Session {
  connectedAt?: number;
  removedAt?: number;
}

interface Waiting {
  readonly request: DemandRequestFact;
  /** Its seats not removed yet. */
  open: number;
}

/** Receives a request with the sessions of its seats (valid during the call only). */
export type SessionsOut = (request: DemandRequestFact, seats: ReadonlyMap<string, Session>) => void;

/**
 * The requests of `window` with their seats' sessions, fed one fact at a time in time order (facts
 * before the window or of seats it never saw are ignored); {@link SessionTracker.end} hands over
 * the rest.
 *
 * @example
 * const t = new SessionTracker(window);
 * for (const f of page) t.add(f, (request, seats) => console.log(request.at, seats.size));
 * t.end(out);
 */
export class SessionTracker {
  readonly #window: DemandWindow;
  readonly #seats = new Map<string, Session>();
  readonly #bySeat = new Map<string, Waiting>();
  #queue: Waiting[] = [];
  #head = 0;

  constructor(window: DemandWindow) {
    this.#window = window;
  }

  add(f: DemandFact, out: SessionsOut): void {
    if (f.type === 'request') {
      if (f.at >= this.#window.from && f.at < this.#window.to) {
        const w: Waiting = { request: f, open: f.seats.length };
        this.#queue.push(w);
        for (const k of f.seats) {
          this.#seats.set(k, {});
          this.#bySeat.set(k, w);
        }
      }
    } else if (f.type === 'seat') {
      const s = this.#seats.get(f.seat);
      const w = this.#bySeat.get(f.seat);
      if (s !== undefined && w !== undefined) {
        if (f.step === 'connected') s.connectedAt ??= f.at;
        else if (s.removedAt === undefined) {
          s.removedAt = f.at;
          w.open -= 1;
        }
      }
    }
    this.#ready(f.at, out);
  }

  /** Hands over every request still held. */
  end(out: SessionsOut): void {
    this.#ready(Number.POSITIVE_INFINITY, out);
  }

  #ready(until: number, out: SessionsOut): void {
    for (; this.#head < this.#queue.length; this.#head += 1) {
      const w = this.#queue[this.#head] as Waiting;
      if (w.open > 0 && w.request.at + OPEN_SESSION_HORIZON_MS > until) break;
      out(w.request, this.#seats);
      for (const k of w.request.seats) {
        this.#seats.delete(k);
        this.#bySeat.delete(k);
      }
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }
}
