/**
 * The CDN listener's request handler (wire.md §6.3): GET and HEAD of a namespace's current site,
 * by host; `index.html` after a `/`; content types by extension; HTML uncached, other files with
 * a strong ETag (`If-None-Match` → 304); single byte ranges (206/416); brotli or gzip made once and
 * cached; version routes' response headers; the namespace's basic auth ({@link CdnAuth}: 401,
 * 429 or 503 with `Retry-After`). Every answer says `X-Content-Type-Options: nosniff`. Files
 * stream from the blobs, never whole in memory.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import mime from 'mime-types';
import { cdnPath, noneMatch, parseRange, pickEncoding, routeFor, type Encoding } from '../../core/cdn.js';
import type { BlobReader, Blobs, ByteRange } from '../../io/blobs.js';
import type { UploadFile } from '../../io/catalog.js';
import type { Clock } from '../../io/index.js';
import type { Logger } from '../../io/log.js';
import type { CdnSites, ServedSite } from '../../services/cdn-sites.js';
import { uploadFileKey } from '../../services/upload-keys.js';
import { NOSNIFF } from '../errors.js';
import type { RateLimitTable } from '../rate-limit.js';
import { CdnAuth } from './auth.js';
import type { PasswordChecker } from './bcrypt-pool.js';
import { CdnFiles, compressedKey, isCompressible } from './files.js';

export interface CdnDeps {
  readonly sites: CdnSites;
  readonly blobs: Blobs;
  /** Where basic auth's bcrypt checks run (a {@link BcryptPool}; its owner closes it). */
  readonly checker: PasswordChecker;
  readonly clock: Clock;
  /** Client addresses from proxy headers (`TAVERN_TRUST_PROXY`), for the auth limits. */
  readonly trustProxyHeaders?: boolean;
  /** `TAVERN_RATE_LIMITS` (its `cdn-auth-failures` buckets); absent: failed logins are not limited. */
  readonly rateLimits?: RateLimitTable;
  readonly logger?: Logger;
}

const REALM = 'RivetCdn';

type Headers = Record<string, string | number>;

/**
 * What a request target of one version's site resolves to, worked out on its first request and
 * reused (a version's site, its routes and a completed upload's bytes never change; a version
 * switch gives a new site, so a new table): the file, its key and hash, the headers of every
 * answer (ETag included), and for a small file the whole 200 answer's headers as a flat list
 * (its bytes stay in {@link CdnFiles}' bounded memory).
 */
interface Prepared {
  readonly file: UploadFile;
  readonly key: string;
  readonly hash: string;
  readonly compressible: boolean;
  readonly headers: Headers;
  /** A small file's identity 200 answer's headers (`content-length` included). */
  readonly whole: readonly string[] | undefined;
}

/** How many request targets per version's site are kept prepared (all dropped when full). */
const MAX_PREPARED = 1_000;

const plain = (res: ServerResponse, status: number, text: string, headers: Headers = {}): void => {
  const body = `${text}\n`;
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers, ...NOSNIFF }).end(body);
};

/**
 * The handler of the CDN listener.
 *
 * @example
 * createServer(cdnHandler({ sites: new CdnSites(catalog, 'cdn.example.com'), blobs, checker: new BcryptPool(), clock: systemClock }))
 */
export function cdnHandler(deps: CdnDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const files = new CdnFiles(deps.blobs);
  /** Per version's site (its files map is its identity), the request targets prepared. */
  const preparedBySite = new WeakMap<ServedSite['files'], Map<string, Prepared | null>>();
  const auth = new CdnAuth({ ...deps, trustProxyHeaders: deps.trustProxyHeaders ?? false });

  const send = async (req: IncomingMessage, res: ServerResponse, status: number, headers: Headers, key: string, size: number, range?: ByteRange): Promise<void> => {
    const small = await files.small(key, size);
    if (small !== undefined) {
      const body = range === undefined ? small : small.subarray(range.start, range.end + 1);
      res.writeHead(status, { ...headers, 'content-length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    const reader: BlobReader | undefined = await deps.blobs.open(key, range);
    if (reader === undefined) return plain(res, 404, 'Not Found');
    res.writeHead(status, { ...headers, 'content-length': reader.size });
    if (req.method === 'HEAD') {
      await reader.close();
      res.end();
      return;
    }
    try {
      await pipeline(Readable.from(reader), res);
    } catch {
      // The client went away: the pipeline destroyed the response and released the reader.
      await reader.close();
    }
  };

  /** What `target` names in `site`, or null (no such file). */
  const prepare = async (site: ServedSite, target: string): Promise<Prepared | null> => {
    const path = cdnPath(target);
    const file = path === undefined ? undefined : site.files.get(path.file);
    if (path === undefined || file === undefined) return null;
    const key = uploadFileKey(site.uploadId, file.path);
    const hash = await files.hash(key);
    if (hash === undefined) return null;
    const contentType = file.contentType ?? (mime.contentType(file.path.slice(file.path.lastIndexOf('/') + 1)) || 'application/octet-stream');
    const route = routeFor(site.routes, path);
    const compressible = isCompressible(contentType, file.contentLength);
    const headers: Headers = { 'content-type': contentType, 'accept-ranges': 'bytes' };
    if (route.html) headers['cache-control'] = 'no-cache, no-store';
    if (compressible) headers['vary'] = 'Accept-Encoding';
    for (const [name, value] of route.headers) headers[name.toLowerCase()] = value;
    // After the route's headers: no route takes it away.
    Object.assign(headers, NOSNIFF);
    headers['etag'] = `"${hash}"`;
    const small = await files.small(key, file.contentLength);
    const whole = small === undefined ? undefined : Object.entries({ ...headers, 'content-length': small.length }).flatMap(([name, value]) => [name, String(value)]);
    return { file, key, hash, compressible, headers, whole };
  };

  const serveFile = async (req: IncomingMessage, res: ServerResponse, site: ServedSite): Promise<void> => {
    const target = req.url ?? '/';
    let table = preparedBySite.get(site.files);
    if (table === undefined) {
      table = new Map();
      preparedBySite.set(site.files, table);
    }
    let prepared = table.get(target);
    if (prepared === undefined) {
      prepared = await prepare(site, target);
      if (table.size >= MAX_PREPARED) table.clear();
      table.set(target, prepared);
    }
    if (prepared === null) return plain(res, 404, 'Not Found');
    const { file, key, hash, compressible, whole } = prepared;
    const h = req.headers;
    // The plain case, a small file in memory asked for whole, as it is, with no condition: one write.
    const body = whole === undefined ? undefined : files.kept(key);
    if (body !== undefined && h.range === undefined && h['if-none-match'] === undefined && (!compressible || h['accept-encoding'] === undefined)) {
      res.writeHead(200, whole as string[]);
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    const headers: Headers = { ...prepared.headers };

    const ifRange = req.headers['if-range'];
    const range = ifRange === undefined || ifRange === `"${hash}"` ? parseRange(req.headers.range, file.contentLength) : { kind: 'all' as const };
    const coding: Encoding | undefined = compressible && range.kind === 'all' ? pickEncoding(req.headers['accept-encoding']) : undefined;
    const size = coding === undefined ? undefined : await files.compressed(key, hash, coding);
    const etag = size === undefined ? `"${hash}"` : `"${hash}.${coding}"`;
    headers['etag'] = etag;
    if (noneMatch(req.headers['if-none-match'], etag)) {
      res.writeHead(304, headers).end();
      return;
    }
    if (range.kind === 'unsatisfiable') return plain(res, 416, 'Range Not Satisfiable', { ...headers, 'content-range': `bytes */${file.contentLength}` });
    if (range.kind === 'part') {
      const { start, end } = range;
      return send(req, res, 206, { ...headers, 'content-range': `bytes ${start}-${end}/${file.contentLength}` }, key, file.contentLength, { start, end });
    }
    if (size !== undefined && coding !== undefined) return send(req, res, 200, { ...headers, 'content-encoding': coding }, compressedKey(hash, coding), size);
    return send(req, res, 200, headers, key, file.contentLength);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'Method Not Allowed', { allow: 'GET, HEAD' });
    const site = await deps.sites.resolve(req.headers.host);
    if (site === undefined) return plain(res, 404, 'Not Found');
    if (site.namespace.cdn.authType === 'basic') {
      const answer = await auth.check(site.namespace, req, res);
      switch (answer.kind) {
        case 'allowed':
          break;
        case 'refused':
          return plain(res, 401, 'Unauthorized', { 'www-authenticate': `Basic realm="${REALM}"` });
        case 'limited':
          return plain(res, 429, 'Too Many Requests', { 'retry-after': String(answer.seconds) });
        case 'busy':
          return plain(res, 503, 'Service Unavailable', { 'retry-after': String(answer.seconds) });
        case 'gone':
          res.destroy();
          return;
      }
    }
    return serveFile(req, res, site);
  };

  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      deps.logger?.error({ err: error }, 'the CDN could not answer a request');
      if (!res.headersSent) plain(res, 503, 'Service Unavailable', { 'retry-after': '1' });
      else res.destroy();
    });
  };
}
