/**
 * Byte storage for uploads (build images, CDN site files): streamed in, made visible atomically,
 * streamed out. Nothing here holds a whole blob in memory.
 *
 * A key is a relative `/`-separated path: no empty, `.` or `..` segment, no leading `/`, no
 * backslash, no NUL. Implementations refuse any other key by throwing (callers validate user
 * paths first, so a bad key is a bug).
 */

/**
 * Bytes on their way to a key. Nothing is visible under the key until {@link BlobWriter.commit};
 * then the whole blob is, at once, replacing any blob already there. After `commit` or `abort`,
 * the writer is spent.
 *
 * @example
 * const w = await blobs.begin('uploads/u1/files/index.html');
 * try { for await (const chunk of body) await w.write(chunk); await w.commit(); } finally { await w.abort(); }
 */
export interface BlobWriter {
  /** Appends `chunk`; resolves once it may be reused (backpressure: await each write). */
  write(chunk: Uint8Array): Promise<void>;
  /** Makes the bytes written so far visible under the key, durably and atomically. */
  commit(): Promise<void>;
  /** Discards the bytes; a no-op once committed or aborted. */
  abort(): Promise<void>;
}

/**
 * A blob opened for reading: the bytes as they were when opened, even if the key is replaced or
 * deleted meanwhile. Iterate it once; reading to the end or stopping early releases it.
 *
 * @example
 * const r = await blobs.open('uploads/u1/files/index.html');
 * if (r !== undefined) for await (const chunk of r) res.write(chunk);
 */
export interface BlobReader extends AsyncIterable<Uint8Array> {
  /** Its length in bytes. */
  readonly size: number;
  /** Releases it without reading (e.g. for a HEAD request); safe to call more than once. */
  close(): Promise<void>;
}

/** Bytes `start` to `end` of a blob, both inclusive (an HTTP range). */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/** What {@link Blobs.stat} reports. */
export interface BlobStat {
  readonly size: number;
}

/**
 * @example
 * const w = await blobs.begin('a/b.txt'); await w.write(bytes); await w.commit();
 * (await blobs.stat('a/b.txt'))?.size // bytes.length
 */
export interface Blobs {
  /** Starts writing a blob under `key` (to a temporary place until committed). */
  begin(key: string): Promise<BlobWriter>;
  /**
   * The committed blob under `key`, or undefined if there is none; with `range`, only those bytes
   * (the reader's `size` is the range's length; the range must lie within the blob).
   */
  open(key: string, range?: ByteRange): Promise<BlobReader | undefined>;
  stat(key: string): Promise<BlobStat | undefined>;
  /** Removes the blob under `key`, or every blob under `key/`; nothing if there is neither. */
  delete(key: string): Promise<void>;
}
