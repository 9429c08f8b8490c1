import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { isBlobKey, type BlobReader, type BlobStat, type BlobWriter, type Blobs, type ByteRange, type PartWriter, type StagedBlobs } from '../../io/blobs.js';

/** Where writers keep their bytes until they commit (not a valid key's first segment). */
const TEMP_DIR = '.tmp';
/** The most a reader reads per chunk. */
const READ_CHUNK = 64 * 1024;
/** A part writer gathers this many bytes before one positional `writev` (one in flight at a time). */
const PART_BATCH = 1024 * 1024;
/** In a staged blob's directory: its bytes, and one record per part received. */
const STAGED_DATA = 'data';
const STAGED_PARTS = 'parts';

const codeOf = (e: unknown): unknown => (e as { code?: unknown } | null)?.code;
const isMissing = (e: unknown): boolean => codeOf(e) === 'ENOENT' || codeOf(e) === 'ENOTDIR';

/** Makes a directory's entries (a rename, a new child) durable. */
const syncDir = async (dir: string): Promise<void> => {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
};

/** Makes the directories `mkdir` created (it returns the first one) and `dir`'s entries durable. */
const syncCreated = async (dir: string, created: string | undefined): Promise<void> => {
  const changed = [dir];
  if (created !== undefined) for (let d = dir; d !== dirname(created); d = dirname(d)) changed.push(dirname(d));
  for (const d of new Set(changed)) await syncDir(d);
};

/** Writes every byte of `chunks` at `position` (a positional `writev`, repeated if short). */
const writeAllAt = async (handle: FileHandle, chunks: readonly Uint8Array[], position: number): Promise<void> => {
  let rest = chunks;
  let at = position;
  while (rest.length > 0) {
    const { bytesWritten } = await handle.writev(rest as Uint8Array[], at);
    if (bytesWritten === 0) throw new Error(`writev wrote nothing at ${at}.`);
    at += bytesWritten;
    let skip = bytesWritten;
    const next: Uint8Array[] = [];
    for (const c of rest) {
      if (skip >= c.byteLength) skip -= c.byteLength;
      else {
        next.push(skip > 0 ? c.subarray(skip) : c);
        skip = 0;
      }
    }
    rest = next;
  }
};

/**
 * Blobs as files under a root directory. A writer streams to `<root>/.tmp/<uuid>`; `commit`
 * fsyncs it, creates the key's directories, renames it into place (atomic on POSIX: a reader
 * sees the old file or the new one, never part of one) and fsyncs the directories it changed.
 * Keys that could escape the root (`..`, absolute, NUL, backslashes) or reach `.tmp` throw.
 *
 * Staged blobs ({@link StagedBlobs}) are directories: `<key>/data`, the file's bytes (created at
 * its full size, sparse), written in place by part writers (positional writes, `fdatasync`
 * before a part is recorded), and `<key>/parts/<n>`, one record per part received (its length;
 * written to `.tmp`, fsynced and renamed in, the directory fsynced). Publishing renames `data`
 * to the final key. A crash at any point leaves either the staged blob (parts recorded only
 * with their bytes durable) or the published file, never a partial file under the final key.
 *
 * @example
 * const blobs = new FsBlobs('/var/lib/tavern/blobs');
 * await blobs.sweep(Date.now() - 6 * 3600_000); // at startup: temp files a crash left behind
 */
export class FsBlobs implements Blobs, StagedBlobs {
  readonly #root: string;
  readonly #temp: string;

  constructor(root: string) {
    this.#root = resolve(root);
    this.#temp = join(this.#root, TEMP_DIR);
  }

  async begin(key: string): Promise<BlobWriter> {
    const target = this.#locate(key);
    await mkdir(this.#temp, { recursive: true });
    const temp = join(this.#temp, randomUUID());
    return new FsWriter(await open(temp, 'wx', 0o644), temp, target);
  }

  async open(key: string, range?: ByteRange): Promise<BlobReader | undefined> {
    const file = this.#locate(key);
    let handle: FileHandle;
    try {
      handle = await open(file, 'r');
    } catch (e) {
      if (isMissing(e) || codeOf(e) === 'EISDIR') return undefined;
      throw e;
    }
    const info = await handle.stat().catch(async (e: unknown) => {
      await handle.close();
      throw e;
    });
    if (!info.isFile()) {
      await handle.close();
      return undefined;
    }
    if (range === undefined) return new FsReader(handle, 0, info.size);
    if (range.start < 0 || range.end < range.start || range.end >= info.size) {
      await handle.close();
      throw new Error(`Range ${range.start}-${range.end} is outside blob ${JSON.stringify(key)} of ${info.size} bytes.`);
    }
    return new FsReader(handle, range.start, range.end - range.start + 1);
  }

  async stat(key: string): Promise<BlobStat | undefined> {
    try {
      const info = await stat(this.#locate(key));
      return info.isFile() ? { size: info.size } : undefined;
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.#locate(key), { recursive: true, force: true });
  }

  async createStaged(key: string, size: number): Promise<void> {
    const dir = this.#locate(key);
    const parts = join(dir, STAGED_PARTS);
    const created = await mkdir(parts, { recursive: true });
    const handle = await open(join(dir, STAGED_DATA), 'w', 0o644);
    try {
      await handle.truncate(size);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await syncCreated(dir, created);
  }

  async writePart(key: string, part: number, offset: number, length: number): Promise<PartWriter | undefined> {
    const dir = this.#locate(key);
    let handle: FileHandle;
    try {
      handle = await open(join(dir, STAGED_DATA), 'r+');
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
    try {
      const record = join(dir, STAGED_PARTS, String(part));
      if ((await stat(record).catch(() => undefined)) !== undefined) {
        await rm(record, { force: true });
        await syncDir(dirname(record));
      }
      return new FsPartWriter(handle, offset, length, () => this.#record(record, length));
    } catch (e) {
      await handle.close();
      throw e;
    }
  }

  async stagedParts(key: string): Promise<ReadonlyMap<number, number> | undefined> {
    const dir = join(this.#locate(key), STAGED_PARTS);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
    const parts = new Map<number, number>();
    for (const name of names) {
      let text: string;
      try {
        text = await readFile(join(dir, name), 'utf8');
      } catch (e) {
        if (isMissing(e)) continue;
        throw e;
      }
      if (text !== undefined && /^[1-9][0-9]*$/.test(name) && /^(?:0|[1-9][0-9]*)$/.test(text)) parts.set(Number(name), Number(text));
    }
    return parts;
  }

  async publishStaged(key: string, to: string): Promise<boolean> {
    const dir = this.#locate(key);
    const target = this.#locate(to);
    const targetDir = dirname(target);
    const created = await mkdir(targetDir, { recursive: true });
    try {
      await rename(join(dir, STAGED_DATA), target);
    } catch (e) {
      if (!isMissing(e)) throw e;
      // Published before a crash (its records are deleted only after): the bytes are at `to`.
      const staged = await stat(join(dir, STAGED_PARTS)).then(() => true, () => false);
      return staged && (await this.stat(to)) !== undefined;
    }
    await syncCreated(targetDir, created);
    await syncDir(dir);
    return true;
  }

  /** Records a part of `length` bytes as received, durably (its bytes already are). */
  async #record(record: string, length: number): Promise<void> {
    await mkdir(this.#temp, { recursive: true });
    const temp = join(this.#temp, randomUUID());
    const handle = await open(temp, 'wx', 0o644);
    try {
      await handle.writeFile(String(length));
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temp, record);
    } catch (e) {
      await rm(temp, { force: true });
      throw e;
    }
    await syncDir(dirname(record));
  }

  /**
   * Deletes temp files last modified before `before` (epoch ms): what writers a crash interrupted
   * left behind. Returns how many it deleted.
   *
   * @example
   * await blobs.sweep(Date.now() - 6 * 3600_000) // 0 after a clean shutdown
   */
  async sweep(before: number): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.#temp);
    } catch (e) {
      if (isMissing(e)) return 0;
      throw e;
    }
    let deleted = 0;
    for (const name of names) {
      const file = join(this.#temp, name);
      const info = await stat(file).catch(() => undefined);
      if (info !== undefined && info.mtimeMs < before) {
        await rm(file, { force: true });
        deleted += 1;
      }
    }
    return deleted;
  }

  /** The absolute file for `key`; throws if the key is not a plain relative path under the root. */
  #locate(key: string): string {
    const bad = !isBlobKey(key) || key.split('/', 1)[0] === TEMP_DIR;
    const file = resolve(this.#root, key);
    if (bad || !file.startsWith(this.#root + sep)) throw new Error(`Invalid blob key ${JSON.stringify(key)}.`);
    return file;
  }
}

class FsWriter implements BlobWriter {
  readonly #handle: FileHandle;
  readonly #temp: string;
  readonly #target: string;
  #state: 'open' | 'committing' | 'done' = 'open';

  constructor(handle: FileHandle, temp: string, target: string) {
    this.#handle = handle;
    this.#temp = temp;
    this.#target = target;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.#state !== 'open') throw new Error('The blob writer is spent.');
    let done = 0;
    while (done < chunk.byteLength) {
      const { bytesWritten } = await this.#handle.write(chunk, done, chunk.byteLength - done);
      done += bytesWritten;
    }
  }

  async commit(): Promise<void> {
    if (this.#state !== 'open') throw new Error('The blob writer is spent.');
    this.#state = 'committing';
    try {
      await this.#handle.sync();
      await this.#handle.close();
      const dir = dirname(this.#target);
      const created = await mkdir(dir, { recursive: true });
      await rename(this.#temp, this.#target);
      // The rename changed `dir`; each directory mkdir created changed its parent.
      await syncCreated(dir, created);
      this.#state = 'done';
    } catch (e) {
      this.#state = 'done';
      await this.#handle.close().catch(() => undefined);
      await rm(this.#temp, { force: true });
      throw e;
    }
  }

  async abort(): Promise<void> {
    if (this.#state !== 'open') return;
    this.#state = 'done';
    await this.#handle.close().catch(() => undefined);
    await rm(this.#temp, { force: true });
  }
}

/**
 * A part written in place: chunks gathered into batches of {@link PART_BATCH} bytes, each one
 * positional `writev` while the next batch gathers (one write in flight at a time).
 */
class FsPartWriter implements PartWriter {
  readonly #handle: FileHandle;
  readonly #end: number;
  readonly #record: () => Promise<void>;
  /** Where the next batch goes. */
  #position: number;
  #batch: Uint8Array[] = [];
  #batchBytes = 0;
  /** The write in flight (already settled when none). */
  #writing: Promise<void> = Promise.resolve();
  #state: 'open' | 'flushed' | 'done' = 'open';

  constructor(handle: FileHandle, offset: number, length: number, record: () => Promise<void>) {
    this.#handle = handle;
    this.#position = offset;
    this.#end = offset + length;
    this.#record = record;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.#state !== 'open') throw new Error('The part writer is spent.');
    if (this.#position + this.#batchBytes + chunk.byteLength > this.#end) throw new Error('A write past the end of the part.');
    this.#batch.push(chunk);
    this.#batchBytes += chunk.byteLength;
    if (this.#batchBytes >= PART_BATCH) await this.#launch();
  }

  async flush(): Promise<void> {
    if (this.#state !== 'open') throw new Error('The part writer is spent.');
    await this.#launch();
    await this.#writing;
    await this.#handle.datasync();
    this.#state = 'flushed';
  }

  async commit(): Promise<void> {
    if (this.#state !== 'flushed') throw new Error('A part is committed once flushed, once.');
    this.#state = 'done';
    await this.#handle.close();
    await this.#record();
  }

  async abort(): Promise<void> {
    if (this.#state === 'done') return;
    this.#state = 'done';
    await this.#writing.catch(() => undefined);
    await this.#handle.close();
  }

  /** Starts writing the gathered batch once the write in flight is done (its failure throws here). */
  async #launch(): Promise<void> {
    await this.#writing;
    if (this.#batchBytes === 0 || this.#state === 'done') return;
    const writing = writeAllAt(this.#handle, this.#batch, this.#position);
    // Observed by the next launch, flush or abort.
    writing.catch(() => undefined);
    this.#writing = writing;
    this.#position += this.#batchBytes;
    this.#batch = [];
    this.#batchBytes = 0;
  }
}

class FsReader implements BlobReader {
  readonly #handle: FileHandle;
  readonly #start: number;
  readonly size: number;
  #closed = false;

  constructor(handle: FileHandle, start: number, size: number) {
    this.#handle = handle;
    this.#start = start;
    this.size = size;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array, void, undefined> {
    const end = this.#start + this.size;
    try {
      for (let position = this.#start; position < end; ) {
        const want = Math.min(READ_CHUNK, end - position);
        const { bytesRead, buffer } = await this.#handle.read(Buffer.allocUnsafe(want), 0, want, position);
        if (bytesRead === 0) throw new Error(`Blob truncated at ${position} of ${end} bytes.`);
        position += bytesRead;
        yield buffer.subarray(0, bytesRead);
      }
    } finally {
      await this.close();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#handle.close();
  }
}
