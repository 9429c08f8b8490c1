/**
 * Build and CDN uploads, served by Tavern itself (wire.md §6, reliability.md §1.4): `prepare`
 * validates the file list and hands out presigned PUT URLs, `put` streams one part into a blob,
 * `complete` checks every part arrived, assembles multipart files and publishes the upload, and
 * `openFile` reads a published file. No HTTP framework here: the edge passes URLs and byte streams.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { matchError, type MatchError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import { canStage, type Blobs, type DirectUploads, type PartWriter, type StagedBlobs } from '../io/blobs.js';
import type { CatalogStore, UploadFile, UploadRecord } from '../io/catalog.js';
import type { Clock, Random } from '../io/index.js';
import { pathProblem, pathSet } from './upload-paths.js';
import { DirectFlow } from './uploads-direct.js';
import { DEFAULT_UPLOAD_LIMITS, type OpenedFile, type PreparedUpload, type PrepareUpload, type UploadLimits } from './upload-types.js';

export * from './upload-types.js';

/**
 * @example
 * { catalog, blobs: new FsBlobs(dir), clock, random, secret: randomBytes(32), publicOrigin: 'http://127.0.0.1:8080' }
 */
export interface UploadsDeps {
  readonly catalog: Pick<CatalogStore, 'createUpload' | 'getUpload' | 'completeUpload' | 'expiredUploads' | 'abandonUpload'>;
  readonly blobs: Blobs;
  readonly clock: Clock;
  readonly random: Random;
  /** The HMAC-SHA256 key presigned URLs are signed with. */
  readonly secret: Uint8Array;
  /** Where clients reach Tavern, e.g. `http://127.0.0.1:8080` (a path prefix is allowed). */
  readonly publicOrigin: string;
  readonly limits?: Partial<UploadLimits>;
  /**
   * The blob store clients upload to directly (S3): then presigned requests point at it, not at
   * Tavern (`put` is not used), and completion checks and publishes there.
   */
  readonly direct?: DirectUploads;
}

/** What a presigned URL names and the signature binds. */
interface Target {
  readonly uploadId: string;
  readonly path: string;
  /** 1-based. */
  readonly part: number;
  readonly offset: number;
  readonly length: number;
  readonly expires: number;
}

const CONTENT_TYPE = /^[\x20-\x7e]{1,255}$/;
const UINT = /^(?:0|[1-9][0-9]{0,15})$/;

const SIGNATURE = /^[0-9a-f]{64}$/;

const invalid = (reason: string, path?: readonly string[]): MatchError =>
  matchError('UPLOAD_INVALID', { reason }, path === undefined ? {} : { path });
const tooLarge = (max: number, path: readonly string[]): MatchError => matchError('UPLOAD_TOO_LARGE', { max }, { path });
const notFound = (): MatchError => matchError('UPLOAD_NOT_FOUND');
const completed = (): MatchError => invalid('the upload is already complete');

/**
 * Copies the body into `writer`, stopping as soon as more than `limit` bytes came: the bytes seen,
 * and whether the body failed midway (`cut`: the client went away or the connection broke, a
 * client event) or `stopped()` turned true (checked before each write). A failing write is the
 * server's own failure and throws.
 */
const copy = async (
  body: AsyncIterable<Uint8Array>,
  writer: { write(chunk: Uint8Array): Promise<void> },
  limit: number,
  stopped: () => boolean = () => false,
): Promise<{ readonly seen: number; readonly cut: boolean }> => {
  const chunks = body[Symbol.asyncIterator]();
  let seen = 0;
  for (;;) {
    let next: IteratorResult<Uint8Array>;
    try {
      next = await chunks.next();
    } catch {
      return { seen, cut: true };
    }
    if (next.done === true) return { seen, cut: false };
    seen += next.value.byteLength;
    if (seen > limit) {
      await chunks.return?.();
      return { seen, cut: false };
    }
    if (stopped()) {
      await chunks.return?.();
      return { seen, cut: true };
    }
    await writer.write(next.value);
  }
};

/** Where a completed upload's file lives in the blobs (the CDN reads it there). */
export const uploadFileKey = (uploadId: string, path: string): string => `uploads/${uploadId}/files/${path}`;
const partsKey = (uploadId: string): string => `uploads/${uploadId}/parts`;
const partKey = (uploadId: string, index: number, part: number): string => `${partsKey(uploadId)}/${index}/${part}`;
const assemblyKey = (uploadId: string): string => `uploads/${uploadId}/assembly`;
/** Where a multipart file is assembled in place, on a store that can ({@link StagedBlobs}). */
const stagedKey = (uploadId: string, index: number): string => `${assemblyKey(uploadId)}/${index}`;
/** Where a PUT of `part` lands: single-part files go straight to their final key. */
const putKey = (uploadId: string, index: number, file: UploadFile, part: number): string =>
  file.parts === 1 ? uploadFileKey(uploadId, file.path) : partKey(uploadId, index, part);

/** A PUT writing a part in place: a later PUT of the same part stops it. */
interface PartClaim {
  readonly writer: PartWriter;
  stopped: boolean;
}

/**
 * Build and CDN uploads. Blob layout: `uploads/<id>/files/<path>` (single-part files are PUT there
 * directly). Multipart files, on a store that assembles in place ({@link StagedBlobs}: the local
 * disk), are written part by part at their offsets into `uploads/<id>/assembly/<file index>`
 * (created by `prepare`) and published by renaming it on completion: each byte is written once.
 * On other stores (or for a file without a staged file: prepared by an earlier Tavern) they are
 * assembled on completion from `uploads/<id>/parts/<file index>/<part>`.
 *
 * In place, a PUT claims its part (under the upload's lock, completion rechecked; a PUT of the
 * same part still streaming is stopped and waited for; the part's record removed), streams into
 * the staged file outside the lock, flushes its bytes to disk, and records the part under the
 * lock if no later PUT claimed it meanwhile. So while a PUT writes, its part counts as missing and
 * completion is refused; once completion renamed the file, no writer of it is left and every
 * later PUT is refused.
 *
 * Visibility: files are read only through {@link Uploads.openFile}, which answers only once the
 * catalog marks the upload complete. `complete` marks it only after every file is committed whole
 * (each blob commit is atomic), and no PUT commits after that: a PUT's final commit and `complete`
 * run one at a time per upload and the PUT rechecks completion first. So no reader sees a partial
 * upload, and a completed upload never changes. (This serialisation is per process: run one
 * process per blob root.)
 *
 * @example
 * const uploads = new Uploads({ catalog, blobs, clock, random, secret, publicOrigin: 'http://127.0.0.1:8080' });
 * const prepared = await uploads.prepare({ gameId, kind: 'cdn', files: [{ path: 'index.html', contentLength: 5 }] });
 */
export class Uploads {
  readonly #catalog: UploadsDeps['catalog'];
  readonly #blobs: Blobs;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #secret: Uint8Array;
  readonly #origin: string;
  readonly #basePath: string;
  readonly #limits: UploadLimits;
  readonly #direct: DirectFlow | undefined;
  /** Per upload id, the tail of its queue of exclusive sections. */
  readonly #locks = new Map<string, Promise<void>>();
  /** The store, when it assembles multipart files in place (and uploads are not direct). */
  readonly #staged: StagedBlobs | undefined;
  /** PUTs writing a part in place now, by `<upload id>/<file index>/<part>`. */
  readonly #writing = new Map<string, PartClaim>();

  constructor(deps: UploadsDeps) {
    this.#catalog = deps.catalog;
    this.#blobs = deps.blobs;
    this.#clock = deps.clock;
    this.#random = deps.random;
    this.#secret = deps.secret;
    this.#origin = deps.publicOrigin.replace(/\/+$/, '');
    this.#basePath = new URL(this.#origin).pathname.replace(/\/+$/, '');
    this.#limits = { ...DEFAULT_UPLOAD_LIMITS, ...deps.limits };
    this.#direct = deps.direct === undefined ? undefined : new DirectFlow(deps.direct, deps.blobs, (f) => this.#chunks(f), uploadFileKey);
    this.#staged = deps.direct === undefined && canStage(deps.blobs) ? deps.blobs : undefined;
  }

  /**
   * Validates the files and stores a new upload with one presigned PUT per part. Every problem is
   * reported with its wire field path (`['files', '3', 'path']`, `content_length`, `content_type`,
   * `['files']` for the count and the total, `['multipart_upload']`); the error is the first one
   * and its `metadata.errors` lists them all.
   *
   * @effects CatalogStore, Clock, Random
   * @example
   * const r = await uploads.prepare({ gameId, kind: 'build', files: [{ path: 'image.tar', contentLength: 3e8 }], multipart: true });
   * if (r.ok) r.value.presigned.map((p) => p.byteOffset) // [0, 104857600, 209715200]
   */
  async prepare(request: PrepareUpload): Promise<Result<PreparedUpload, MatchError>> {
    const planned = this.#plan(request);
    if (!planned.ok) return planned;
    const now = this.#clock.now();
    const id = this.#random.uuid();
    const files = this.#direct === undefined ? planned.value : await this.#direct.open(id, planned.value);
    const multipart = files.some((f) => f.parts > 1);
    const created = await this.#catalog.createUpload({
      id,
      gameId: request.gameId,
      kind: request.kind,
      files,
      createdAt: now,
      expiresAt: now + (multipart ? this.#limits.multipartExpiryMs : this.#limits.singleExpiryMs),
    });
    if (!created.ok) {
      await this.#direct?.abort({ id, files });
      throw new Error(`Upload id ${created.error.value} is already taken.`);
    }
    const upload = created.value;
    for (const [index, file] of files.entries()) if (file.parts > 1) await this.#staged?.createStaged(stagedKey(id, index), file.contentLength);
    const presigned = this.#direct !== undefined
      ? await this.#direct.presign(upload, now)
      : files.flatMap((file) =>
        this.#chunks(file).map(({ part, offset, length }) => ({
          path: file.path,
          url: this.#url({ uploadId: upload.id, path: file.path, part, offset, length, expires: upload.expiresAt }),
          byteOffset: offset,
          contentLength: length,
        })),
      );
    return ok({ upload, presigned });
  }

  /**
   * Receives one presigned PUT. Checks the signature (UPLOAD_SIGNATURE_INVALID), the expiry when
   * the request starts (UPLOAD_EXPIRED: a PUT that starts in time may finish), `declaredLength`
   * (the `Content-Length`, if any) and that the upload exists (UPLOAD_NOT_FOUND) and is not
   * complete (UPLOAD_INVALID). Then streams the body to a temporary blob, refusing it (nothing
   * stored) unless exactly the part's length arrives (UPLOAD_INVALID), and commits it, replacing
   * an earlier PUT of the same part.
   *
   * @effects CatalogStore, Blobs, Clock
   * @example
   * await uploads.put(new URL(presigned.url), request.body, Number(request.headers['content-length']))
   */
  async put(url: URL, body: AsyncIterable<Uint8Array>, declaredLength?: number): Promise<Result<void, MatchError>> {
    const target = this.#verify(url);
    if (!target.ok) return target;
    const { uploadId, path, part, offset, length } = target.value;
    if (declaredLength !== undefined && declaredLength !== length) {
      return err(invalid(`the part is ${length} bytes, not ${declaredLength}`));
    }
    const upload = await this.#catalog.getUpload(uploadId);
    const index = upload?.files.findIndex((f) => f.path === path) ?? -1;
    const file = upload?.files[index];
    if (upload === undefined || file === undefined || part > file.parts || offset + length > file.contentLength) return err(notFound());
    if (upload.completedAt !== undefined) return err(completed());
    if (this.#staged !== undefined && file.parts > 1 && (await this.#staged.stagedParts(stagedKey(upload.id, index))) !== undefined) {
      return this.#putInPlace(this.#staged, upload.id, index, target.value, body);
    }
    const writer = await this.#blobs.begin(putKey(upload.id, index, file, part));
    try {
      const { seen, cut } = await copy(body, writer, length);
      if (cut) return err(invalid(`the body ended after ${seen} of ${length} bytes`));
      if (seen > length) return err(invalid(`the body is longer than ${length} bytes`));
      if (seen < length) return err(invalid(`the body has ${seen} of ${length} bytes`));
      return await this.#exclusive(upload.id, async () => {
        if ((await this.#catalog.getUpload(upload.id))?.completedAt !== undefined) return err(completed());
        await writer.commit();
        return ok(undefined);
      });
    } finally {
      await writer.abort();
    }
  }

  /**
   * Publishes an upload once every part of every file arrived whole (else UPLOAD_INCOMPLETE, whose
   * reason names the first missing file or part and `metadata.missing` lists them all), assembling
   * multipart files first. Idempotent: a completed upload is returned as it is. Unknown, or
   * belonging to another game than `gameId`: UPLOAD_NOT_FOUND.
   *
   * @effects CatalogStore, Blobs, Clock
   * @example
   * const r = await uploads.complete(uploadId, gameId); if (r.ok) r.value.completedAt // now
   */
  async complete(uploadId: string, gameId?: string): Promise<Result<UploadRecord, MatchError>> {
    const result = await this.#exclusive(uploadId, () => this.#complete(uploadId, gameId));
    if (result.ok && this.#direct === undefined && result.value.files.some((f) => f.parts > 1)) {
      await this.#blobs.delete(partsKey(result.value.id));
      if (this.#staged !== undefined) await this.#blobs.delete(assemblyKey(result.value.id));
    }
    return result;
  }

  /**
   * A file of a completed upload, opened (undefined if the upload is unknown or incomplete, or has
   * no such path). Only the upload's own paths resolve, so no request path can escape it.
   *
   * @effects CatalogStore, Blobs
   * @example
   * const f = await uploads.openFile(site.uploadId, 'index.html'); if (f) for await (const c of f.body) res.write(c);
   */
  async openFile(uploadId: string, path: string): Promise<OpenedFile | undefined> {
    const upload = await this.#catalog.getUpload(uploadId);
    if (upload?.completedAt === undefined) return undefined;
    const file = upload.files.find((f) => f.path === path);
    if (file === undefined) return undefined;
    const body = await this.#blobs.open(uploadFileKey(upload.id, file.path));
    return body === undefined ? undefined : { file, body };
  }

  /**
   * Abandons every upload that expired before `now` without completing: its multipart uploads are
   * aborted, what it stored is deleted, and it is marked so that it can never complete. Returns
   * how many it abandoned. Run it now and then (the server does, every minute).
   *
   * @effects CatalogStore, Blobs
   * @example
   * await uploads.sweepExpired() // 0 when every upload completed in time
   */
  async sweepExpired(batch = 100): Promise<number> {
    let abandoned = 0;
    for (;;) {
      const expired = await this.#catalog.expiredUploads(this.#clock.now(), batch);
      for (const upload of expired) {
        await this.#exclusive(upload.id, async () => {
          const current = await this.#catalog.getUpload(upload.id);
          if (current === undefined || current.completedAt !== undefined || current.abandonedAt !== undefined) return;
          await this.#direct?.abort(current);
          await this.#blobs.delete(`uploads/${current.id}`);
          await this.#catalog.abandonUpload(current.id, this.#clock.now());
          abandoned += 1;
        });
      }
      if (expired.length < batch) return abandoned;
    }
  }

  async #complete(uploadId: string, gameId: string | undefined): Promise<Result<UploadRecord, MatchError>> {
    const upload = await this.#catalog.getUpload(uploadId);
    if (upload === undefined || (gameId !== undefined && upload.gameId !== gameId)) return err(notFound());
    if (upload.completedAt !== undefined) return ok(upload);
    if (upload.abandonedAt !== undefined) return err(matchError('UPLOAD_EXPIRED'));
    const missing = this.#direct === undefined ? await this.#missing(upload) : await this.#direct.missing(upload);
    const [first] = missing;
    if (first !== undefined) return err(matchError('UPLOAD_INCOMPLETE', { reason: first.reason }, { path: ['files', String(upload.files.findIndex((f) => f.path === first.path)), 'path'], metadata: { missing } }));
    if (this.#direct !== undefined) await this.#direct.publish(upload);
    else for (const [index, file] of upload.files.entries()) if (file.parts > 1) await this.#publish(upload.id, index, file);
    const done = await this.#catalog.completeUpload(upload.id, this.#clock.now());
    return done === undefined ? err(notFound()) : ok(done);
  }

  /** Every file or part that has not arrived, or file whose parts do not add up to its length. */
  async #missing(upload: UploadRecord): Promise<{ path: string; part?: number; reason: string }[]> {
    const missing: { path: string; part?: number; reason: string }[] = [];
    for (const [index, file] of upload.files.entries()) {
      let size = 0;
      let whole = true;
      // In place, or (no staged file: prepared by an earlier Tavern) as one blob per part.
      const staged = this.#staged !== undefined && file.parts > 1 ? await this.#staged.stagedParts(stagedKey(upload.id, index)) : undefined;
      for (let part = 1; part <= file.parts; part += 1) {
        const bytes = staged?.get(part);
        const stat = staged === undefined ? await this.#blobs.stat(putKey(upload.id, index, file, part)) : bytes === undefined ? undefined : { size: bytes };
        if (stat !== undefined) size += stat.size;
        else if (file.parts === 1) missing.push({ path: file.path, reason: `file '${file.path}' has not been uploaded` });
        else missing.push({ path: file.path, part, reason: `part ${part} of ${file.parts} of file '${file.path}' has not been uploaded` });
        whole &&= stat !== undefined;
      }
      if (whole && size !== file.contentLength) {
        missing.push({ path: file.path, reason: `file '${file.path}' has ${size} of ${file.contentLength} bytes` });
      }
    }
    return missing;
  }

  /**
   * Streams one PUT into its part of the staged file (see the class's comment): the part is
   * recorded only once all its bytes are on disk, and only if no later PUT of it started.
   */
  async #putInPlace(staged: StagedBlobs, uploadId: string, index: number, target: Target, body: AsyncIterable<Uint8Array>): Promise<Result<void, MatchError>> {
    const { part, offset, length } = target;
    const claimKey = `${uploadId}/${index}/${part}`;
    const claimed = await this.#exclusive(uploadId, async (): Promise<Result<PartClaim, MatchError>> => {
      const current = await this.#catalog.getUpload(uploadId);
      if (current === undefined) return err(notFound());
      if (current.completedAt !== undefined) return err(completed());
      if (current.abandonedAt !== undefined) return err(matchError('UPLOAD_EXPIRED'));
      const earlier = this.#writing.get(claimKey);
      if (earlier !== undefined) {
        earlier.stopped = true;
        await earlier.writer.abort();
      }
      const writer = await staged.writePart(stagedKey(uploadId, index), part, offset, length);
      if (writer === undefined) return err(invalid('the file takes no more parts: complete the upload'));
      const claim: PartClaim = { writer, stopped: false };
      this.#writing.set(claimKey, claim);
      return ok(claim);
    });
    if (!claimed.ok) return claimed;
    const claim = claimed.value;
    const replaced = (): Result<void, MatchError> => err(invalid('a later PUT of this part replaced this one'));
    try {
      const { seen, cut } = await copy(body, claim.writer, length, () => claim.stopped);
      if (claim.stopped) return replaced();
      if (cut) return err(invalid(`the body ended after ${seen} of ${length} bytes`));
      if (seen > length) return err(invalid(`the body is longer than ${length} bytes`));
      if (seen < length) return err(invalid(`the body has ${seen} of ${length} bytes`));
      await claim.writer.flush();
      return await this.#exclusive(uploadId, async () => {
        if (claim.stopped) return replaced();
        // Completion cannot have happened (this part was missing all along), but expiry may have.
        const current = await this.#catalog.getUpload(uploadId);
        if (current?.abandonedAt !== undefined) return err(matchError('UPLOAD_EXPIRED'));
        await claim.writer.commit();
        return ok(undefined);
      });
    } finally {
      if (this.#writing.get(claimKey) === claim) this.#writing.delete(claimKey);
      await claim.writer.abort();
    }
  }

  /** Makes a multipart file's final blob: the staged file renamed, or its parts concatenated. */
  async #publish(uploadId: string, index: number, file: UploadFile): Promise<void> {
    if (this.#staged !== undefined && (await this.#staged.publishStaged(stagedKey(uploadId, index), uploadFileKey(uploadId, file.path)))) return;
    const writer = await this.#blobs.begin(uploadFileKey(uploadId, file.path));
    try {
      for (let part = 1; part <= file.parts; part += 1) {
        const reader = await this.#blobs.open(partKey(uploadId, index, part));
        if (reader === undefined) throw new Error(`Part ${part} of '${file.path}' in upload ${uploadId} vanished.`);
        for await (const chunk of reader) await writer.write(chunk);
      }
      await writer.commit();
    } finally {
      await writer.abort();
    }
  }

  /** The files as they will be stored, or every problem with the request. */
  #plan({ kind, files, multipart }: PrepareUpload): Result<UploadFile[], MatchError> {
    const limits = this.#limits;
    if (files.length > limits.maxFiles) return err(invalid(`too many files (at most ${limits.maxFiles})`, ['files']));
    const maxTotal = kind === 'build' ? limits.maxBuildBytes : limits.maxCdnBytes;
    const split = multipart === true && kind === 'build';
    const problems: MatchError[] = [];
    if (multipart === true && kind === 'cdn') problems.push(invalid('CDN sites are never multipart', ['multipart_upload']));
    const paths = pathSet(kind === 'cdn');
    const planned: UploadFile[] = [];
    let total = 0;
    for (const [i, { path, contentLength, contentType }] of files.entries()) {
      const at = (field: string): string[] => ['files', String(i), field];
      const pathWhy = pathProblem(path, limits) ?? paths.clash(path);
      if (pathWhy !== undefined) problems.push(invalid(`path ${pathWhy}`, at('path')));
      if (contentType !== undefined && !CONTENT_TYPE.test(contentType)) {
        problems.push(invalid('content type must be 1 to 255 printable ASCII characters', at('content_type')));
      }
      if (!Number.isSafeInteger(contentLength) || contentLength < 0) {
        problems.push(invalid('content length must be a whole number of bytes below 2^53', at('content_length')));
        continue;
      }
      if (contentLength > limits.maxFileBytes) problems.push(tooLarge(limits.maxFileBytes, at('content_length')));
      const parts = split && contentLength > limits.chunkBytes ? Math.ceil(contentLength / limits.chunkBytes) : 1;
      if (parts > limits.maxParts) problems.push(tooLarge(limits.chunkBytes * limits.maxParts, at('content_length')));
      if (total <= maxTotal && (total += contentLength) > maxTotal) problems.push(tooLarge(maxTotal, ['files']));
      planned.push({ path, contentLength, parts, ...(contentType !== undefined ? { contentType } : {}) });
    }
    const [first] = problems;
    return first === undefined ? ok(planned) : err({ ...first, metadata: { errors: problems } });
  }

  /** A file's parts: offsets and lengths (one part of the whole file unless it is multipart). */
  #chunks(file: UploadFile): { part: number; offset: number; length: number }[] {
    if (file.parts === 1) return [{ part: 1, offset: 0, length: file.contentLength }];
    const chunk = this.#limits.chunkBytes;
    return Array.from({ length: file.parts }, (_, i) => ({
      part: i + 1,
      offset: i * chunk,
      length: Math.min(chunk, file.contentLength - i * chunk),
    }));
  }

  #sign(t: Target): Buffer {
    const message = JSON.stringify(['tavern-upload-put-v1', t.uploadId, t.path, t.part, t.offset, t.length, t.expires]);
    return createHmac('sha256', this.#secret).update(message).digest();
  }

  #url(t: Target): string {
    const path = t.path.split('/').map(encodeURIComponent).join('/');
    const query = `part=${t.part}&offset=${t.offset}&length=${t.length}&expires=${t.expires}`;
    return `${this.#origin}/uploads/${encodeURIComponent(t.uploadId)}/${path}?${query}&signature=${this.#sign(t).toString('hex')}`;
  }

  /** What a presigned URL names, if Tavern signed it (compared in constant time) and it has not expired. */
  #verify(url: URL): Result<Target, MatchError> {
    const invalidSignature = err(matchError('UPLOAD_SIGNATURE_INVALID'));
    const base = this.#basePath !== '' && url.pathname.startsWith(`${this.#basePath}/`) ? this.#basePath.length : 0;
    const rest = url.pathname.slice(base);
    if (!rest.startsWith('/uploads/')) return invalidSignature;
    let uploadId: string | undefined;
    let segments: string[];
    try {
      [uploadId, ...segments] = rest.slice('/uploads/'.length).split('/').map(decodeURIComponent);
    } catch {
      return invalidSignature;
    }
    const q = url.searchParams;
    const [part, offset, length, expires] = ['part', 'offset', 'length', 'expires'].map((name) => {
      const value = q.get(name) ?? '';
      const n = Number(value);
      return UINT.test(value) && Number.isSafeInteger(n) ? n : undefined;
    });
    const signature = q.get('signature') ?? '';
    if (uploadId === undefined || part === undefined || offset === undefined || length === undefined || expires === undefined) {
      return invalidSignature;
    }
    if (!SIGNATURE.test(signature)) return invalidSignature;
    const target: Target = { uploadId, path: segments.join('/'), part, offset, length, expires };
    if (!timingSafeEqual(Buffer.from(signature, 'hex'), this.#sign(target))) return invalidSignature;
    if (this.#clock.now() >= expires) return err(matchError('UPLOAD_EXPIRED'));
    return ok(target);
  }

  /** Runs `section` after every earlier section for the same upload has settled. */
  async #exclusive<T>(uploadId: string, section: () => Promise<T>): Promise<T> {
    const result = (this.#locks.get(uploadId) ?? Promise.resolve()).then(section);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#locks.set(uploadId, tail);
    try {
      return await result;
    } finally {
      if (this.#locks.get(uploadId) === tail) this.#locks.delete(uploadId);
    }
  }
}
