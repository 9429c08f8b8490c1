/**
 * Uploads straight into an S3-compatible store (wire.md §6.1, §6.2): the presigned requests point
 * at the bucket, not at Tavern. A single-part file is PUT to a staging key
 * (`uploads/<id>/staging/<path>`) and copied to its final key on completion, so a PUT that comes
 * after completion never changes a published file; a multipart file has an S3 multipart upload
 * at its final key (its id kept in the upload's record) that completion lists (every page),
 * checks part by part and completes. Completion then HEADs every final object.
 */
import type { DirectUploads, Blobs, UploadedPart } from '../io/blobs.js';
import type { UploadFile, UploadRecord } from '../io/catalog.js';
import { stagingKey, uploadFileKey } from './upload-keys.js';
import type { Chunk, Missing } from './upload-rules.js';
import type { PresignedRequest } from './upload-types.js';

/** The parts of a file: offsets and lengths (one part unless it is multipart). */
export type Chunks = (file: UploadFile) => readonly Chunk[];

/**
 * @example
 * const flow = new DirectFlow(s3, s3, chunks);
 */
export class DirectFlow {
  readonly #direct: DirectUploads;
  readonly #blobs: Blobs;
  readonly #chunks: Chunks;

  constructor(direct: DirectUploads, blobs: Blobs, chunks: Chunks) {
    this.#direct = direct;
    this.#blobs = blobs;
    this.#chunks = chunks;
  }

  /**
   * Opens the multipart uploads of the multipart files; the files with their ids. If one fails,
   * the ones opened are aborted and the error thrown (nothing is recorded).
   */
  async open(uploadId: string, files: readonly UploadFile[]): Promise<UploadFile[]> {
    const opened: UploadFile[] = [];
    try {
      for (const file of files) {
        if (file.parts === 1) opened.push(file);
        else opened.push({ ...file, multipartId: await this.#direct.createMultipart(uploadFileKey(uploadId, file.path), file.contentType) });
      }
      return opened;
    } catch (e) {
      await this.abort({ id: uploadId, files: opened });
      throw e;
    }
  }

  /** One presigned request per part, valid until the upload expires. */
  async presign(upload: UploadRecord, now: number): Promise<PresignedRequest[]> {
    const seconds = Math.max(1, Math.floor((upload.expiresAt - now) / 1000));
    const requests: PresignedRequest[] = [];
    for (const file of upload.files) {
      for (const { part, offset, length } of this.#chunks(file)) {
        const url = file.multipartId === undefined
          ? await this.#direct.presignPut(stagingKey(upload.id, file.path), length, file.contentType, seconds)
          : await this.#direct.presignPart(uploadFileKey(upload.id, file.path), file.multipartId, part, length, seconds);
        requests.push({ path: file.path, url, byteOffset: offset, contentLength: length });
      }
    }
    return requests;
  }

  /**
   * Every file or part that has not arrived whole (by HEAD for single files, by listing every
   * page of parts for multipart ones). A file whose final object already has its size (a
   * completion that failed after publishing it) counts as arrived.
   */
  async missing(upload: UploadRecord): Promise<Missing[]> {
    const missing: Missing[] = [];
    for (const file of upload.files) {
      if ((await this.#blobs.stat(uploadFileKey(upload.id, file.path)))?.size === file.contentLength) continue;
      if (file.multipartId === undefined) {
        const staged = await this.#blobs.stat(stagingKey(upload.id, file.path));
        if (staged === undefined) missing.push({ path: file.path, reason: `file '${file.path}' has not been uploaded` });
        else if (staged.size !== file.contentLength) missing.push({ path: file.path, reason: `file '${file.path}' has ${staged.size} of ${file.contentLength} bytes` });
        continue;
      }
      const listed = new Map((await this.#direct.listParts(uploadFileKey(upload.id, file.path), file.multipartId)).map((p) => [p.part, p]));
      for (const { part, length } of this.#chunks(file)) {
        const got = listed.get(part);
        if (got === undefined) missing.push({ path: file.path, part, reason: `part ${part} of ${file.parts} of file '${file.path}' has not been uploaded` });
        else if (got.size !== length) missing.push({ path: file.path, part, reason: `part ${part} of ${file.parts} of file '${file.path}' has ${got.size} of ${length} bytes` });
      }
    }
    return missing;
  }

  /**
   * Publishes every file at its final key (completing multipart uploads, copying staged files),
   * then HEADs each: a size that differs throws (the upload stays incomplete).
   */
  async publish(upload: UploadRecord): Promise<void> {
    for (const file of upload.files) {
      const key = uploadFileKey(upload.id, file.path);
      if ((await this.#blobs.stat(key))?.size === file.contentLength) continue;
      if (file.multipartId === undefined) await this.#direct.copy(stagingKey(upload.id, file.path), key);
      else {
        const parts: UploadedPart[] = [...(await this.#direct.listParts(key, file.multipartId))];
        await this.#direct.completeMultipart(key, file.multipartId, parts);
      }
      const size = (await this.#blobs.stat(key))?.size;
      if (size !== file.contentLength) throw new Error(`'${file.path}' of upload ${upload.id} is ${size ?? 'missing'} instead of ${file.contentLength} bytes after publishing.`);
    }
    await this.#blobs.delete(stagingKey(upload.id));
  }

  /** Aborts the upload's multipart uploads and deletes what it staged (an upload that was never completed). */
  async abort(upload: Pick<UploadRecord, 'id' | 'files'>): Promise<void> {
    for (const file of upload.files) {
      if (file.multipartId !== undefined) await this.#direct.abortMultipart(uploadFileKey(upload.id, file.path), file.multipartId);
    }
    await this.#blobs.delete(stagingKey(upload.id));
  }
}
