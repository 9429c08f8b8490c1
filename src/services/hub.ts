import type { MatchEvent } from '../core/events.js';

export type EventListener = (events: readonly MatchEvent[]) => void;

/**
 * Where committed decisions' events go, in commit order: analytics, seat waiters, the simulator's
 * metrics and trace. Listeners run synchronously; one that throws does not stop the others.
 *
 * @example
 * const off = hub.subscribe((events) => console.log(events.length));
 */
export class EventHub {
  readonly #listeners = new Set<EventListener>();
  readonly #onError: (error: unknown) => void;

  constructor(onError: (error: unknown) => void = (e) => queueMicrotask(() => { throw e; })) {
    this.#onError = onError;
  }

  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  publish(events: readonly MatchEvent[]): void {
    if (events.length === 0) return;
    for (const listener of this.#listeners) {
      try {
        listener(events);
      } catch (e) {
        this.#onError(e);
      }
    }
  }
}
