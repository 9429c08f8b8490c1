/**
 * Group commit for the database-backed match stores: `transact` calls that arrive while a commit
 * is due are decided one after another on the same base world (each sees what the previous ones
 * decided) and written in one database transaction. Each caller still gets its own decision, and
 * only once the whole group is committed; a callback that throws fails alone and changes nothing.
 */
import type { Decision } from '../core/tx.js';
import type { World } from '../core/world.js';
import type { LobbyStateWrite, Transaction } from '../io/index.js';

type Committed<T> = { readonly result: T; readonly decision?: Decision<unknown> };

/** A queued `transact` call. */
export interface Pending {
  readonly decide: (world: World) => Transaction<unknown>;
  readonly resolve: (committed: Committed<unknown>) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { readonly ok: true; readonly t: Transaction<unknown> } | { readonly ok: false; readonly error: unknown };

/** A group decided: the world it leads to, the lobby states its calls write (in order), and how to settle the calls once committed. */
export interface DecidedGroup {
  readonly world: World;
  readonly states: readonly LobbyStateWrite[];
  readonly settle: () => void;
}

/**
 * The decisions of a group, decided in order on `base`, the world they lead to and the lobby
 * states they write. A store writes the states first, then the rows the world changed: a state
 * whose lobby a later call of the group stops is deleted by that change.
 *
 * @example
 * const group = decideGroup(base, queue);
 * persist(base, group.world, group.states); // in the database transaction
 * group.settle();                           // after it committed
 */
export const decideGroup = (base: World, queue: readonly Pending[]): DecidedGroup => {
  let world = base;
  const outcomes: Outcome[] = [];
  const states: LobbyStateWrite[] = [];
  for (const pending of queue) {
    try {
      const t = pending.decide(world);
      if (t.decision !== undefined) world = t.decision.world;
      if (t.lobbyState !== undefined) states.push(t.lobbyState);
      outcomes.push({ ok: true, t });
    } catch (error) {
      outcomes.push({ ok: false, error });
    }
  }
  return {
    world,
    states,
    settle: () => {
      for (const [i, pending] of queue.entries()) {
        const o = outcomes[i];
        if (o === undefined) continue;
        if (o.ok) pending.resolve(o.t);
        else pending.reject(o.error);
      }
    },
  };
};

/** What a flush did with its group: committed it (each call settled), or found the write lock taken. */
export type Flushed = 'committed' | 'busy';

/**
 * The queue of one store: `enqueue` adds a call and makes sure a flush is scheduled once the
 * current turn of the event loop (every request that arrived with this batch of I/O) is done.
 *
 * A flush that finds the database's write lock held by another connection (another process, or
 * the WAL checkpointer's rewind) answers `busy` instead of sleeping in SQLite's busy handler,
 * which would stop the event loop: the group is tried again `retryMs` later, with the calls that
 * arrived meanwhile, and fails once the lock has been held for `busyTimeoutMs`.
 *
 * @example
 * const group = new GroupQueue((queue) => store.commit(queue), { busyTimeoutMs: 10_000 });
 * return group.enqueue(decide);
 */
export class GroupQueue {
  #queue: Pending[] = [];
  #scheduled = false;
  /** When the current wait for the write lock began (`performance.now()`). */
  #busySince: number | undefined;
  readonly #flush: (queue: readonly Pending[]) => Flushed;
  readonly #busyTimeoutMs: number;
  readonly #retryMs: number;

  constructor(flush: (queue: readonly Pending[]) => Flushed, options: { readonly busyTimeoutMs?: number; readonly retryMs?: number } = {}) {
    this.#flush = flush;
    this.#busyTimeoutMs = options.busyTimeoutMs ?? 0;
    this.#retryMs = options.retryMs ?? 1;
  }

  enqueue<T>(decide: (world: World) => Transaction<T>): Promise<Committed<T>> {
    return new Promise<Committed<T>>((resolve, reject) => {
      this.#queue.push({ decide, resolve: resolve as (c: Committed<unknown>) => void, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.drain());
    });
  }

  /** Flushes what is queued now (also before the database closes); every call is settled, rejected or, while the lock is busy, queued again. */
  drain(): void {
    this.#scheduled = false;
    const queue = this.#queue;
    if (queue.length === 0) return;
    this.#queue = [];
    let flushed: Flushed;
    try {
      flushed = this.#flush(queue);
    } catch (error) {
      this.#busySince = undefined;
      for (const pending of queue) pending.reject(error);
      return;
    }
    if (flushed === 'committed') {
      this.#busySince = undefined;
      return;
    }
    const now = performance.now();
    this.#busySince ??= now;
    if (now - this.#busySince >= this.#busyTimeoutMs) {
      this.#busySince = undefined;
      const error = new Error(`the database stayed locked by another connection for ${this.#busyTimeoutMs} ms`);
      for (const pending of queue) pending.reject(error);
      return;
    }
    this.#queue = queue;
    this.#scheduled = true;
    setTimeout(() => this.drain(), this.#retryMs);
  }
}
