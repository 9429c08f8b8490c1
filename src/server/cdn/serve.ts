/**
 * The CDN listener's request handler (wire.md §6.3): GET and HEAD of a namespace's current site,
 * by host; `index.html` after a `/`; content types by extension; HTML uncached, other files with
 * a strong ETag (`If-None-Match` → 304); single byte ranges (206/416); brotli or gzip made once and
 * cached; version routes' response headers; the namespace's basic auth. Files stream from the
 * blobs, never whole in memory.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import bcrypt from 'bcryptjs';
import mime from 'mime-types';
import { cdnPath, noneMatch, parseRange, pickEncoding, routeFor, type Encoding } from '../../core/cdn.js';
import type { BlobReader, Blobs, ByteRange } from '../../io/blobs.js';
import type { NamespaceRecord, UploadFile } from '../../io/catalog.js';
import type { CdnSites, ServedSite } from '../../services/cdn-sites.js';
import { uploadFileKey } from '../../services/uploads.js';
import type { Logger } from '../deps.js';
import { NOSNIFF } from '../errors.js';
import { CdnFiles, compressedKey, isCompressible } from './files.js';

export interface CdnDeps {
  readonly sites: CdnSites;
  readonly blobs: Blobs;
  readonly logger?: Logger;
}

const REALM = 'RivetCdn';
/** How many verified `Authorization` headers are remembered (bcrypt is slow on purpose). */
const MAX_VERIFIED = 10_000;

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

/** The `Authorization: Basic` credentials, if the header carries well-formed ones. */
const basicCredentials = (header: string | undefined): { user: string; password: string } | undefined => {
  const m = header === undefined ? null : /^basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  if (m === null) return undefined;
  const decoded = Buffer.from(m[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
};

/**
 * The handler of the CDN listener.
 *
 * @example
 * createServer(cdnHandler({ sites: new CdnSites(catalog, 'cdn.example.com'), blobs }))
 */
export function cdnHandler(deps: CdnDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const files = new CdnFiles(deps.blobs);
  /** Per version's site (its files map is its identity), the request targets prepared. */
  const preparedBySite = new WeakMap<ServedSite['files'], Map<string, Prepared | null>>();
  /** sha256(namespace id, Authorization header) → the bcrypt hash it was verified against. */
  const verified = new Map<string, string>();

  const authorized = async (ns: NamespaceRecord, header: string | undefined): Promise<boolean> => {
    if (ns.cdn.authType !== 'basic') return true;
    const credentials = basicCredentials(header);
    if (credentials === undefined) return false;
    const user = ns.cdn.authUsers.find((u) => u.user === credentials.user);
    if (user === undefined) return false;
    const memo = createHash('sha256').update(ns.id).update('\0').update(header ?? '').digest('base64url');
    if (verified.get(memo) === user.passwordHash) return true;
    if (!(await bcrypt.compare(credentials.password, user.passwordHash))) return false;
    if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value as string);
    verified.set(memo, user.passwordHash);
    return true;
  };

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
    if (site.namespace.cdn.authType === 'basic' && !(await authorized(site.namespace, req.headers.authorization))) {
      return plain(res, 401, 'Unauthorized', { 'www-authenticate': `Basic realm="${REALM}"` });
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
