/**
 * Build and CDN uploads, served by Tavern itself (wire.md §6, reliability.md §1.4): `prepare`
 * validates the file list and hands out presigned PUT URLs, `put` streams one part into a blob,
 * `complete` checks every part arrived, assembles multipart files and publishes the upload, and
 * `openFile` reads a published file. No HTTP framework here: the edge passes URLs and byte streams.
 * What may be uploaded is `upload-rules.ts`'s answer; the URLs are signed by `upload-urls.ts`.
 */
import { matchError, type MatchError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import { canStage, type Blobs, type DirectUploads, type StagedBlobs } from '../io/blobs.js';
import type { UploadFile, UploadRecord, UploadStore } from '../io/catalog.js';
import type { Clock, Random } from '../io/index.js';
import { copyBody } from './upload-body.js';
import { assemblyKey, partKey, partsKey, putKey, stagedKey, uploadFileKey, uploadKey } from './upload-keys.js';
import { UploadLocks } from './upload-locks.js';
import {
  alreadyComplete, bodyProblem, declaredLengthProblem, fileChunks, incomplete, missingOf, planUpload, uploadLifetime, uploadNotFound, type Chunk, type Missing,
} from './upload-rules.js';
import { DEFAULT_UPLOAD_LIMITS, type OpenedFile, type PreparedUpload, type PrepareUpload, type UploadLimits } from './upload-types.js';
import { UploadUrls } from './upload-urls.js';
import { DirectFlow } from './uploads-direct.js';
import { InPlaceParts } from './uploads-in-place.js';

export * from './upload-types.js';

/**
 * @example
 * { catalog, blobs: new FsBlobs(dir), clock, random, secret: randomBytes(32), publicOrigin: 'http://127.0.0.1:8080' }
 */
export interface UploadsDeps {
  readonly catalog: UploadStore;
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

/**
 * Build and CDN uploads (blob layout: `upload-keys.ts`). Single-part files are PUT to their final
 * key. Multipart files, on a store that assembles in place ({@link StagedBlobs}: the local disk),
 * are written part by part at their offsets into a staged file (created by `prepare`;
 * `uploads-in-place.ts`) and published by renaming it on completion: each byte is written once.
 * On other stores (or for a file without a staged file: prepared by an earlier Tavern) they are
 * kept one blob per part and assembled on completion.
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
  readonly #urls: UploadUrls;
  readonly #limits: UploadLimits;
  readonly #direct: DirectFlow | undefined;
  readonly #locks = new UploadLocks();
  /** The store, when it assembles multipart files in place (and uploads are not direct). */
  readonly #staged: StagedBlobs | undefined;
  readonly #inPlace: InPlaceParts | undefined;

  constructor(deps: UploadsDeps) {
    this.#catalog = deps.catalog;
    this.#blobs = deps.blobs;
    this.#clock = deps.clock;
    this.#random = deps.random;
    this.#urls = new UploadUrls(deps.secret, deps.publicOrigin);
    this.#limits = { ...DEFAULT_UPLOAD_LIMITS, ...deps.limits };
    this.#direct = deps.direct === undefined ? undefined : new DirectFlow(deps.direct, deps.blobs, (f) => this.#chunks(f));
    this.#staged = deps.direct === undefined && canStage(deps.blobs) ? deps.blobs : undefined;
    this.#inPlace = this.#staged === undefined ? undefined : new InPlaceParts(this.#staged, deps.catalog, this.#locks);
  }

  /**
   * Validates the files and stores a new upload with one presigned PUT per part. Every problem is
   * reported with its wire field path (`['files', '3', 'path']`, `content_length`, `content_type`,
   * `['files']` for the count and the total, `['multipart_upload']`); the error is the first one
   * and its `metadata.errors` lists them all.
   *
   * @effects UploadStore, Clock, Random
   * @example
   * const r = await uploads.prepare({ gameId, kind: 'build', files: [{ path: 'image.tar', contentLength: 3e8 }], multipart: true });
   * if (r.ok) r.value.presigned.map((p) => p.byteOffset) // [0, 104857600, 209715200]
   */
  async prepare(request: PrepareUpload): Promise<Result<PreparedUpload, MatchError>> {
    const planned = planUpload(request, this.#limits);
    if (!planned.ok) return planned;
    const now = this.#clock.now();
    const id = this.#random.uuid();
    const files = this.#direct === undefined ? planned.value : await this.#direct.open(id, planned.value);
    const created = await this.#catalog.createUpload({
      id,
      gameId: request.gameId,
      kind: request.kind,
      files,
      createdAt: now,
      expiresAt: now + uploadLifetime(files, this.#limits),
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
          url: this.#urls.sign({ uploadId: upload.id, path: file.path, part, offset, length, expires: upload.expiresAt }),
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
   * @effects UploadStore, Blobs, Clock
   * @example
   * await uploads.put(new URL(presigned.url), request.body, Number(request.headers['content-length']))
   */
  async put(url: URL, body: AsyncIterable<Uint8Array>, declaredLength?: number): Promise<Result<void, MatchError>> {
    const target = this.#urls.verify(url, this.#clock.now());
    if (!target.ok) return target;
    const { uploadId, path, part, offset, length } = target.value;
    const declared = declaredLengthProblem(length, declaredLength);
    if (declared !== undefined) return err(declared);
    const upload = await this.#catalog.getUpload(uploadId);
    const index = upload?.files.findIndex((f) => f.path === path) ?? -1;
    const file = upload?.files[index];
    if (upload === undefined || file === undefined || part > file.parts || offset + length > file.contentLength) return err(uploadNotFound());
    if (upload.completedAt !== undefined) return err(alreadyComplete());
    if (this.#inPlace !== undefined && file.parts > 1 && (await this.#inPlace.holds(upload.id, index))) {
      return this.#inPlace.put(upload.id, index, target.value, body);
    }
    const writer = await this.#blobs.begin(putKey(upload.id, index, file, part));
    try {
      const short = bodyProblem(await copyBody(body, writer, length), length);
      if (short !== undefined) return err(short);
      return await this.#locks.exclusive(upload.id, async () => {
        if ((await this.#catalog.getUpload(upload.id))?.completedAt !== undefined) return err(alreadyComplete());
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
   * @effects UploadStore, Blobs, Clock
   * @example
   * const r = await uploads.complete(uploadId, gameId); if (r.ok) r.value.completedAt // now
   */
  async complete(uploadId: string, gameId?: string): Promise<Result<UploadRecord, MatchError>> {
    const result = await this.#locks.exclusive(uploadId, () => this.#complete(uploadId, gameId));
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
   * @effects UploadStore, Blobs
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
   * @effects UploadStore, Blobs
   * @example
   * await uploads.sweepExpired() // 0 when every upload completed in time
   */
  async sweepExpired(batch = 100): Promise<number> {
    let abandoned = 0;
    for (;;) {
      const expired = await this.#catalog.expiredUploads(this.#clock.now(), batch);
      for (const upload of expired) {
        await this.#locks.exclusive(upload.id, async () => {
          const current = await this.#catalog.getUpload(upload.id);
          if (current === undefined || current.completedAt !== undefined || current.abandonedAt !== undefined) return;
          await this.#direct?.abort(current);
          await this.#blobs.delete(uploadKey(current.id));
          await this.#catalog.abandonUpload(current.id, this.#clock.now());
          abandoned += 1;
        });
      }
      if (expired.length < batch) return abandoned;
    }
  }

  async #complete(uploadId: string, gameId: string | undefined): Promise<Result<UploadRecord, MatchError>> {
    const upload = await this.#catalog.getUpload(uploadId);
    if (upload === undefined || (gameId !== undefined && upload.gameId !== gameId)) return err(uploadNotFound());
    if (upload.completedAt !== undefined) return ok(upload);
    if (upload.abandonedAt !== undefined) return err(matchError('UPLOAD_EXPIRED'));
    const refused = incomplete(upload, this.#direct === undefined ? await this.#missing(upload) : await this.#direct.missing(upload));
    if (refused !== undefined) return err(refused);
    if (this.#direct !== undefined) await this.#direct.publish(upload);
    else for (const [index, file] of upload.files.entries()) if (file.parts > 1) await this.#publish(upload.id, index, file);
    const done = await this.#catalog.completeUpload(upload.id, this.#clock.now());
    return done === undefined ? err(uploadNotFound()) : ok(done);
  }

  /** Every file or part that has not arrived, or file whose parts do not add up to its length. */
  async #missing(upload: UploadRecord): Promise<Missing[]> {
    const missing: Missing[] = [];
    for (const [index, file] of upload.files.entries()) {
      // In place, or (no staged file: prepared by an earlier Tavern) as one blob per part.
      const staged = this.#staged !== undefined && file.parts > 1 ? await this.#staged.stagedParts(stagedKey(upload.id, index)) : undefined;
      const sizes: Array<number | undefined> = [];
      for (let part = 1; part <= file.parts; part += 1) {
        sizes.push(staged === undefined ? (await this.#blobs.stat(putKey(upload.id, index, file, part)))?.size : staged.get(part));
      }
      missing.push(...missingOf(file, sizes));
    }
    return missing;
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

  /** A file's parts: offsets and lengths (one part of the whole file unless it is multipart). */
  #chunks(file: UploadFile): Chunk[] {
    return fileChunks(file, this.#limits.chunkBytes);
  }
}
