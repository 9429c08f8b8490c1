import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { isBlobKey, type BlobReader, type BlobStat, type BlobWriter, type Blobs, type ByteRange } from '../../io/blobs.js';

/** Where writers keep their bytes until they commit (not a valid key's first segment). */
const TEMP_DIR = '.tmp';
/** The most a reader reads per chunk. */
const READ_CHUNK = 64 * 1024;

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

/**
 * Blobs as files under a root directory. A writer streams to `<root>/.tmp/<uuid>`; `commit`
 * fsyncs it, creates the key's directories, renames it into place (atomic on POSIX: a reader
 * sees the old file or the new one, never part of one) and fsyncs the directories it changed.
 * Keys that could escape the root (`..`, absolute, NUL, backslashes) or reach `.tmp` throw.
 *
 * @example
 * const blobs = new FsBlobs('/var/lib/tavern/blobs');
 * await blobs.sweep(Date.now() - 6 * 3600_000); // at startup: temp files a crash left behind
 */
export class FsBlobs implements Blobs {
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
      const changed = [dir];
      if (created !== undefined) for (let d = dir; d !== dirname(created); d = dirname(d)) changed.push(dirname(d));
      for (const d of new Set(changed)) await syncDir(d);
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
