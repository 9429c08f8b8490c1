/**
 * Tar archives read and written as streams (tar-stream), with what a build archive needs on top:
 * normalised entry names, a check that the archive really ended (tar's end-of-archive marker, so
 * an upload cut at an entry boundary is not taken for a whole one), small entries read into
 * memory under a cap, and entries copied into a new archive under new names.
 */
import tar, { type ExtractEvents, type Header, type Pack } from 'tar-stream';
import { ArchiveError } from './archive-error.js';

/** An entry's body as tar-stream hands it out. */
export type EntryBody = ExtractEvents['entry'][1];

/** One entry of an archive being read; its body must be read or {@link drain}ed before the next. */
export interface TarEntry {
  readonly header: Header;
  /** The name without `./` or `/` in front and without a trailing `/`; `''` for the root itself. */
  readonly name: string;
  readonly body: EntryBody;
}

const BLOCK = 512;
const padded = (size: number): number => Math.ceil(size / BLOCK) * BLOCK;

/**
 * An entry name in a comparable form, or undefined if it climbs out of the archive (`..`).
 *
 * @example
 * entryName('./rootfs/bin/') // 'rootfs/bin'
 */
export const entryName = (raw: string): string | undefined => {
  const parts = raw.split('/').filter((p) => p !== '' && p !== '.');
  return parts.includes('..') ? undefined : parts.join('/');
};

/** tar-stream's errors, in words a game developer can act on. */
const explain = (e: unknown): Error => {
  const message = e instanceof Error ? e.message : '';
  if (message.startsWith('Unexpected end of data')) return new ArchiveError('the archive is truncated: it ends inside a file');
  if (/^Invalid (tar )?header|Header exceeds max size/.test(message)) {
    return new ArchiveError('the archive is not a valid tar file (an invalid tar header; is it compressed with something other than what the build says?)');
  }
  return e instanceof Error ? e : new Error(String(e));
};

/** Resolves on the writable's next 'drain' or 'close', whichever comes first (and leaves no listener behind). */
const drained = (extract: tar.Extract): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      extract.off('drain', done);
      extract.off('close', done);
      resolve();
    };
    extract.on('drain', done);
    extract.on('close', done);
  });

/** Writes `bytes` into `extract`, honouring backpressure; stops when `extract` is destroyed. */
const feed = async (bytes: AsyncIterable<Uint8Array>, extract: tar.Extract, counted: { total: number }): Promise<void> => {
  try {
    for await (const chunk of bytes) {
      if (extract.destroyed) return;
      counted.total += chunk.byteLength;
      if (!extract.write(chunk)) await drained(extract);
    }
    extract.end(undefined);
  } catch (e) {
    extract.destroy(e as Error);
  }
};

/**
 * The entries of the tar archive in `bytes`, one at a time. Throws an {@link ArchiveError} when
 * the archive is not tar, is cut short (inside an entry, or before the end-of-archive marker),
 * or names an entry outside itself; errors of `bytes` itself come through unchanged.
 *
 * @example
 * for await (const entry of tarEntries(bytes)) if (entry.name === 'config.json') json = await readSmall(entry, 1 << 20);
 */
export async function* tarEntries(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<TarEntry> {
  const extract = tar.extract();
  const counted = { total: 0 };
  const feeding = feed(bytes, extract, counted);
  let end = 0;
  let entries = 0;
  try {
    for await (const body of extract) {
      const name = entryName(body.header.name);
      if (name === undefined) throw new ArchiveError(`the archive has an entry outside itself: '${body.header.name}'`);
      const offset = (body.header as Header & { byteOffset?: number }).byteOffset ?? 0;
      end = Math.max(end, offset + padded(body.header.size));
      entries += 1;
      yield { header: body.header, name, body };
      await drain(body);
    }
  } catch (e) {
    throw explain(e);
  } finally {
    if (!extract.destroyed) extract.destroy();
    await feeding;
  }
  if (entries === 0 && counted.total === 0) throw new ArchiveError('the archive is empty');
  if (entries === 0) throw new ArchiveError('the archive holds no file: it is not a tar archive, or only its end marker');
  if (counted.total - end < BLOCK) throw new ArchiveError("the archive is truncated: it ends without tar's end-of-archive marker");
}

/**
 * Reads (and discards) what is left of an entry's body.
 *
 * @example
 * if (entry.name !== 'config.json') await drain(entry.body);
 */
export const drain = async (body: EntryBody): Promise<void> => {
  try {
    for await (const _ of body) {
      // nothing to keep
    }
  } catch (e) {
    throw explain(e);
  }
};

/**
 * The body of a small entry (a JSON document), or an {@link ArchiveError} if it exceeds `max` bytes.
 *
 * @example
 * const manifest = JSON.parse(await readSmall(entry, 1 << 20, 'manifest.json'));
 */
export const readSmall = async (entry: TarEntry, max: number, what: string): Promise<string> => {
  if (entry.header.size > max) throw new ArchiveError(`${what} is too large (${entry.header.size} bytes; at most ${max})`);
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of entry.body) chunks.push(chunk as Buffer);
  } catch (e) {
    throw explain(e);
  }
  return Buffer.concat(chunks).toString('utf8');
};

/** A header for a copy: `name` (and a hard link's `linkname`) replaced, pax records other than paths and size kept. */
const copyHeader = (header: Header, name: string, linkname?: string): Header => {
  const { pax } = header as Header & { pax?: Record<string, string> | null };
  const kept = pax === undefined || pax === null ? {} : Object.fromEntries(Object.entries(pax).filter(([k]) => k !== 'path' && k !== 'linkpath' && k !== 'size'));
  return { ...header, name, linkname: linkname ?? header.linkname, pax: Object.keys(kept).length === 0 ? null : kept };
};

/** Resolves when `pack` has taken an entry whole; rejects if it (or `body`) fails first. */
const written = (pack: Pack, header: Header, body?: EntryBody | Buffer): Promise<void> =>
  new Promise((resolve, reject) => {
    const done = (e?: Error | null): void => (e ? reject(explain(e)) : resolve());
    const fail = (e: unknown): void => reject(explain(e));
    if (body === undefined || Buffer.isBuffer(body)) {
      pack.entry(header, body ?? Buffer.alloc(0), done).on('error', fail);
      return;
    }
    const sink = pack.entry(header, done);
    sink.on('error', fail); // a destroyed pack or body: reported here, never as an uncaught 'error'
    body.on('error', fail);
    body.pipe(sink);
  });

/** Whether `entry` carries bytes (a file), not a link, folder or special file. */
export const isFile = (entry: TarEntry): boolean => entry.header.type === 'file' || entry.header.type === 'contiguous-file';

/**
 * Copies `entry` into `pack` as `name` (a hard link's target renamed to `linkname`); a file's
 * bytes from `through` when given (its body passed through a stream that sees them on the way).
 *
 * @example
 * await copyEntry(pack, entry, entry.name.slice('rootfs/'.length));
 */
export const copyEntry = (pack: Pack, entry: TarEntry, name: string, linkname?: string, through?: (body: EntryBody) => NodeJS.ReadableStream): Promise<void> =>
  // A node stream pipes into the pack's entry as tar-stream's own stream does (`on('error')`, `pipe`).
  written(pack, copyHeader(entry.header, name, linkname), isFile(entry) ? (through === undefined ? entry.body : (through(entry.body) as unknown as EntryBody)) : undefined);

/**
 * Adds a file made in memory (a rewritten JSON document) to `pack`, with `like`'s metadata.
 *
 * @example
 * await addFile(pack, entry, 'manifest.json', Buffer.from(JSON.stringify(manifest)));
 */
export const addFile = (pack: Pack, like: TarEntry, name: string, content: Buffer): Promise<void> =>
  written(pack, { ...copyHeader(like.header, name), size: content.byteLength }, content);
