/**
 * The CDN's security headers: `X-Content-Type-Options: nosniff` on every answer (files, 206, 304,
 * 401, 404, 405, 416, 503), which no route can take away; `Content-Security-Policy` and
 * `Referrer-Policy` set per site by the version's routes (`custom_headers`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it } from 'vitest';
import { FsBlobs } from '../../src/adapters/fs/blobs.js';
import type { BlobReader, ByteRange } from '../../src/io/blobs.js';
import { cdnWorld, CDN_DOMAIN, type CdnWorld } from './cdn-site.js';

/** Local-disk blobs whose reads of `broken.txt` fail (a disk error: the CDN answers 503). */
class BrokenBlobs extends FsBlobs {
  override open(key: string, range?: ByteRange): Promise<BlobReader | undefined> {
    return key.endsWith('/broken.txt') ? Promise.reject(new Error('EIO: the disk failed')) : super.open(key, range);
  }
}

let w: CdnWorld;
let dir: string;
afterEach(async () => {
  await w.close();
  rmSync(dir, { recursive: true, force: true });
});

const HOST = `my-game.${CDN_DOMAIN}`;
const BIG = 'b'.repeat(600 * 1024);
const SITE = [
  { path: 'index.html', body: '<p>hi</p>' },
  { path: 'app.js', body: `console.log(${JSON.stringify('x'.repeat(4000))});` },
  { path: 'big.txt', body: BIG },
  { path: 'broken.txt', body: 'never read' },
];
const world = async (): Promise<CdnWorld> => {
  dir = mkdtempSync(join(tmpdir(), 'tavern-cdn-headers-'));
  return cdnWorld('my-game', { blobs: new BrokenBlobs(dir) });
};
const header = (name: string, value: string): unknown => [{ kind: { custom_headers: { headers: [{ name, value }] } } }];
const headers = (list: Record<string, string>): unknown => [{ kind: { custom_headers: { headers: Object.entries(list).map(([name, value]) => ({ name, value })) } } }];

describe('CDN security headers', () => {
  it('puts X-Content-Type-Options: nosniff on every answer, whatever its status, and no route removes it', async () => {
    w = await world();
    await w.deploy(SITE, [{ glob: '*.js', priority: 0, middlewares: header('X-Content-Type-Options', 'sniff-away') }]);
    const app = await w.get(HOST, '/app.js');
    const etag = app.headers['etag'] ?? '';
    const answers: [string, number, Promise<Awaited<ReturnType<CdnWorld['get']>>>][] = [
      ['html', 200, w.get(HOST, '/')],
      ['asset (a route sets the header)', 200, w.get(HOST, '/app.js')],
      ['asset, gzip', 200, w.get(HOST, '/app.js', { 'accept-encoding': 'gzip' })],
      ['streamed', 200, w.get(HOST, '/big.txt')],
      ['HEAD', 200, w.get(HOST, '/app.js', {}, 'HEAD')],
      ['range', 206, w.get(HOST, '/big.txt', { range: 'bytes=0-9' })],
      ['not modified', 304, w.get(HOST, '/app.js', { 'if-none-match': etag })],
      ['unsatisfiable', 416, w.get(HOST, '/app.js', { range: 'bytes=999999-' })],
      ['missing file', 404, w.get(HOST, '/missing.js')],
      ['unknown host', 404, w.get('nobody.example.com', '/')],
      ['method', 405, w.get(HOST, '/', {}, 'POST')],
      ['disk error', 503, w.get(HOST, '/broken.txt')],
    ];
    for (const [what, status, answer] of answers) {
      const r = await answer;
      expect(r.status, what).toBe(status);
      expect(r.headers['x-content-type-options'], what).toBe('nosniff');
    }
    expect(app.headers['x-content-type-options']).toBe('nosniff');
    const ns = `/cloud/games/${w.gameId}/namespaces/${w.nsId}`;
    await w.h.call('POST', `${ns}/auth-user`, { token: w.cloud, body: { user: 'alice', password: await bcrypt.hash('pw', 4) } });
    await w.h.call('PUT', `${ns}/cdn-auth`, { token: w.cloud, body: { auth_type: 'basic' } });
    const refused = await w.get(HOST, '/');
    expect(refused.status).toBe(401);
    expect(refused.headers['x-content-type-options']).toBe('nosniff');
  });

  it('sets Content-Security-Policy and Referrer-Policy per site from the version routes, on HTML when the route outranks the HTML router', async () => {
    w = await world();
    const policy = { 'Content-Security-Policy': "default-src 'self'; frame-ancestors https://portal.example", 'Referrer-Policy': 'strict-origin-when-cross-origin' };
    // Priority 50 (151) outranks the HTML router (150): pages get them too (wire.md §6.3).
    await w.deploy(SITE, [{ glob: '**', priority: 50, middlewares: headers(policy) }]);
    for (const path of ['/', '/app.js', '/big.txt']) {
      const r = await w.get(HOST, path);
      expect(r.status, path).toBe(200);
      expect(r.headers['content-security-policy'], path).toBe(policy['Content-Security-Policy']);
      expect(r.headers['referrer-policy'], path).toBe(policy['Referrer-Policy']);
    }
    const notModified = await w.get(HOST, '/app.js', { 'if-none-match': (await w.get(HOST, '/app.js')).headers['etag'] ?? '' });
    expect(notModified.status).toBe(304);
    expect(notModified.headers['content-security-policy']).toBe(policy['Content-Security-Policy']);

    // Another namespace's site has its own policy; a route below the HTML router sets assets only.
    const other = await w.h.call('POST', `/cloud/games/${w.gameId}/namespaces`, { token: w.cloud, body: { display_name: 'Beta', name_id: 'beta', version_id: await w.version(await w.site(SITE), [{ glob: '**', priority: 0, middlewares: headers({ 'Content-Security-Policy': "default-src 'none'", 'Referrer-Policy': 'no-referrer' }) }]) } });
    expect(other.status, JSON.stringify(other.body)).toBe(200);
    const beta = `my-game--beta.${CDN_DOMAIN}`;
    const asset = await w.get(beta, '/app.js');
    expect(asset.headers['content-security-policy']).toBe("default-src 'none'");
    expect(asset.headers['referrer-policy']).toBe('no-referrer');
    const page = await w.get(beta, '/');
    expect(page.headers['cache-control']).toBe('no-cache, no-store');
    expect(page.headers['content-security-policy']).toBeUndefined();
    expect((await w.get(HOST, '/')).headers['content-security-policy']).toBe(policy['Content-Security-Policy']);
  });
});
