/**
 * What the CDN knows of a site file beyond its record: its content hash (the strong ETag, read
 * once per file by streaming it) and its compressed forms, made once by streaming the file through
 * brotli or gzip into the blobs under `cdn-cache/<hash>.<coding>` (shared by every upload with the
 * same bytes, kept across restarts); and the bytes of files up to 2 MiB, kept in memory once read
 * (128 MiB in all, the oldest dropped first). Larger files stream from the blobs.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createBrotliCompress, createGzip } from 'node:zlib';
import type { Encoding } from '../../core/cdn.js';
import type { Blobs } from '../../io/blobs.js';

/** Files of these types, between these sizes, are served compressed when the client accepts it. */
const COMPRESSIBLE = /^(?:text\/|application\/(?:javascript|json|xml|wasm|manifest\+json|x-javascript)|image\/svg\+xml)/;
const MIN_COMPRESS = 256;
const MAX_COMPRESS = 128 * 2 ** 20;
/** How many files' hashes and compressed sizes are remembered. */
const MAX_ENTRIES = 50_000;
/** Files up to this size are kept in memory once read (a completed upload never changes), up to SMALL_TOTAL bytes in all. */
const SMALL_FILE = 2 * 2 ** 20;
const SMALL_TOTAL = 128 * 2 ** 20;

export const isCompressible = (contentType: string, size: number): boolean =>
  size >= MIN_COMPRESS && size <= MAX_COMPRESS && COMPRESSIBLE.test(contentType);

const compressor = (e: Encoding): NodeJS.ReadWriteStream =>
  e === 'br'
    ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } })
    : createGzip({ level: 9 });

export const compressedKey = (hash: string, e: Encoding): string => `cdn-cache/${hash}.${e}`;

/** A bounded map of promises: the oldest entry goes first; a rejected promise is forgotten. */
class Memo<T> {
  readonly #entries = new Map<string, Promise<T>>();

  get(key: string, make: () => Promise<T>): Promise<T> {
    const known = this.#entries.get(key);
    if (known !== undefined) return known;
    const made = make();
    made.catch(() => this.#entries.delete(key));
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, made);
    return made;
  }
}

/**
 * @example
 * const files = new CdnFiles(blobs);
 * const hash = await files.hash(key); // base64url SHA-256
 * const size = await files.compressed(key, hash, 'br'); // undefined: not smaller, serve it as is
 */
export class CdnFiles {
  readonly #blobs: Blobs;
  readonly #hashes = new Memo<string | undefined>();
  readonly #compressed = new Memo<number | undefined>();
  /** Small files' bytes by key, oldest first, `#smallBytes` in all. */
  readonly #small = new Map<string, Buffer>();
  #smallBytes = 0;

  constructor(blobs: Blobs) {
    this.#blobs = blobs;
  }

  /**
   * The bytes of the blob under `key` if it is small (at most 2 MiB), read once and kept (the
   * oldest dropped past 128 MiB in all); undefined for a larger or missing one (stream it instead).
   */
  async small(key: string, size: number): Promise<Buffer | undefined> {
    if (size > SMALL_FILE) return undefined;
    const kept = this.#small.get(key);
    if (kept !== undefined) return kept;
    const reader = await this.#blobs.open(key);
    if (reader === undefined) return undefined;
    const chunks: Uint8Array[] = [];
    for await (const chunk of reader) chunks.push(chunk);
    const bytes = Buffer.concat(chunks);
    if (bytes.length > SMALL_FILE) return undefined;
    while (this.#smallBytes + bytes.length > SMALL_TOTAL && this.#small.size > 0) {
      const [oldest, dropped] = this.#small.entries().next().value as [string, Buffer];
      this.#small.delete(oldest);
      this.#smallBytes -= dropped.length;
    }
    this.#small.set(key, bytes);
    this.#smallBytes += bytes.length;
    return bytes;
  }

  /** The bytes of the small blob under `key` if they are in memory now (see {@link CdnFiles.small}). */
  kept(key: string): Buffer | undefined {
    return this.#small.get(key);
  }

  /** The SHA-256 of the blob under `key` (base64url), or undefined if it is gone. Keys of completed uploads never change. */
  hash(key: string): Promise<string | undefined> {
    return this.#hashes.get(key, async () => {
      const reader = await this.#blobs.open(key);
      if (reader === undefined) return undefined;
      const sha = createHash('sha256');
      for await (const chunk of reader) sha.update(chunk);
      return sha.digest('base64url');
    });
  }

  /**
   * The size of the file's `coding` form, made now if it was never made, or undefined when that
   * form would not be smaller (then the file is served as it is).
   */
  compressed(key: string, hash: string, coding: Encoding): Promise<number | undefined> {
    return this.#compressed.get(`${hash}.${coding}`, async () => {
      const target = compressedKey(hash, coding);
      const made = await this.#blobs.stat(target);
      if (made !== undefined) return made.size;
      const reader = await this.#blobs.open(key);
      if (reader === undefined) return undefined;
      const original = reader.size;
      const writer = await this.#blobs.begin(target);
      try {
        let size = 0;
        await pipeline(Readable.from(reader), compressor(coding), async (source: AsyncIterable<Buffer | string>) => {
          for await (const chunk of source) {
            const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
            size += bytes.byteLength;
            await writer.write(bytes);
          }
        });
        if (size >= original) return undefined;
        await writer.commit();
        return size;
      } finally {
        await writer.abort();
      }
    });
  }
}
