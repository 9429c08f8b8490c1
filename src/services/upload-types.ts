/**
 * What the uploads service (`uploads.ts`) takes and gives: its bounds, a prepared upload and its
 * presigned requests, an opened file.
 */
import type { BlobReader } from '../io/blobs.js';
import type { UploadFile, UploadRecord } from '../io/catalog.js';

/** Upload bounds; every size is in bytes and inclusive. */
export interface UploadLimits {
  /** A build's total (Rivet: under 8 GB). */
  readonly maxBuildBytes: number;
  /** A CDN site's total (Rivet: under 1 GB). */
  readonly maxCdnBytes: number;
  readonly maxFileBytes: number;
  /** Files per upload (Rivet has no limit; reliability.md §1.2 asks for one). */
  readonly maxFiles: number;
  /** A path's length, in UTF-8 bytes. */
  readonly maxPathBytes: number;
  /** A path segment's length, in UTF-8 bytes (most filesystems' name limit). */
  readonly maxSegmentBytes: number;
  /** A multipart chunk (Rivet: 100 MiB; the last one is shorter). */
  readonly chunkBytes: number;
  /** Chunks per file (Rivet and S3: 10 000). */
  readonly maxParts: number;
  /** How long the URLs of an upload without multipart files work (Rivet: 1 h). */
  readonly singleExpiryMs: number;
  /** How long the URLs of an upload with multipart files work (Rivet: 6 h). */
  readonly multipartExpiryMs: number;
}

/**
 * Rivet's bounds where it has them (wire.md §6.1), reliability.md §1.4's elsewhere.
 *
 * @example
 * new Uploads({ ...deps, limits: { ...DEFAULT_UPLOAD_LIMITS, chunkBytes: 8 * 2 ** 20 } })
 */
export const DEFAULT_UPLOAD_LIMITS: UploadLimits = Object.freeze({
  maxBuildBytes: 8_000_000_000 - 1,
  maxCdnBytes: 1_000_000_000 - 1,
  maxFileBytes: 8_000_000_000,
  maxFiles: 10_000,
  maxPathBytes: 1024,
  maxSegmentBytes: 255,
  chunkBytes: 100 * 2 ** 20,
  maxParts: 10_000,
  singleExpiryMs: 3_600_000,
  multipartExpiryMs: 6 * 3_600_000,
});

/**
 * One PUT the client makes: exactly `contentLength` bytes of the file at `path`, starting at
 * `byteOffset` (the wire's `{path, url, byte_offset, content_length}`).
 *
 * @example
 * { path: 'image.tar', url: 'http://127.0.0.1:8080/uploads/…/image.tar?part=1&…', byteOffset: 0, contentLength: 1024 }
 */
export interface PresignedRequest {
  readonly path: string;
  readonly url: string;
  readonly byteOffset: number;
  readonly contentLength: number;
}

/**
 * A file the client means to upload.
 *
 * @example
 * { path: 'assets/logo.png', contentLength: 2048, contentType: 'image/png' }
 */
export interface FileToUpload {
  readonly path: string;
  readonly contentLength: number;
  readonly contentType?: string;
}

/**
 * @example
 * { gameId, kind: 'build', files: [{ path: 'image.tar', contentLength: 5e8 }], multipart: true }
 */
export interface PrepareUpload {
  readonly gameId: string;
  readonly kind: 'build' | 'cdn';
  readonly files: readonly FileToUpload[];
  /** Split files larger than a chunk into parts (builds only). */
  readonly multipart?: boolean;
}

/**
 * The stored upload and its PUTs, one per part, files in the order given.
 *
 * @example
 * prepared.presigned.filter((p) => p.path === 'index.html')
 */
export interface PreparedUpload {
  readonly upload: UploadRecord;
  readonly presigned: readonly PresignedRequest[];
}

/**
 * A completed upload's file, opened: its record and its bytes.
 *
 * @example
 * res.setHeader('content-length', opened.body.size);
 */
export interface OpenedFile {
  readonly file: UploadFile;
  readonly body: BlobReader;
}
