/**
 * Tavern's presigned PUT URLs (wire.md §6.1), for uploads it receives itself:
 * `<origin>/uploads/<upload id>/<path>?part=&offset=&length=&expires=&signature=`, where the
 * signature is the HMAC-SHA256 (hex) of everything the URL names, under the server's key. A URL is
 * honoured only as signed (compared in constant time) and only before it expires.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { matchError, type MatchError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';

/** What a presigned URL names and its signature binds. */
export interface UploadTarget {
  readonly uploadId: string;
  readonly path: string;
  /** 1-based. */
  readonly part: number;
  readonly offset: number;
  readonly length: number;
  /** Epoch ms; the URL works before it. */
  readonly expires: number;
}

const UINT = /^(?:0|[1-9][0-9]{0,15})$/;
const SIGNATURE = /^[0-9a-f]{64}$/;

/**
 * @example
 * const urls = new UploadUrls(secret, 'http://127.0.0.1:8080');
 * const url = urls.sign({ uploadId, path: 'index.html', part: 1, offset: 0, length: 5, expires: now + 3_600_000 });
 * urls.verify(new URL(url), now) // ok(the target)
 */
export class UploadUrls {
  readonly #secret: Uint8Array;
  readonly #origin: string;
  readonly #basePath: string;

  /** `secret`: the HMAC-SHA256 key; `publicOrigin`: where clients reach Tavern (a path prefix is allowed). */
  constructor(secret: Uint8Array, publicOrigin: string) {
    this.#secret = secret;
    this.#origin = publicOrigin.replace(/\/+$/, '');
    this.#basePath = new URL(this.#origin).pathname.replace(/\/+$/, '');
  }

  /** The presigned URL of `target`. */
  sign(target: UploadTarget): string {
    const path = target.path.split('/').map(encodeURIComponent).join('/');
    const query = `part=${target.part}&offset=${target.offset}&length=${target.length}&expires=${target.expires}`;
    return `${this.#origin}/uploads/${encodeURIComponent(target.uploadId)}/${path}?${query}&signature=${this.#mac(target).toString('hex')}`;
  }

  /**
   * What `url` names, if it is one this key signed (else UPLOAD_SIGNATURE_INVALID) and it has not
   * expired at `now` (else UPLOAD_EXPIRED).
   */
  verify(url: URL, now: number): Result<UploadTarget, MatchError> {
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
    const target: UploadTarget = { uploadId, path: segments.join('/'), part, offset, length, expires };
    if (!timingSafeEqual(Buffer.from(signature, 'hex'), this.#mac(target))) return invalidSignature;
    if (now >= expires) return err(matchError('UPLOAD_EXPIRED'));
    return ok(target);
  }

  #mac(t: UploadTarget): Buffer {
    const message = JSON.stringify(['tavern-upload-put-v1', t.uploadId, t.path, t.part, t.offset, t.length, t.expires]);
    return createHmac('sha256', this.#secret).update(message).digest();
  }
}
