/**
 * Waiting for a seat's lobby to become ready (find/join/create into a starting lobby). The watch
 * subscribes to the matchmaker's hub *before* the request runs, so a `seat-ready` published
 * between the admission and the wait is not lost; it answers `MATCHMAKER_LOBBY_NOT_STARTED`
 * before the client's own 60 s timeout (Rivet left the request hanging, wire.md §8.2 #6, #7).
 */
import type { MatchError } from '../core/errors.js';
import type { MatchEvent } from '../core/events.js';
import type { Timers } from '../io/index.js';
import type { EventHub } from './hub.js';

type SeatEvent = Extract<MatchEvent, { type: 'seat-ready' | 'seat-failed' }>;

export type SeatOutcome =
  | { readonly kind: 'ready' }
  | { readonly kind: 'failed'; readonly error: MatchError }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'aborted' };

const outcomeOf = (e: SeatEvent): SeatOutcome => (e.type === 'seat-ready' ? { kind: 'ready' } : { kind: 'failed', error: e.error });

/** The open watches of each hub, fed by one subscription per hub (not one per request: most events are no seat's). */
const watchesOf = new WeakMap<EventHub, Set<SeatWatch>>();

const openWatches = (hub: EventHub): Set<SeatWatch> => {
  let open = watchesOf.get(hub);
  if (open === undefined) {
    const watches = new Set<SeatWatch>();
    hub.subscribe((events) => {
      for (const e of events) {
        if (e.type !== 'seat-ready' && e.type !== 'seat-failed') continue;
        for (const watch of watches) watch.hear(e);
      }
    });
    watchesOf.set(hub, watches);
    open = watches;
  }
  return open;
};

/**
 * @example
 * const watch = new SeatWatch(matchmaker.hub);
 * try {
 *   const outcome = await matchmaker.find(request);
 *   if (outcome.ok && !outcome.seat.ready) await watch.wait(playerId, timers, 50_000, signal);
 * } finally { watch.close(); }
 */
export class SeatWatch {
  /** Made on first use: most watches close without hearing anything (the seat was ready). */
  #seen: Map<string, SeatEvent> | undefined;
  #waiters: Map<string, (e: SeatEvent) => void> | undefined;
  readonly #open: Set<SeatWatch>;

  constructor(hub: EventHub) {
    this.#open = openWatches(hub);
    this.#open.add(this);
  }

  /** A seat event published while this watch is open. */
  hear(e: SeatEvent): void {
    const waiter = this.#waiters?.get(e.playerId);
    if (waiter !== undefined) waiter(e);
    else (this.#seen ??= new Map()).set(e.playerId, e);
  }

  /**
   * The seat's outcome: ready, failed (its lobby stopped), timeout after `ms`, or aborted. The hub
   * only hears this instance's decisions, so `poll` (when given) is asked every `pollMs` too: it
   * finds a lobby made ready through another instance sharing the store.
   */
  wait(
    playerId: string,
    timers: Timers,
    ms: number,
    signal: AbortSignal,
    poll?: { readonly everyMs: number; readonly check: () => Promise<SeatOutcome | undefined> },
  ): Promise<SeatOutcome> {
    const seen = this.#seen?.get(playerId);
    this.#seen = undefined;
    if (seen !== undefined) return Promise.resolve(outcomeOf(seen));
    if (signal.aborted) return Promise.resolve({ kind: 'aborted' });
    return new Promise<SeatOutcome>((resolve) => {
      let done = false;
      const cancels: (() => void)[] = [];
      const finish = (outcome: SeatOutcome): void => {
        if (done) return;
        done = true;
        this.#waiters?.delete(playerId);
        for (const cancel of cancels) cancel();
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onAbort = (): void => finish({ kind: 'aborted' });
      const schedule = (): void => {
        if (poll === undefined || done) return;
        cancels.push(timers.after(poll.everyMs, () => {
          poll.check().then((outcome) => (outcome === undefined ? schedule() : finish(outcome)), schedule);
        }));
      };
      (this.#waiters ??= new Map()).set(playerId, (e: SeatEvent) => finish(outcomeOf(e)));
      cancels.push(timers.after(ms, () => finish({ kind: 'timeout' })));
      signal.addEventListener('abort', onAbort, { once: true });
      schedule();
    });
  }

  close(): void {
    this.#open.delete(this);
    this.#seen = undefined;
    this.#waiters = undefined;
  }
}
