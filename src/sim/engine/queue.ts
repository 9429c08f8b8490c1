/**
 * The simulation's event queue: a binary min-heap ordered by `(time, seq)`, where `seq` counts
 * insertions so events at the same time leave in the order they were pushed. The queue remembers
 * the time of the last popped event and refuses anything earlier: virtual time never goes back.
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

  /** Queues `event` at `time`; throws if `time` is NaN or earlier than the last popped time. */
  push(time: number, event: E): Scheduled<E> {
    if (Number.isNaN(time)) throw new RangeError('time must be a number, got NaN');
    if (time < this.#last) throw new RangeError(`time ${time} is before the current time ${this.#last}`);
    const item: Scheduled<E> = Object.freeze({ time, seq: this.#seq++, event });
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
      const parentIndex = (i - 1) >> 1;
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
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const leftItem = heap[left] as Scheduled<E>;
      const rightItem = heap[right];
      const child = rightItem !== undefined && before(rightItem, leftItem) ? right : left;
      const childItem = heap[child] as Scheduled<E>;
      if (!before(childItem, item)) break;
      heap[i] = childItem;
      i = child;
    }
    heap[i] = item;
  }
}
