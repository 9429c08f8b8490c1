/**
 * A build archive's bytes as a tar stream: LZ4 frames decompressed when the build says `lz4`,
 * a gzipped tar (what `docker save | gzip` makes, and `docker load` takes) gunzipped, and any
 * mismatch between what the build says and what the bytes are (LZ4 declared `none`, xz, zstd…)
 * reported as an {@link ArchiveError} before a byte reaches the engine. Streams throughout, and
 * never yields more than a bound (an archive of 8 GB of LZ4 can expand to 2 TB): past it, an
 * {@link ArchiveError} that names the bound and the setting, before anything more is expanded.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { decodeLz4, Lz4Error, Lz4LimitError } from '../lz4/frame.js';
import { ArchiveError } from './archive-error.js';

/** How a build's archive is compressed (wire `compression`). */
export type Compression = 'none' | 'lz4';

/** The server setting of the bound (`src/server/env.ts`), named in the error so an operator knows what to change. */
export const MAX_EXPANDED_SETTING = 'TAVERN_BUILD_MAX_EXPANDED_BYTES';

/**
 * The bound's default: 4 × the build upload limit (`DEFAULT_UPLOAD_LIMITS.maxBuildBytes`, under
 * 8 GB as Rivet's), room for a tar that compresses well without letting a bomb fill the engine's disk.
 */
export const DEFAULT_MAX_EXPANDED_BYTES = 32_000_000_000;

/**
 * The refusal of an archive that expands past `limit` bytes.
 *
 * @example
 * tooLarge(16_777_216).message
 * // 'the archive is more than 16777216 bytes (16.8 MB) once decompressed, the most this server takes (TAVERN_BUILD_MAX_EXPANDED_BYTES): …'
 */
export const tooLarge = (limit: number): ArchiveError =>
  new ArchiveError(`the archive is more than ${limit} bytes (${(limit / 1e6).toFixed(1)} MB) once decompressed, the most this server takes `
    + `(${MAX_EXPANDED_SETTING}): upload a smaller build, or ask the operator to raise that setting`);

/** `source` as it is, or an {@link ArchiveError} instead of the chunk that would take it past `limit` bytes. */
async function* bounded(source: AsyncIterable<Uint8Array>, limit: number): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of source) {
    total += chunk.byteLength;
    if (total > limit) throw tooLarge(limit);
    yield chunk;
  }
}

const MAGIC: readonly { readonly name: string; readonly bytes: readonly number[] }[] = [
  { name: 'lz4', bytes: [0x04, 0x22, 0x4d, 0x18] },
  { name: 'gzip', bytes: [0x1f, 0x8b] },
  { name: 'xz', bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] },
  { name: 'zstd', bytes: [0x28, 0xb5, 0x2f, 0xfd] },
  { name: 'bzip2', bytes: [0x42, 0x5a, 0x68] },
];

/** The compression whose magic number `head` starts with, if any. */
export const sniff = (head: Uint8Array): string | undefined => MAGIC.find((m) => m.bytes.every((b, i) => head[i] === b))?.name;

/** The first `n` bytes of `source` (fewer if it is shorter) and the whole stream again, head included. */
const peek = async (source: AsyncIterable<Uint8Array>, n: number): Promise<{ head: Uint8Array; bytes: AsyncIterable<Uint8Array> }> => {
  const it = source[Symbol.asyncIterator]();
  const seen: Uint8Array[] = [];
  let size = 0;
  let done = false;
  while (size < n && !done) {
    const next = await it.next();
    if (next.done === true) done = true;
    else {
      seen.push(next.value);
      size += next.value.byteLength;
    }
  }
  const head = Buffer.concat(seen).subarray(0, n);
  async function* bytes(): AsyncGenerator<Uint8Array> {
    yield* seen;
    if (done) return;
    yield* { [Symbol.asyncIterator]: () => it };
  }
  return { head, bytes: bytes() };
};

/** LZ4 frames decoded (into at most `limit` bytes), their errors in the uploader's terms. */
async function* lz4(source: AsyncIterable<Uint8Array>, limit: number): AsyncGenerator<Uint8Array> {
  try {
    yield* decodeLz4(source, { maxBytes: limit });
  } catch (e) {
    if (e instanceof Lz4LimitError) throw tooLarge(limit);
    if (!(e instanceof Lz4Error)) throw e;
    if (e.message.startsWith('the data is not LZ4')) throw new ArchiveError('the archive is not LZ4-compressed, but the build says compression lz4');
    throw new ArchiveError(`the archive's LZ4 compression is broken: ${e.message}`);
  }
}

/** A gzip stream inflated; zlib's errors (corrupt, truncated) as {@link ArchiveError}s. */
async function* gunzip(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const inflate = createGunzip();
  const pumping = pipeline(Readable.from(source), inflate).catch(() => undefined);
  try {
    for await (const chunk of inflate) yield chunk as Buffer;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('Z_')) throw new ArchiveError(`the archive's gzip compression is broken: ${(e as Error).message}`);
    throw e;
  } finally {
    inflate.destroy();
    await pumping;
  }
}

/**
 * The tar stream inside a build archive of `compression`, at most `maxBytes` bytes of it (default
 * {@link DEFAULT_MAX_EXPANDED_BYTES}; whatever the compression, gzip inside LZ4 included). Throws an
 * {@link ArchiveError} when the bytes are not what the build says (or are compressed in a way
 * Tavern does not read) or expand past the bound, and passes errors of `source` itself through.
 *
 * @example
 * for await (const entry of tarEntries(archiveBytes(await build.open(), build.compression, 32e9))) …
 */
export async function* archiveBytes(source: AsyncIterable<Uint8Array>, compression: Compression, maxBytes = DEFAULT_MAX_EXPANDED_BYTES): AsyncGenerator<Uint8Array> {
  const it = source[Symbol.asyncIterator]();
  try {
    const raw = await peek({ [Symbol.asyncIterator]: () => it }, 6);
    if (compression === 'none' && sniff(raw.head) === 'lz4') throw new ArchiveError('the archive is LZ4-compressed, but the build says compression none');
    const tarOrGzip = await peek(compression === 'lz4' ? lz4(raw.bytes, maxBytes) : raw.bytes, 6);
    const inner = sniff(tarOrGzip.head);
    if (inner === 'gzip') yield* bounded(gunzip(tarOrGzip.bytes), maxBytes);
    else if (inner !== undefined) throw new ArchiveError(`the archive is compressed with ${inner}, which Tavern does not read: upload a tar, compressed with lz4 or not at all`);
    else yield* bounded(tarOrGzip.bytes, maxBytes);
  } finally {
    await it.return?.(); // releases the source however this ends (an early error leaves it unread)
  }
}
