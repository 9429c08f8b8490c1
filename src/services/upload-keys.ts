/**
 * Where an upload's bytes live in the blob store, all under `uploads/<upload id>/`:
 * - `files/<path>`: the published files (the CDN and build archives read them there); a
 *   single-part file is PUT there directly when Tavern receives it;
 * - `parts/<file index>/<part>`: a multipart file's parts, concatenated on completion;
 * - `assembly/<file index>`: a multipart file written in place, on a store that can (`StagedBlobs`);
 * - `staging/<path>`: a single-part file PUT straight into S3, copied to `files/` on completion.
 */
import type { UploadFile } from '../io/catalog.js';

/**
 * Everything an upload stored.
 *
 * @example
 * await blobs.delete(uploadKey(upload.id)) // an abandoned upload
 */
export const uploadKey = (uploadId: string): string => `uploads/${uploadId}`;

/**
 * Where a completed upload's file lives.
 *
 * @example
 * uploadFileKey(id, 'assets/logo.png') // `uploads/${id}/files/assets/logo.png`
 */
export const uploadFileKey = (uploadId: string, path: string): string => `${uploadKey(uploadId)}/files/${path}`;

/**
 * Every part of an upload's multipart files (deleted once they are published).
 *
 * @example
 * await blobs.delete(partsKey(upload.id))
 */
export const partsKey = (uploadId: string): string => `${uploadKey(uploadId)}/parts`;

/**
 * Where part `part` of the multipart file at `index` is kept until completion.
 *
 * @example
 * await blobs.open(partKey(id, 0, 2))
 */
export const partKey = (uploadId: string, index: number, part: number): string => `${partsKey(uploadId)}/${index}/${part}`;

/**
 * Every multipart file of an upload assembled in place (deleted once they are published).
 *
 * @example
 * await blobs.delete(assemblyKey(upload.id))
 */
export const assemblyKey = (uploadId: string): string => `${uploadKey(uploadId)}/assembly`;

/**
 * Where the multipart file at `index` is assembled in place.
 *
 * @example
 * await staged.createStaged(stagedKey(id, 0), file.contentLength)
 */
export const stagedKey = (uploadId: string, index: number): string => `${assemblyKey(uploadId)}/${index}`;

/**
 * Where a PUT of `part` of the file at `index` lands when Tavern receives it: a single-part file's
 * final key, else the part's own blob.
 *
 * @example
 * putKey(id, 0, { path: 'a', contentLength: 5, parts: 1 }, 1) === uploadFileKey(id, 'a')
 */
export const putKey = (uploadId: string, index: number, file: UploadFile, part: number): string =>
  file.parts === 1 ? uploadFileKey(uploadId, file.path) : partKey(uploadId, index, part);

/**
 * Every single-part file an upload PUT straight into S3, or the one at `path`.
 *
 * @example
 * await direct.presignPut(stagingKey(id, 'index.html'), length, contentType, seconds)
 */
export const stagingKey = (uploadId: string, path?: string): string =>
  path === undefined ? `${uploadKey(uploadId)}/staging` : `${uploadKey(uploadId)}/staging/${path}`;

