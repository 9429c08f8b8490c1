import { Lz4Error } from './block.js';

/**
 * A byte stream read in exact amounts: pulls chunks from an async iterable only as far as asked,
 * hands out views into them when one chunk holds the bytes (copies only across chunk edges), and
 * says "truncated" when the stream ends short.
 *
 * @example
 * const input = new Input(stream);
 * const magic = await input.take(4, 'the frame header'); // 4 bytes, or an Lz4Error if the stream is shorter
 */
export class Input {
  readonly #source: AsyncIterator<Uint8Array>;
  readonly #chunks: Uint8Array[] = [];
  #buffered = 0;
  #ended = false;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.#source = source[Symbol.asyncIterator]();
  }

  /** Reads until `n` bytes are buffered or the source ends; true if they are. */
  async #fill(n: number): Promise<boolean> {
    while (this.#buffered < n && !this.#ended) {
      const next = await this.#source.next();
      if (next.done === true) this.#ended = true;
      else if (next.value.byteLength > 0) {
        this.#chunks.push(next.value);
        this.#buffered += next.value.byteLength;
      }
    }
    return this.#buffered >= n;
  }

  /** True once every byte has been taken and the source has ended. */
  async atEnd(): Promise<boolean> {
    return !(await this.#fill(1));
  }

  /** The next `n` bytes; an {@link Lz4Error} naming `what` if the stream ends first. */
  async take(n: number, what: string): Promise<Uint8Array> {
    if (!(await this.#fill(n))) throw new Lz4Error(`the LZ4 data is truncated: it ends inside ${what}`);
    const first = this.#chunks[0];
    if (first !== undefined && first.byteLength >= n) {
      this.#consume(first, n);
      return first.subarray(0, n);
    }
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.#chunks[0] as Uint8Array;
      const part = Math.min(chunk.byteLength, n - filled);
      out.set(chunk.subarray(0, part), filled);
      this.#consume(chunk, part);
      filled += part;
    }
    return out;
  }

  /** Discards the next `n` bytes (a skippable frame), a chunk at a time. */
  async skip(n: number, what: string): Promise<void> {
    let left = n;
    while (left > 0) {
      if (!(await this.#fill(1))) throw new Lz4Error(`the LZ4 data is truncated: it ends inside ${what}`);
      const chunk = this.#chunks[0] as Uint8Array;
      const part = Math.min(chunk.byteLength, left);
      this.#consume(chunk, part);
      left -= part;
    }
  }

  /** Stops reading the source (releases it when the reader stops early). */
  async close(): Promise<void> {
    if (!this.#ended) {
      this.#ended = true;
      await this.#source.return?.();
    }
  }

  /** Drops `n` bytes from the front of the first chunk. */
  #consume(chunk: Uint8Array, n: number): void {
    this.#buffered -= n;
    if (n === chunk.byteLength) this.#chunks.shift();
    else this.#chunks[0] = chunk.subarray(n);
  }
}
