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

/**
 * Writes one part of a staged blob ({@link StagedBlobs.writePart}) in place, at its byte offset.
 *
 * @example
 * for await (const chunk of body) await w.write(chunk);
 * await w.flush(); await w.commit(); // then w.abort() is a no-op
 */
export interface PartWriter {
  /**
   * Appends `chunk` after the bytes written so far (never past the part's length: that throws).
   * The writer may keep `chunk` until {@link PartWriter.flush}: do not change it afterwards.
   * Resolves when more may be written (backpressure: await each write).
   */
  write(chunk: Uint8Array): Promise<void>;
  /** Writes out every byte given and makes them durable (nothing is recorded yet). */
  flush(): Promise<void>;
  /** Records the part as received, with the bytes flushed (durably); the writer is spent. */
  commit(): Promise<void>;
  /**
   * Stops: waits for a write in flight, then releases the writer; the part stays unrecorded (its
   * bytes in the staged blob are garbage until a later writer of that part commits). A no-op once
   * committed or aborted.
   */
  abort(): Promise<void>;
}

/**
 * A store on a local disk whose multipart files are assembled in place: each part is written
 * once, at its offset, into one staged blob per file, and publishing it is a rename (no second
 * pass over the bytes). A staged blob lives under its own key (a prefix: deleting it or anything
 * above it removes the staged blob and its records) and is never visible through `open`/`stat`.
 *
 * @example
 * await blobs.createStaged('uploads/u1/assembly/0', 25);
 * const w = await blobs.writePart('uploads/u1/assembly/0', 2, 10, 10); // part 2: bytes 10-19
 * if (w) { await w.write(bytes); await w.flush(); await w.commit(); }
 * await blobs.publishStaged('uploads/u1/assembly/0', 'uploads/u1/files/image.tar');
 */
export interface StagedBlobs {
  /** Creates the staged blob `key` of `size` bytes (no part received yet), durably. */
  createStaged(key: string, size: number): Promise<void>;
  /**
   * A writer of part `part` (`length` bytes at `offset`), the part's record removed first
   * (durably: until it commits again the part counts as missing); undefined when there is no
   * staged blob `key` (never created, deleted, or published). Writers of different parts may run
   * at once; two writers of one part must not overlap (the caller aborts the first).
   */
  writePart(key: string, part: number, offset: number, length: number): Promise<PartWriter | undefined>;
  /**
   * The parts recorded as received: part number → bytes; undefined if there is no staged blob
   * (never created or deleted; one published keeps its records until deleted).
   */
  stagedParts(key: string): Promise<ReadonlyMap<number, number> | undefined>;
  /**
   * Makes the staged blob the blob under `to` (atomically and durably, replacing any); true if it
   * did, or did earlier (the staged blob's bytes already moved there: a retry after a crash),
   * false if there is no staged blob `key`. Later writers of `key` get undefined.
   */
  publishStaged(key: string, to: string): Promise<boolean>;
}

/**
 * Whether `blobs` assembles multipart files in place ({@link StagedBlobs}).
 *
 * @example
 * if (canStage(blobs)) await blobs.createStaged(key, size);
 */
export const canStage = <B extends Blobs>(blobs: B): blobs is B & StagedBlobs =>
  typeof (blobs as Partial<StagedBlobs>).writePart === 'function';

/** A part of a multipart upload as the store lists it. */
export interface UploadedPart {
  /** 1-based. */
  readonly part: number;
  readonly size: number;
  readonly etag: string;
}

/**
 * A store clients upload to directly, with presigned requests (S3): Tavern hands out the URLs,
 * the bytes never pass through it.
 *
 * @example
 * const url = await direct.presignPut('uploads/u/staging/index.html', 5, 'text/html', 3600);
 */
export interface DirectUploads {
  /** A URL for one PUT of exactly `length` bytes (and `contentType`, when given) to `key`. */
  presignPut(key: string, length: number, contentType: string | undefined, expiresInSeconds: number): Promise<string>;
  /** Opens a multipart upload to `key`; its id. */
  createMultipart(key: string, contentType?: string): Promise<string>;
  /** A URL for one PUT of part `part` (1-based) of exactly `length` bytes. */
  presignPart(key: string, multipartId: string, part: number, length: number, expiresInSeconds: number): Promise<string>;
  /** Every uploaded part (all pages), by part number. */
  listParts(key: string, multipartId: string): Promise<readonly UploadedPart[]>;
  /** Makes the parts, in order, the object under `key` (visible at once, whole). */
  completeMultipart(key: string, multipartId: string, parts: readonly UploadedPart[]): Promise<void>;
  /** Discards a multipart upload and its parts; nothing if it is gone already. */
  abortMultipart(key: string, multipartId: string): Promise<void>;
  /** Copies the object under `from` to `to` inside the store. */
  copy(from: string, to: string): Promise<void>;
}

const MAX_KEY_LENGTH = 4096;

/**
 * Whether `key` is a valid blob key: 1 to 4096 characters, `/`-separated, no empty, `.` or `..`
 * segment, no backslash, no NUL (so no key can name anything outside the store's root).
 *
 * @example
 * isBlobKey('uploads/u1/files/index.html') // true
 * isBlobKey('a/../b') // false
 */
export const isBlobKey = (key: string): boolean =>
  key.length > 0 &&
  key.length <= MAX_KEY_LENGTH &&
  !key.includes('\0') &&
  !key.includes('\\') &&
  !key.split('/').some((s) => s === '' || s === '.' || s === '..');

/**
 * The blob store could not be reached or failed (an S3 endpoint down, a 5xx): the operation did
 * not happen. The HTTP edge answers `STORAGE_UNAVAILABLE` (503).
 */
export class StorageUnavailableError extends Error {
  override readonly name = 'StorageUnavailableError';
}
