/**
 * Blobs in an S3-compatible bucket (AWS SDK v3), and the presigned requests that let clients
 * upload straight into it. Writers stream: up to one 8 MiB part is buffered, larger blobs go up
 * as a multipart upload that `commit` completes (S3 makes the object visible at once, whole).
 * Readers stream the GetObject body. An unreachable endpoint or a 5xx throws
 * {@link StorageUnavailableError}.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { isBlobKey, StorageUnavailableError, type BlobReader, type BlobStat, type BlobWriter, type Blobs, type ByteRange, type DirectUploads, type UploadedPart } from '../../io/blobs.js';

/** Bytes a writer buffers before sending them as one part (S3's minimum part is 5 MiB). */
const WRITE_PART = 8 * 2 ** 20;

/**
 * @example
 * { bucket: 'tavern', region: 'us-east-1', endpoint: 'http://127.0.0.1:4569', forcePathStyle: true, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
 */
export interface S3Options {
  readonly bucket: string;
  readonly region: string;
  /** An S3-compatible server (`http://127.0.0.1:4569`); absent: AWS itself. */
  readonly endpoint?: string;
  readonly accessKeyId?: string;
  readonly secretAccessKey?: string;
  /** Path-style URLs (`<endpoint>/<bucket>/<key>`), which most S3-compatible servers need. */
  readonly forcePathStyle: boolean;
  /** Per request (default 30 s); connecting gives up after 3 s. */
  readonly requestTimeoutMs?: number;
}

interface SdkError {
  readonly name?: string;
  readonly $metadata?: { readonly httpStatusCode?: number };
}

const statusOf = (e: unknown): number | undefined => (e as SdkError | null)?.$metadata?.httpStatusCode;
const isNotFound = (e: unknown): boolean => statusOf(e) === 404 || ['NoSuchKey', 'NotFound'].includes((e as SdkError | null)?.name ?? '');

/** A failure of the store itself (no answer, or a 5xx) as {@link StorageUnavailableError}; a 4xx as it is. */
const storageError = (e: unknown): unknown => {
  const status = statusOf(e);
  if (status !== undefined && status < 500) return e;
  const reason = e instanceof Error ? e.message || e.name : String(e);
  return new StorageUnavailableError(`S3 ${status === undefined ? 'unreachable' : `answered ${status}`}: ${reason}`, { cause: e });
};

/**
 * @example
 * const blobs = new S3Blobs({ bucket: 'tavern', region: 'us-east-1', forcePathStyle: false });
 * const url = await blobs.presignPut('uploads/u/staging/index.html', 5, 'text/html', 3600);
 */
export class S3Blobs implements Blobs, DirectUploads {
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(options: S3Options) {
    this.#bucket = options.bucket;
    this.#client = new S3Client({
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      maxAttempts: 2,
      // No SDK checksums: a presigned URL would carry the checksum of an empty body, which S3 refuses.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: 3_000, requestTimeout: options.requestTimeoutMs ?? 30_000 },
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      ...(options.accessKeyId === undefined || options.secretAccessKey === undefined
        ? {}
        : { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }),
    });
  }

  /** Sends `command`, mapping store failures (see {@link storageError}). */
  async #send<T>(run: (client: S3Client) => Promise<T>): Promise<T> {
    try {
      return await run(this.#client);
    } catch (e) {
      throw storageError(e);
    }
  }

  #key(key: string): string {
    if (!isBlobKey(key)) throw new Error(`Invalid blob key ${JSON.stringify(key)}.`);
    return key;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- a bad key rejects, as the interface's other calls do
  async begin(key: string): Promise<BlobWriter> {
    return new S3Writer(this, this.#key(key));
  }

  async open(key: string, range?: ByteRange): Promise<BlobReader | undefined> {
    const Key = this.#key(key);
    if (range !== undefined && (range.start < 0 || range.end < range.start)) throw new Error(`Invalid range ${range.start}-${range.end}.`);
    try {
      const got = await this.#client.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key, ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end}` }) }),
      );
      const body = got.Body as (AsyncIterable<Uint8Array> & { destroy(): void }) | undefined;
      if (body === undefined) return undefined;
      const size = got.ContentLength ?? 0;
      if (range !== undefined && size !== range.end - range.start + 1) {
        body.destroy();
        throw new Error(`Range ${range.start}-${range.end} is outside blob ${JSON.stringify(key)}.`);
      }
      return new S3Reader(body, size);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw storageError(e);
    }
  }

  async stat(key: string): Promise<BlobStat | undefined> {
    const Key = this.#key(key);
    try {
      const head = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key }));
      return { size: head.ContentLength ?? 0 };
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw storageError(e);
    }
  }

  async delete(key: string): Promise<void> {
    const Key = this.#key(key);
    await this.#send((c) => c.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key })));
    let token: string | undefined;
    do {
      const page = await this.#send((c) => c.send(new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: `${Key}/`, ...(token === undefined ? {} : { ContinuationToken: token }) })));
      const objects = (page.Contents ?? []).flatMap((o) => (o.Key === undefined ? [] : [{ Key: o.Key }]));
      if (objects.length > 0) await this.#send((c) => c.send(new DeleteObjectsCommand({ Bucket: this.#bucket, Delete: { Objects: objects, Quiet: true } })));
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  presignPut(key: string, length: number, contentType: string | undefined, expiresInSeconds: number): Promise<string> {
    const command = new PutObjectCommand({ Bucket: this.#bucket, Key: this.#key(key), ContentLength: length, ...(contentType === undefined ? {} : { ContentType: contentType }) });
    return getSignedUrl(this.#client, command, { expiresIn: expiresInSeconds, signableHeaders: new Set(['content-length', ...(contentType === undefined ? [] : ['content-type'])]) });
  }

  async createMultipart(key: string, contentType?: string): Promise<string> {
    const created = await this.#send((c) => c.send(new CreateMultipartUploadCommand({ Bucket: this.#bucket, Key: this.#key(key), ...(contentType === undefined ? {} : { ContentType: contentType }) })));
    if (created.UploadId === undefined) throw new StorageUnavailableError('S3 returned no multipart upload id');
    return created.UploadId;
  }

  presignPart(key: string, multipartId: string, part: number, length: number, expiresInSeconds: number): Promise<string> {
    const command = new UploadPartCommand({ Bucket: this.#bucket, Key: this.#key(key), UploadId: multipartId, PartNumber: part, ContentLength: length });
    return getSignedUrl(this.#client, command, { expiresIn: expiresInSeconds, signableHeaders: new Set(['content-length']) });
  }

  async listParts(key: string, multipartId: string): Promise<readonly UploadedPart[]> {
    const parts: UploadedPart[] = [];
    let marker: string | undefined;
    do {
      const page = await this.#send((c) =>
        c.send(new ListPartsCommand({ Bucket: this.#bucket, Key: this.#key(key), UploadId: multipartId, ...(marker === undefined ? {} : { PartNumberMarker: marker }) })),
      );
      for (const p of page.Parts ?? []) {
        if (p.PartNumber !== undefined && p.ETag !== undefined) parts.push({ part: p.PartNumber, size: p.Size ?? 0, etag: p.ETag });
      }
      marker = page.IsTruncated === true ? page.NextPartNumberMarker : undefined;
    } while (marker !== undefined);
    return parts.sort((a, b) => a.part - b.part);
  }

  async completeMultipart(key: string, multipartId: string, parts: readonly UploadedPart[]): Promise<void> {
    await this.#send((c) =>
      c.send(new CompleteMultipartUploadCommand({
        Bucket: this.#bucket, Key: this.#key(key), UploadId: multipartId,
        MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.part, ETag: p.etag })) },
      })),
    );
  }

  async abortMultipart(key: string, multipartId: string): Promise<void> {
    try {
      await this.#client.send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: this.#key(key), UploadId: multipartId }));
    } catch (e) {
      if (!isNotFound(e)) throw storageError(e);
    }
  }

  async copy(from: string, to: string): Promise<void> {
    await this.#send((c) => c.send(new CopyObjectCommand({ Bucket: this.#bucket, Key: this.#key(to), CopySource: `${this.#bucket}/${encodeURIComponent(this.#key(from)).replace(/%2F/g, '/')}` })));
  }

  /** @internal The writer's calls. */
  send<T>(run: (client: S3Client, bucket: string) => Promise<T>): Promise<T> {
    return this.#send((c) => run(c, this.#bucket));
  }
}

class S3Writer implements BlobWriter {
  readonly #store: S3Blobs;
  readonly #key: string;
  #buffered: Buffer[] = [];
  #bufferedBytes = 0;
  #multipartId: string | undefined;
  readonly #parts: UploadedPart[] = [];
  #state: 'open' | 'done' = 'open';

  constructor(store: S3Blobs, key: string) {
    this.#store = store;
    this.#key = key;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.#state !== 'open') throw new Error('The blob writer is spent.');
    // The caller may reuse `chunk` once this resolves: a copy is kept until its part is sent.
    this.#buffered.push(Buffer.from(chunk));
    this.#bufferedBytes += chunk.byteLength;
    if (this.#bufferedBytes >= WRITE_PART) await this.#flushPart();
  }

  async #flushPart(): Promise<void> {
    const body = Buffer.concat(this.#buffered, this.#bufferedBytes);
    this.#buffered = [];
    this.#bufferedBytes = 0;
    const Key = this.#key;
    this.#multipartId ??= await this.#store.createMultipart(Key);
    const UploadId = this.#multipartId;
    const PartNumber = this.#parts.length + 1;
    const sent = await this.#store.send((c, Bucket) => c.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: body, ContentLength: body.byteLength })));
    if (sent.ETag === undefined) throw new StorageUnavailableError('S3 returned no part ETag');
    this.#parts.push({ part: PartNumber, size: body.byteLength, etag: sent.ETag });
  }

  async commit(): Promise<void> {
    if (this.#state !== 'open') throw new Error('The blob writer is spent.');
    try {
      const Key = this.#key;
      if (this.#multipartId === undefined) {
        const body = Buffer.concat(this.#buffered, this.#bufferedBytes);
        await this.#store.send((c, Bucket) => c.send(new PutObjectCommand({ Bucket, Key, Body: body, ContentLength: body.byteLength })));
      } else {
        if (this.#bufferedBytes > 0) await this.#flushPart();
        await this.#store.completeMultipart(Key, this.#multipartId, this.#parts);
        this.#multipartId = undefined;
      }
      this.#state = 'done';
    } finally {
      await this.abort();
    }
  }

  async abort(): Promise<void> {
    this.#state = 'done';
    this.#buffered = [];
    this.#bufferedBytes = 0;
    const id = this.#multipartId;
    this.#multipartId = undefined;
    if (id !== undefined) await this.#store.abortMultipart(this.#key, id);
  }
}

class S3Reader implements BlobReader {
  readonly #body: AsyncIterable<Uint8Array> & { destroy(): void };
  readonly size: number;
  #closed = false;

  constructor(body: AsyncIterable<Uint8Array> & { destroy(): void }, size: number) {
    this.#body = body;
    this.size = size;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array, void, undefined> {
    try {
      let seen = 0;
      for await (const chunk of this.#body) {
        seen += chunk.byteLength;
        yield chunk;
      }
      if (seen !== this.size) throw new StorageUnavailableError(`S3 sent ${seen} of ${this.size} bytes`);
    } catch (e) {
      throw e instanceof StorageUnavailableError ? e : storageError(e);
    } finally {
      await this.close();
    }
  }

  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#body.destroy();
    }
    return Promise.resolve();
  }
}
