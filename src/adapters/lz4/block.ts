/**
 * The LZ4 block format (lz4/doc/lz4_Block_format.md): a run of sequences, each a token, literals
 * and a back-reference (offset, length) into what was already decoded. Decoded here with every
 * read and write bounds-checked, so corrupt or hostile input fails with an {@link Lz4Error} and
 * never reads outside its block or writes past its output.
 */

/**
 * Why LZ4 data could not be decoded: corrupt, truncated or of an unsupported kind.
 *
 * @example
 * try { for await (const c of decodeLz4(input)) out.write(c) } catch (e) { if (e instanceof Lz4Error) reply(400, e.message) }
 */
export class Lz4Error extends Error {
  override readonly name: string = 'Lz4Error';
}

/**
 * A block decodes to more bytes than its output may hold: corrupt when the output is the block
 * size, over the caller's bound when the caller capped it below that (see `decodeLz4`'s `maxBytes`).
 *
 * @example
 * try { decodeBlock(block, out.subarray(0, room), 0, 0) } catch (e) { if (e instanceof Lz4OutputFull && room < blockMax) overLimit() }
 */
export class Lz4OutputFull extends Lz4Error {
  override readonly name: string = 'Lz4OutputFull';
}

const MIN_MATCH = 4;
/** Up to this many bytes, a byte loop beats `set`/`copyWithin` (their call overhead dominates). */
const SHORT_COPY = 32;

const lengthPastEnd = (): Lz4Error => new Lz4Error('corrupt LZ4 block: a length runs past the end of the block');
const tooLong = (): Lz4Error => new Lz4OutputFull('corrupt LZ4 block: it decodes to more than the block size');

/**
 * Copies `length` bytes from `from` to `to` (> `from`) in `dst`. When they overlap, the bytes
 * between `from` and `to` repeat, as LZ4 requires: copied in doubling, non-overlapping spans
 * (the region before the write position is periodic, so each span's source ends where it lands).
 */
const copyMatch = (dst: Uint8Array, from: number, to: number, length: number): void => {
  if (length < SHORT_COPY) {
    for (let k = 0; k < length; k += 1) dst[to + k] = dst[from + k] as number;
    return;
  }
  let done = 0;
  let span = to - from;
  while (done < length) {
    const n = Math.min(span, length - done);
    dst.copyWithin(to + done, from, from + n);
    done += n;
    span += n;
  }
};

/**
 * Decodes the LZ4 block `src` into `dst` starting at `at`, and returns where the output ends.
 * Back-references may reach down to `historyStart` (the previous blocks' last bytes, for frames
 * with linked blocks); `dst.length` caps the output (an {@link Lz4OutputFull} past it). Throws an
 * {@link Lz4Error} on corrupt input.
 *
 * @example
 * const out = new Uint8Array(65536 + blockMax);
 * const end = decodeBlock(block, out, 65536, 0); // out.subarray(65536, end) is this block's data
 */
export function decodeBlock(src: Uint8Array, dst: Uint8Array, at: number, historyStart: number): number {
  const srcEnd = src.length;
  const dstEnd = dst.length;
  let i = 0;
  let o = at;
  if (srcEnd === 0) throw new Lz4Error('corrupt LZ4 block: it is empty');
  for (;;) {
    const token = src[i++] as number;
    let literals = token >>> 4;
    if (literals === 15) {
      let byte: number;
      do {
        if (i >= srcEnd) throw lengthPastEnd();
        byte = src[i++] as number;
        literals += byte;
      } while (byte === 255);
    }
    if (literals > 0) {
      if (literals > srcEnd - i) throw new Lz4Error('corrupt LZ4 block: literals run past the end of the block');
      if (literals > dstEnd - o) throw tooLong();
      if (literals <= SHORT_COPY) {
        for (let k = 0; k < literals; k += 1) dst[o + k] = src[i + k] as number;
      } else {
        dst.set(src.subarray(i, i + literals), o);
      }
      i += literals;
      o += literals;
    }
    if (i === srcEnd) return o; // the last sequence has literals only
    if (i + 2 > srcEnd) throw new Lz4Error('corrupt LZ4 block: a match offset runs past the end of the block');
    const offset = (src[i] as number) | ((src[i + 1] as number) << 8);
    i += 2;
    if (offset === 0 || offset > o - historyStart) throw new Lz4Error('corrupt LZ4 block: a match refers to data before the start of the stream');
    let length = token & 15;
    if (length === 15) {
      let byte: number;
      do {
        if (i >= srcEnd) throw lengthPastEnd();
        byte = src[i++] as number;
        length += byte;
      } while (byte === 255);
    }
    length += MIN_MATCH;
    if (length > dstEnd - o) throw tooLong();
    copyMatch(dst, o - offset, o, length);
    o += length;
    if (i === srcEnd) throw new Lz4Error('corrupt LZ4 block: it ends with a match instead of literals');
  }
}
