/**
 * What may be uploaded and when an upload is whole (wire.md §6.1, reliability.md §1.4): the file
 * count, sizes, paths (`upload-paths.ts`) and content types of a request, how files split into
 * parts, how long the URLs work, whether a PUT's body is the part it names, and what is still
 * missing at completion. No I/O: the uploads service (`uploads.ts`) asks.
 */
import { matchError, type MatchError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import type { UploadFile, UploadRecord } from '../io/catalog.js';
import { pathProblem, pathSet } from './upload-paths.js';
import type { PrepareUpload, UploadLimits } from './upload-types.js';

const CONTENT_TYPE = /^[\x20-\x7e]{1,255}$/;

/**
 * UPLOAD_INVALID, with why and the wire field at fault.
 *
 * @example
 * uploadInvalid('CDN sites are never multipart', ['multipart_upload'])
 */
export const uploadInvalid = (reason: string, path?: readonly string[]): MatchError =>
  matchError('UPLOAD_INVALID', { reason }, path === undefined ? {} : { path });

/**
 * UPLOAD_NOT_FOUND.
 *
 * @example
 * if (upload === undefined) return err(uploadNotFound());
 */
export const uploadNotFound = (): MatchError => matchError('UPLOAD_NOT_FOUND');

/**
 * The refusal of a PUT to an upload already complete (it never changes).
 *
 * @example
 * if (upload.completedAt !== undefined) return err(alreadyComplete());
 */
export const alreadyComplete = (): MatchError => uploadInvalid('the upload is already complete');

const tooLarge = (max: number, path: readonly string[]): MatchError => matchError('UPLOAD_TOO_LARGE', { max }, { path });

/**
 * The files as they will be stored (parts counted), or every problem with the request: the first
 * one is the error, and its `metadata.errors` lists them all, each with its wire field path
 * (`['files', '3', 'path']`, `content_length`, `content_type`, `['files']` for the count and the
 * total, `['multipart_upload']`).
 *
 * @example
 * planUpload({ gameId, kind: 'build', files: [{ path: 'image.tar', contentLength: 3e8 }], multipart: true }, DEFAULT_UPLOAD_LIMITS)
 * // ok([{ path: 'image.tar', contentLength: 3e8, parts: 3 }])
 */
export function planUpload({ kind, files, multipart }: PrepareUpload, limits: UploadLimits): Result<UploadFile[], MatchError> {
  if (files.length > limits.maxFiles) return err(uploadInvalid(`too many files (at most ${limits.maxFiles})`, ['files']));
  const maxTotal = kind === 'build' ? limits.maxBuildBytes : limits.maxCdnBytes;
  const split = multipart === true && kind === 'build';
  const problems: MatchError[] = [];
  if (multipart === true && kind === 'cdn') problems.push(uploadInvalid('CDN sites are never multipart', ['multipart_upload']));
  const paths = pathSet(kind === 'cdn');
  const planned: UploadFile[] = [];
  let total = 0;
  for (const [i, { path, contentLength, contentType }] of files.entries()) {
    const at = (field: string): string[] => ['files', String(i), field];
    const pathWhy = pathProblem(path, limits) ?? paths.clash(path);
    if (pathWhy !== undefined) problems.push(uploadInvalid(`path ${pathWhy}`, at('path')));
    if (contentType !== undefined && !CONTENT_TYPE.test(contentType)) {
      problems.push(uploadInvalid('content type must be 1 to 255 printable ASCII characters', at('content_type')));
    }
    if (!Number.isSafeInteger(contentLength) || contentLength < 0) {
      problems.push(uploadInvalid('content length must be a whole number of bytes below 2^53', at('content_length')));
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

/** One PUT's share of a file. */
export interface Chunk {
  /** 1-based. */
  readonly part: number;
  readonly offset: number;
  readonly length: number;
}

/**
 * A file's parts: offsets and lengths (one part of the whole file unless it is multipart).
 *
 * @example
 * fileChunks({ path: 'a', contentLength: 250, parts: 3 }, 100) // [{ part: 1, offset: 0, length: 100 }, …, { part: 3, offset: 200, length: 50 }]
 */
export function fileChunks(file: UploadFile, chunkBytes: number): Chunk[] {
  if (file.parts === 1) return [{ part: 1, offset: 0, length: file.contentLength }];
  return Array.from({ length: file.parts }, (_, i) => ({
    part: i + 1,
    offset: i * chunkBytes,
    length: Math.min(chunkBytes, file.contentLength - i * chunkBytes),
  }));
}

/**
 * How long an upload's URLs work: longer when a file is multipart.
 *
 * @example
 * uploadLifetime(files, DEFAULT_UPLOAD_LIMITS) // 3_600_000 without multipart files
 */
export const uploadLifetime = (files: readonly UploadFile[], limits: UploadLimits): number =>
  files.some((f) => f.parts > 1) ? limits.multipartExpiryMs : limits.singleExpiryMs;

/**
 * Why a PUT's `Content-Length` (if it sent one) does not fit its part of `length` bytes.
 *
 * @example
 * declaredLengthProblem(5, 4)?.code // 'UPLOAD_INVALID'
 */
export const declaredLengthProblem = (length: number, declared: number | undefined): MatchError | undefined =>
  declared === undefined || declared === length ? undefined : uploadInvalid(`the part is ${length} bytes, not ${declared}`);

/**
 * Why a PUT's body is not its part of `length` bytes: cut short by the client (`cut`), longer or
 * shorter; undefined when exactly `length` bytes came.
 *
 * @example
 * bodyProblem({ seen: 3, cut: false }, 4)?.params // { reason: 'the body has 3 of 4 bytes' }
 */
export function bodyProblem(body: { readonly seen: number; readonly cut: boolean }, length: number): MatchError | undefined {
  if (body.cut) return uploadInvalid(`the body ended after ${body.seen} of ${length} bytes`);
  if (body.seen > length) return uploadInvalid(`the body is longer than ${length} bytes`);
  if (body.seen < length) return uploadInvalid(`the body has ${body.seen} of ${length} bytes`);
  return undefined;
}

/** A file or part that has not arrived whole. */
export interface Missing {
  readonly path: string;
  readonly part?: number;
  readonly reason: string;
}

/**
 * What is missing of a file stored by Tavern, given the size of each part that arrived (`sizes[part - 1]`,
 * undefined for one that did not): the parts not there, or the file if its parts do not add up to its length.
 *
 * @example
 * missingOf({ path: 'a', contentLength: 10, parts: 2 }, [5, undefined]) // [{ path: 'a', part: 2, reason: "part 2 of 2 of file 'a' has not been uploaded" }]
 */
export function missingOf(file: UploadFile, sizes: ReadonlyArray<number | undefined>): Missing[] {
  const missing: Missing[] = [];
  let size = 0;
  let whole = true;
  for (let part = 1; part <= file.parts; part += 1) {
    const got = sizes[part - 1];
    if (got !== undefined) size += got;
    else if (file.parts === 1) missing.push({ path: file.path, reason: `file '${file.path}' has not been uploaded` });
    else missing.push({ path: file.path, part, reason: `part ${part} of ${file.parts} of file '${file.path}' has not been uploaded` });
    whole &&= got !== undefined;
  }
  if (whole && size !== file.contentLength) missing.push({ path: file.path, reason: `file '${file.path}' has ${size} of ${file.contentLength} bytes` });
  return missing;
}

/**
 * Why `upload` cannot complete while something is `missing`: UPLOAD_INCOMPLETE naming the first
 * missing file or part, at that file's path field, with `metadata.missing` listing all; undefined
 * when nothing is.
 *
 * @example
 * incomplete(upload, missingOf(upload.files[0], [undefined]))?.path // ['files', '0', 'path']
 */
export function incomplete(upload: UploadRecord, missing: readonly Missing[]): MatchError | undefined {
  const [first] = missing;
  if (first === undefined) return undefined;
  return matchError('UPLOAD_INCOMPLETE', { reason: first.reason }, { path: ['files', String(upload.files.findIndex((f) => f.path === first.path)), 'path'], metadata: { missing } });
}
