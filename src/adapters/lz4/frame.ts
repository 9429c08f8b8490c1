/**
 * The LZ4 frame format (lz4/doc/lz4_Frame_format.md), decoded as a stream: what `lz4` (the CLI,
 * any level, `-BI`/`-BD`, `-B4`..`-B7`, `-BX`, `--content-size`, `--[no-]frame-crc`) and the
 * Rivet CLI write. Memory stays bounded by one block (at most 4 MiB) plus the 64 KiB window that
 * linked blocks refer back to; every checksum the frame carries is verified; concatenated and
 * skippable frames are read as the format says; the decompressed size can be bounded, and the
 * bound is never overstepped by a byte (a block is decoded into room for what is left of it).
 * Anything else fails with an {@link Lz4Error}.
 */
import xxhash from 'xxhash-wasm';
import { decodeBlock, Lz4Error, Lz4OutputFull } from './block.js';
import { Input } from './input.js';

export { Lz4Error } from './block.js';

/**
 * The data decompresses to more than the bound the caller set (`maxBytes`), which it names.
 *
 * @example
 * try { for await (const c of decodeLz4(input, { maxBytes: 1e9 })) out.write(c) } catch (e) { if (e instanceof Lz4LimitError) reply(413, e.message) }
 */
export class Lz4LimitError extends Lz4Error {
  override readonly name: string = 'Lz4LimitError';

  constructor(readonly limit: number) {
    super(`the LZ4 data decompresses to more than ${limit} bytes`);
  }
}

const FRAME_MAGIC = 0x184d2204;
const LEGACY_MAGIC = 0x184c2102;
/** Skippable frames: 0x184D2A50..0x184D2A5F. */
const isSkippable = (magic: number): boolean => (magic & 0xfffffff0) === 0x184d2a50;
/** How far back a linked block's matches reach. */
const WINDOW = 64 * 1024;
/** Block maximum sizes by the BD byte's 3-bit code (4..7). */
const BLOCK_MAX: Readonly<Record<number, number>> = { 4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024 };

/** xxHash32, compiled once (a tiny WebAssembly module). */
const hashes = xxhash();

const u32 = (bytes: Uint8Array, at = 0): number =>
  ((bytes[at] as number) | ((bytes[at + 1] as number) << 8) | ((bytes[at + 2] as number) << 16) | ((bytes[at + 3] as number) << 24)) >>> 0;

interface Descriptor {
  readonly independent: boolean;
  readonly blockChecksum: boolean;
  readonly contentChecksum: boolean;
  /** The declared content size, if the frame has one. */
  readonly contentSize: bigint | undefined;
  readonly blockMax: number;
}

/** Reads and checks a frame descriptor (after the magic number), header checksum included. */
const readDescriptor = async (input: Input, h32: (bytes: Uint8Array) => number): Promise<Descriptor> => {
  const head = await input.take(2, 'the frame header');
  const flg = head[0] as number;
  const bd = head[1] as number;
  if (flg >>> 6 !== 1) throw new Lz4Error(`unsupported LZ4 frame version ${flg >>> 6}`);
  if ((flg & 0x02) !== 0 || (bd & 0x8f) !== 0) throw new Lz4Error('corrupt LZ4 frame header: reserved bits are set');
  const blockMax = BLOCK_MAX[(bd >>> 4) & 7];
  if (blockMax === undefined) throw new Lz4Error('corrupt LZ4 frame header: invalid block maximum size');
  const hasSize = (flg & 0x08) !== 0;
  const hasDictionary = (flg & 0x01) !== 0;
  const rest = await input.take((hasSize ? 8 : 0) + (hasDictionary ? 4 : 0) + 1, 'the frame header');
  const described = new Uint8Array(2 + rest.byteLength - 1);
  described.set(head, 0);
  described.set(rest.subarray(0, rest.byteLength - 1), 2);
  if (((h32(described) >>> 8) & 0xff) !== rest[rest.byteLength - 1]) throw new Lz4Error('corrupt LZ4 frame header: header checksum mismatch');
  if (hasDictionary) throw new Lz4Error('the LZ4 frame needs a preset dictionary, which is not supported');
  const contentSize = hasSize ? BigInt(u32(rest, 0)) | (BigInt(u32(rest, 4)) << 32n) : undefined;
  return { independent: (flg & 0x20) !== 0, blockChecksum: (flg & 0x10) !== 0, contentChecksum: (flg & 0x04) !== 0, contentSize, blockMax };
};

/**
 * Linked blocks' history: the last {@link WINDOW} bytes decoded, followed by room for one block.
 * Each block decodes (or is copied) right after the history, then the history slides.
 */
class History {
  readonly #buffer: Uint8Array;
  readonly #blockMax: number;
  #filled = 0;

  constructor(blockMax: number) {
    this.#buffer = new Uint8Array(WINDOW + blockMax);
    this.#blockMax = blockMax;
  }

  /** Decodes `block` into at most `room` bytes (or takes it as it is when `raw`), returns a copy of its data, and slides the window. */
  add(block: Uint8Array, raw: boolean, room: number): Uint8Array {
    const start = this.#filled;
    let end: number;
    if (raw) {
      this.#buffer.set(block, start);
      end = start + block.byteLength;
    } else {
      end = decodeBlock(block, this.#buffer.subarray(0, start + Math.min(room, this.#blockMax)), start, 0);
    }
    const out = this.#buffer.slice(start, end);
    if (end > WINDOW) this.#buffer.copyWithin(0, end - WINDOW, end);
    this.#filled = Math.min(end, WINDOW);
    return out;
  }
}

/** What may still be decompressed, and the bound it started from (`Infinity`: none). */
interface Budget {
  left: number;
  readonly limit: number;
}

/** Decodes one block into at most `budget.left` bytes: over it, an {@link Lz4LimitError} before a byte more is decoded. */
const decodeWithin = (block: Uint8Array, raw: boolean, frame: Descriptor, history: History | undefined, budget: Budget): Uint8Array => {
  if (raw && block.byteLength > budget.left) throw new Lz4LimitError(budget.limit);
  try {
    if (history !== undefined) return history.add(block, raw, budget.left);
    if (raw) return block;
    const buffer = new Uint8Array(Math.min(frame.blockMax, budget.left));
    return buffer.subarray(0, decodeBlock(block, buffer, 0, 0));
  } catch (e) {
    // Cut below the block size, a full output is the bound's doing (or a corrupt block's: refused either way).
    if (e instanceof Lz4OutputFull && budget.left < frame.blockMax) throw new Lz4LimitError(budget.limit);
    throw e;
  }
};

/** Decodes one frame's blocks (after its descriptor), checking block and content checksums and size, within `budget`. */
async function* decodeFrame(input: Input, frame: Descriptor, api: Awaited<typeof hashes>, budget: Budget): AsyncGenerator<Uint8Array> {
  if (frame.contentSize !== undefined && Number(frame.contentSize) > budget.left) throw new Lz4LimitError(budget.limit);
  const history = frame.independent ? undefined : new History(frame.blockMax);
  const content = frame.contentChecksum ? api.create32(0) : undefined;
  let total = 0n;
  for (;;) {
    const word = u32(await input.take(4, 'a block header'));
    if (word === 0) break;
    const raw = word >>> 31 === 1;
    const size = word & 0x7fffffff;
    if (size > frame.blockMax) throw new Lz4Error(`corrupt LZ4 frame: a block of ${size} bytes exceeds the frame's block size (${frame.blockMax})`);
    const block = await input.take(size, 'a block');
    if (frame.blockChecksum && u32(await input.take(4, 'a block checksum')) !== api.h32Raw(block, 0)) {
      throw new Lz4Error('corrupt LZ4 frame: block checksum mismatch');
    }
    const out = decodeWithin(block, raw, frame, history, budget);
    budget.left -= out.byteLength;
    content?.update(out);
    total += BigInt(out.byteLength);
    if (out.byteLength > 0) yield out;
  }
  if (content !== undefined && u32(await input.take(4, 'the content checksum')) !== content.digest() >>> 0) {
    throw new Lz4Error('corrupt LZ4 frame: content checksum mismatch');
  }
  if (frame.contentSize !== undefined && frame.contentSize !== total) {
    throw new Lz4Error(`corrupt LZ4 frame: it declares ${frame.contentSize} bytes but holds ${total}`);
  }
}

/** How {@link decodeLz4} may decompress. */
export interface DecodeOptions {
  /** The most bytes the whole stream may decompress to (every frame together); default unbounded. */
  readonly maxBytes?: number;
}

/**
 * Decompresses an LZ4 frame stream (one or more concatenated frames; skippable frames are
 * skipped) as it arrives. Stopping early releases `source`. Throws an {@link Lz4Error} (with a
 * readable reason) for data that is not LZ4, truncated, corrupt, or needs a dictionary, and an
 * {@link Lz4LimitError} as soon as it would decompress to more than `maxBytes` (a frame that
 * declares a larger content size, at once; otherwise at the block that would cross it, which is
 * not decoded past the bound): what it yielded until then is at most `maxBytes` bytes.
 *
 * @example
 * for await (const chunk of decodeLz4(createReadStream('image.tar.lz4'), { maxBytes: 32e9 })) out.write(chunk);
 */
export async function* decodeLz4(source: AsyncIterable<Uint8Array>, options: DecodeOptions = {}): AsyncGenerator<Uint8Array> {
  const limit = options.maxBytes ?? Infinity;
  if (!(limit >= 0)) throw new RangeError(`maxBytes must be a number of bytes, not ${limit}`);
  const budget: Budget = { left: limit, limit };
  const api = await hashes;
  const h32 = (bytes: Uint8Array): number => api.h32Raw(bytes, 0);
  const input = new Input(source);
  try {
    let frames = 0;
    while (!(await input.atEnd())) {
      const magic = u32(await input.take(4, 'a frame magic number'));
      if (isSkippable(magic)) {
        await input.skip(u32(await input.take(4, 'a skippable frame')), 'a skippable frame');
        continue;
      }
      if (magic === LEGACY_MAGIC) throw new Lz4Error('the data uses the legacy LZ4 format (lz4 -l), which is not supported: use the frame format');
      if (magic !== FRAME_MAGIC) {
        throw new Lz4Error(frames === 0 ? 'the data is not LZ4-compressed (no LZ4 frame magic number)' : 'corrupt LZ4 data: unexpected bytes after a frame');
      }
      yield* decodeFrame(input, await readDescriptor(input, h32), api, budget);
      frames += 1;
    }
    if (frames === 0) throw new Lz4Error('the LZ4 data is empty: it holds no frame');
  } finally {
    await input.close();
  }
}
