#!/usr/bin/env node
// The S3-compatible server the S3 tests and the cdn benchmark talk to: s3rver on 127.0.0.1:4569
// (credentials S3RVER/S3RVER), its objects under one directory. `.ci/run` starts it in the
// background when nothing answers there. Usage: node test/s3/server.js [directory] [port]
//
// s3rver 3.7 lacks four things S3 does that Tavern's uploads rely on, added here in front of it:
// - presigned (query-string) SigV4 signatures are checked (s3rver accepts any): a forged URL, or a
//   PUT whose signed Content-Length differs, gets 403 SignatureDoesNotMatch;
// - ListParts (GET ?uploadId=), in pages of at most PAGE parts (S3 pages at 1000: the small page
//   makes every multipart test walk several pages);
// - AbortMultipartUpload (DELETE ?uploadId=);
// - an UploadPart to an upload that was completed or aborted gets 404 NoSuchUpload.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { Buffer } from 'node:buffer';
import { URL } from 'node:url';
import S3rver from 's3rver';

const directory = process.argv[2] ?? '/tmp/tavern-s3rver';
const port = Number(process.argv[3] ?? 4569);
const SECRETS = { S3RVER: 'S3RVER' };
const PAGE = 2;

const sha256 = (s) => createHash('sha256').update(s).digest('hex');
const hmac = (key, s) => createHmac('sha256', key).update(s).digest();
const encode = (s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Whether a presigned SigV4 request's signature matches (AWS's canonical request, query-string form). */
const presignedSignatureMatches = (req, url) => {
  const q = url.searchParams;
  const [accessKey, date, region, service] = (q.get('X-Amz-Credential') ?? '').split('/');
  const secret = SECRETS[accessKey];
  if (secret === undefined) return false;
  const signed = (q.get('X-Amz-SignedHeaders') ?? '').split(';');
  const query = [...q.entries()].filter(([k]) => k !== 'X-Amz-Signature').map(([k, v]) => [encode(k), encode(v)]).sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : 1));
  const headers = signed.map((h) => `${h}:${String(req.headers[h] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonical = [req.method, url.pathname, query.map(([k, v]) => `${k}=${v}`).join('&'), headers, signed.join(';'), q.get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD'].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', q.get('X-Amz-Date'), scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  const expected = hmac(key, toSign);
  const given = Buffer.from(q.get('X-Amz-Signature') ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
};

const xmlError = (ctx, status, code, message) => {
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
};

mkdirSync(directory, { recursive: true });
const server = new S3rver({ address: '127.0.0.1', port, directory, silent: true, vhostBuckets: false });

server.middleware.unshift(async (ctx, next) => {
  const url = new URL(ctx.req.url, 'http://s3.local');
  if (url.searchParams.has('X-Amz-Signature') && !presignedSignatureMatches(ctx.req, url)) {
    return xmlError(ctx, 403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
  }
  const uploadId = url.searchParams.get('uploadId');
  const [, bucket] = url.pathname.split('/');
  if (uploadId === null || bucket === undefined || !/^[0-9a-f]+$/.test(uploadId)) return next();
  const dir = join(server.store.getResourcePath(bucket, undefined, 'uploads'), uploadId);
  const open = existsSync(join(dir, 'key'));
  if (!open && (ctx.method === 'PUT' || ctx.method === 'GET' || ctx.method === 'DELETE')) return xmlError(ctx, 404, 'NoSuchUpload', 'The specified upload does not exist.');
  if (ctx.method === 'DELETE') {
    rmSync(dir, { recursive: true, force: true });
    ctx.status = 204;
    return undefined;
  }
  if (ctx.method !== 'GET') return next();
  const marker = Number(url.searchParams.get('part-number-marker') ?? 0);
  const max = Math.min(PAGE, Number(url.searchParams.get('max-parts') ?? 1000));
  const numbers = readdirSync(dir).filter((n) => /^\d+$/.test(n)).map(Number).filter((n) => n > marker).sort((a, b) => a - b);
  const page = numbers.slice(0, max);
  const parts = page.map((n) => `<Part><PartNumber>${n}</PartNumber><ETag>"${readFileSync(join(dir, `${n}.md5`), 'utf8')}"</ETag><Size>${statSync(join(dir, String(n))).size}</Size></Part>`);
  const truncated = numbers.length > page.length;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<ListPartsResult><Bucket>${bucket}</Bucket><UploadId>${uploadId}</UploadId><PartNumberMarker>${marker}</PartNumberMarker>`
    + `<NextPartNumberMarker>${page.at(-1) ?? marker}</NextPartNumberMarker><MaxParts>${max}</MaxParts><IsTruncated>${truncated}</IsTruncated>${parts.join('')}</ListPartsResult>`;
});

const { port: bound } = await server.run();
process.stdout.write(`s3rver listening on 127.0.0.1:${bound}, objects in ${directory}\n`);
const stop = () => void server.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
