/**
 * The simulation's event queue: a 4-ary min-heap ordered by `(time, seq)`, where `seq` counts
 * insertions so events at the same time leave in the order they were pushed (the order is total, so
 * the heap's shape never shows). Four children per node halve the depth of a binary heap: a day at
 * scale keeps tens of thousands of events queued. Times are whole milliseconds, like the server's
 * clock (and cheap to write into the trace). The queue remembers the time of the last popped event
 * and refuses anything earlier: virtual time never goes back.
 */

/** One queued event with its virtual time and insertion number. */
export interface Scheduled<E> {
  readonly time: number;
  readonly seq: number;
  readonly event: E;
}

const before = <E>(a: Scheduled<E>, b: Scheduled<E>): boolean =>
  a.time < b.time || (a.time === b.time && a.seq < b.seq);

/**
 * A (time, seq)-ordered min-heap of events. Each instance owns its own counter and heap.
 *
 * @example
 * const q = new EventQueue<string>();
 * q.push(5, 'b');
 * q.push(1, 'a');
 * q.pop(); // { time: 1, seq: 1, event: 'a' }
 * q.push(0, 'late'); // throws RangeError: 0 is before the last popped time 1
 */
export class EventQueue<E> {
  readonly #heap: Scheduled<E>[] = [];
  #seq = 0;
  #last: number;

  /** @param start the initial virtual time; nothing may be pushed before it. */
  constructor(start = 0) {
    if (!Number.isFinite(start)) throw new RangeError(`start must be finite, got ${start}`);
    this.#last = start;
  }

  /** How many events are waiting. */
  get size(): number {
    return this.#heap.length;
  }

  /** The time of the last popped event (the start time before the first pop). */
  get lastPopped(): number {
    return this.#last;
  }

  /** Queues `event` at `time`; throws if `time` is not a whole number (of milliseconds) or is earlier than the last popped time. */
  push(time: number, event: E): Scheduled<E> {
    if (!Number.isSafeInteger(time)) throw new RangeError(`time must be a whole number of milliseconds, got ${time}`);
    if (time < this.#last) throw new RangeError(`time ${time} is before the current time ${this.#last}`);
    const item: Scheduled<E> = { time, seq: this.#seq++, event };
    this.#heap.push(item);
    this.#siftUp(this.#heap.length - 1);
    return item;
  }

  /** The next event without removing it. */
  peek(): Scheduled<E> | undefined {
    return this.#heap[0];
  }

  /** Removes and returns the next event, advancing the last popped time. */
  pop(): Scheduled<E> | undefined {
    const heap = this.#heap;
    const top = heap[0];
    if (top === undefined) return undefined;
    const tail = heap.pop() as Scheduled<E>;
    if (heap.length > 0) {
      heap[0] = tail;
      this.#siftDown(0);
    }
    this.#last = top.time;
    return top;
  }

  #siftUp(index: number): void {
    const heap = this.#heap;
    let i = index;
    const item = heap[i] as Scheduled<E>;
    while (i > 0) {
      const parentIndex = (i - 1) >> 2;
      const parent = heap[parentIndex] as Scheduled<E>;
      if (!before(item, parent)) break;
      heap[i] = parent;
      i = parentIndex;
    }
    heap[i] = item;
  }

  #siftDown(index: number): void {
    const heap = this.#heap;
    const n = heap.length;
    let i = index;
    const item = heap[i] as Scheduled<E>;
    for (;;) {
      const first = 4 * i + 1;
      if (first >= n) break;
      let child = first;
      let childItem = heap[first] as Scheduled<E>;
      const end = Math.min(first + 4, n);
      for (let c = first + 1; c < end; c++) {
        const candidate = heap[c] as Scheduled<E>;
        if (before(candidate, childItem)) {
          child = c;
          childItem = candidate;
        }
      }
      if (!before(childItem, item)) break;
      heap[i] = childItem;
      i = child;
    }
    heap[i] = item;
  }
}
