/**
 * The game proxy's route slots: HAProxy cannot add a backend without a reload, so its configuration
 * has a fixed number of backends (`lobby-slot-<n>`, one server each) and a route borrows one while
 * it is bound. This table says which route holds which slot and which slot is handed out next: the
 * free slot freed longest ago (never-used slots first, lowest first), so a slot just taken from a
 * stopping lobby, whose sessions may still be closing, is the last one reused.
 *
 * No I/O: the proxy (`proxy.ts`) asks and records; routes are named by their key (`diff.ts`'s
 * `routeKey`).
 */

/**
 * @example
 * const slots = new SlotTable(2);
 * slots.assign('http a.lobby.x') // 0
 * slots.assign('http b.lobby.x') // 1
 * slots.assign('http c.lobby.x') // undefined: full
 * slots.release('http a.lobby.x') // 0, handed out again once every other free slot was
 */
export class SlotTable {
  /** Slots at most (the backends in HAProxy's configuration). */
  readonly size: number;
  readonly #slotOf = new Map<string, number>();
  /** Free slots, the next one handed out first; a freed slot joins the end. */
  readonly #free: number[];

  constructor(size: number) {
    this.#free = Array.from({ length: size }, (_, i) => i);
    this.size = this.#free.length;
  }

  /** The slot `key` holds, if any. */
  slotOf(key: string): number | undefined {
    return this.#slotOf.get(key);
  }

  /** The slot `key` holds, else the next free slot, now held by it; undefined when every slot is held. */
  assign(key: string): number | undefined {
    const held = this.#slotOf.get(key);
    if (held !== undefined) return held;
    const slot = this.#free.shift();
    if (slot !== undefined) this.#slotOf.set(key, slot);
    return slot;
  }

  /** Frees the slot `key` holds (handed out again after every slot free now); the slot, or undefined when it held none. */
  release(key: string): number | undefined {
    const slot = this.#slotOf.get(key);
    if (slot === undefined) return undefined;
    this.#slotOf.delete(key);
    this.#free.push(slot);
    return slot;
  }

  /** Every held slot by its route's key, in the order they were taken. */
  held(): ReadonlyMap<string, number> {
    return this.#slotOf;
  }
}
