/** CDN serving (wire.md §6.3) through real HTTP requests to the CDN listener. */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it } from 'vitest';
import { cdnWorld, CDN_DOMAIN, type CdnWorld } from './cdn-site.js';
import { str } from './harness.js';
import { eventually } from '../wait.js';

let w: CdnWorld;
afterEach(() => w.close());

const HOST = `my-game.${CDN_DOMAIN}`;
const INDEX = '<!doctype html><title>game</title><script src="app.js"></script>';
const APP = `console.log(${JSON.stringify('x'.repeat(4000))});\n`;
const BIG = Uint8Array.from({ length: 600 * 1024 }, (_, i) => (i * 7 + (i >> 10)) % 251);
const sha = (body: string | Uint8Array): string => createHash('sha256').update(body).digest('base64url');

const SITE = [
  { path: 'index.html', body: INDEX },
  { path: 'app.js', body: APP },
  { path: 'docs/index.html', body: '<p>docs</p>' },
  { path: 'style.css', body: 'body{}' },
  { path: 'game.wasm', body: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]) },
  { path: 'logo.png', body: new Uint8Array([137, 80, 78, 71]) },
  { path: 'data.unknownext', body: 'zz' },
  { path: 'typed.bin', body: 'abc', contentType: 'text/x-custom' },
  { path: 'assets/a b.txt', body: 'spaced' },
  // Larger than the in-memory cache of small files: streamed from the blobs.
  { path: 'big.bin', body: BIG },
];

describe('the CDN serves the namespace current version site', () => {
  it('answers the prod and named-namespace hosts, `/` and `dir/` with index.html, 404 elsewhere, 405 for other methods', async () => {
    w = await cdnWorld();
    await w.deploy(SITE);
    for (const host of [HOST, `my-game--prod.${CDN_DOMAIN}`, `MY-GAME.${CDN_DOMAIN.toUpperCase()}:8080`]) {
      const root = await w.get(host, '/');
      expect(root.status, host).toBe(200);
      expect(root.body.toString()).toBe(INDEX);
    }
    expect((await w.get(HOST, '/docs/')).body.toString()).toBe('<p>docs</p>');
    expect((await w.get(HOST, '/assets/a%20b.txt')).body.toString()).toBe('spaced');
    expect((await w.get(HOST, '/docs')).status).toBe(404);
    expect((await w.get(HOST, '/missing.js')).status).toBe(404);
    expect((await w.get(`my-game--staging.${CDN_DOMAIN}`, '/')).status).toBe(404);
    expect((await w.get(`other-game.${CDN_DOMAIN}`, '/')).status).toBe(404);
    expect((await w.get('unknown.example.com', '/')).status).toBe(404);
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const r = await w.get(HOST, '/', {}, method);
      expect(r.status, method).toBe(405);
      expect(r.headers['allow']).toBe('GET, HEAD');
    }
  });

  it('serves another namespace its own version, and a custom domain as soon as it is added (until removed)', async () => {
    w = await cdnWorld();
    await w.deploy(SITE);
    const ns = await w.h.call('POST', `/cloud/games/${w.gameId}/namespaces`, { token: w.cloud, body: { display_name: 'Beta', name_id: 'beta', version_id: await w.version(await w.site([{ path: 'index.html', body: 'staging' }])) } });
    expect(ns.status, JSON.stringify(ns.body)).toBe(200);
    expect((await w.get(`my-game--beta.${CDN_DOMAIN}`, '/')).body.toString()).toBe('staging');
    expect((await w.get('play.example.com', '/')).status).toBe(404);
    const added = await w.h.call('POST', `/cloud/games/${w.gameId}/namespaces/${str(ns.body['namespace_id'])}/domains`, { token: w.cloud, body: { domain: 'play.example.com' } });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect((await w.get('play.example.com', '/')).body.toString()).toBe('staging');
    expect((await w.get('PLAY.Example.com.', '/')).body.toString()).toBe('staging');
    await w.h.call('DELETE', `/cloud/games/${w.gameId}/namespaces/${str(ns.body['namespace_id'])}/domains/play.example.com`, { token: w.cloud });
    expect((await w.get('play.example.com', '/')).status).toBe(404);
  });

  it('sets content types by extension (the uploaded type wins), HTML uncached with no framing headers, assets with a strong ETag', async () => {
    w = await cdnWorld();
    await w.deploy(SITE);
    const types: Record<string, string> = {
      '/': 'text/html; charset=utf-8', '/app.js': 'text/javascript; charset=utf-8', '/style.css': 'text/css; charset=utf-8',
      '/game.wasm': 'application/wasm', '/logo.png': 'image/png', '/data.unknownext': 'application/octet-stream', '/typed.bin': 'text/x-custom',
    };
    for (const [path, type] of Object.entries(types)) expect((await w.get(HOST, path)).headers['content-type'], path).toBe(type);
    const html = await w.get(HOST, '/');
    expect(html.headers['cache-control']).toBe('no-cache, no-store');
    for (const h of ['content-security-policy', 'x-frame-options', 'x-xss-protection']) expect(html.headers[h]).toBeUndefined();
    expect((await w.get(HOST, '/docs/index.html')).headers['cache-control']).toBe('no-cache, no-store');
    const js = await w.get(HOST, '/app.js');
    expect(js.headers['cache-control']).toBeUndefined();
    expect(js.headers['etag']).toBe(`"${sha(APP)}"`);
    expect(js.headers['content-length']).toBe(String(Buffer.byteLength(APP)));
    const png = await w.get(HOST, '/logo.png');
    expect(png.headers['etag']).toBe(`"${sha(new Uint8Array([137, 80, 78, 71]))}"`);
  });

  it('answers If-None-Match with 304 and HEAD with headers only', async () => {
    w = await cdnWorld();
    await w.deploy(SITE);
    const etag = `"${sha(APP)}"`;
    for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const r = await w.get(HOST, '/app.js', { 'if-none-match': inm });
      expect(r.status, inm).toBe(304);
      expect(r.body.length).toBe(0);
      expect(r.headers['etag']).toBe(etag);
    }
    expect((await w.get(HOST, '/app.js', { 'if-none-match': '"other"' })).status).toBe(200);
    const head = await w.get(HOST, '/app.js', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(APP)));
    expect(head.body.length).toBe(0);
  });

  it('answers single byte ranges with 206, unsatisfiable ones with 416, and ignores a range when If-Range does not match', async () => {
    w = await cdnWorld();
    await w.deploy(SITE);
    const size = Buffer.byteLength(APP);
    const cases: [string, number, number][] = [['bytes=0-9', 0, 9], ['bytes=10-', 10, size - 1], ['bytes=-5', size - 5, size - 1], [`bytes=5-${size + 100}`, 5, size - 1]];
    for (const [range, start, end] of cases) {
      const r = await w.get(HOST, '/app.js', { range, 'accept-encoding': 'gzip, br' });
      expect(r.status, range).toBe(206);
      expect(r.headers['content-range']).toBe(`bytes ${start}-${end}/${size}`);
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.body.toString()).toBe(APP.slice(start, end + 1));
    }
    for (const range of [`bytes=${size}-`, 'bytes=-0']) {
      const r = await w.get(HOST, '/app.js', { range });
      expect(r.status, range).toBe(416);
      expect(r.headers['content-range']).toBe(`bytes */${size}`);
    }
    expect((await w.get(HOST, '/app.js', { range: 'bytes=0-1,4-5' })).status).toBe(200);
    const big = await w.get(HOST, '/big.bin');
    expect(Buffer.compare(big.body, Buffer.from(BIG))).toBe(0);
    expect(big.headers['etag']).toBe(`"${sha(BIG)}"`);
    const tail = await w.get(HOST, '/big.bin', { range: 'bytes=400000-' });
    expect(tail.status).toBe(206);
    expect(tail.headers['content-range']).toBe(`bytes 400000-${BIG.length - 1}/${BIG.length}`);
    expect(Buffer.compare(tail.body, Buffer.from(BIG.subarray(400000)))).toBe(0);
    expect((await w.get(HOST, '/app.js', { range: 'bytes=0-9', 'if-range': '"stale"' })).status).toBe(200);
    expect((await w.get(HOST, '/app.js', { range: 'bytes=0-9', 'if-range': `"${sha(APP)}"` })).status).toBe(206);
  });

  it('compresses with brotli or gzip when accepted, once (cached under the content hash), with its own ETag', async () => {
    w = await cdnWorld();
    await w.deploy(SITE);
    const br = await w.get(HOST, '/app.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['vary']).toBe('Accept-Encoding');
    expect(br.headers['etag']).toBe(`"${sha(APP)}.br"`);
    expect(brotliDecompressSync(br.body).toString()).toBe(APP);
    expect(br.body.length).toBeLessThan(Buffer.byteLength(APP));
    const gz = await w.get(HOST, '/app.js', { 'accept-encoding': 'br;q=0, gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(APP);
    const cached = join(w.h.blobDir, 'cdn-cache', `${sha(APP)}.br`);
    const made = (await stat(cached)).mtimeMs;
    const again = await w.get(HOST, '/app.js', { 'accept-encoding': 'br' });
    expect(again.body.equals(br.body)).toBe(true);
    expect((await stat(cached)).mtimeMs).toBe(made);
    expect((await w.get(HOST, '/app.js', { 'accept-encoding': 'br', 'if-none-match': `"${sha(APP)}.br"` })).status).toBe(304);
    // Too small to be worth it, or not a compressible type: served as it is.
    expect((await w.get(HOST, '/style.css', { 'accept-encoding': 'br' })).headers['content-encoding']).toBeUndefined();
    expect((await w.get(HOST, '/logo.png', { 'accept-encoding': 'br' })).headers['content-encoding']).toBeUndefined();
    expect((await w.get(HOST, '/app.js', { 'accept-encoding': 'identity' })).body.toString()).toBe(APP);
  });

  it('adds the response headers of the highest-priority matching route, as the glob syntax defines', async () => {
    w = await cdnWorld();
    const header = (name: string, value: string): unknown => [{ kind: { custom_headers: { headers: [{ name, value }] } } }];
    await w.deploy(SITE, [
      { glob: '**/*.wasm', priority: 0, middlewares: header('x-route', 'wasm') },
      { glob: '*.js', priority: 1, middlewares: header('x-route', 'js-low') },
      { glob: 'app.js', priority: 5, middlewares: header('x-route', 'js-high') },
      { glob: 'docs/*', priority: 10, middlewares: header('x-route', 'docs-low') },
      { glob: '**/*.css', priority: 60, middlewares: header('cache-control', 'public, max-age=60') },
      { glob: 'index.html', priority: 60, middlewares: header('x-route', 'index') },
    ]);
    expect((await w.get(HOST, '/game.wasm')).headers['x-route']).toBe('wasm');
    expect((await w.get(HOST, '/app.js')).headers['x-route']).toBe('js-high');
    expect((await w.get(HOST, '/style.css')).headers['cache-control']).toBe('public, max-age=60');
    // The HTML router (150) outranks a route of priority 10 (111), not one of 60 (161).
    const docs = await w.get(HOST, '/docs/index.html');
    expect(docs.headers['x-route']).toBeUndefined();
    expect(docs.headers['cache-control']).toBe('no-cache, no-store');
    const index = await w.get(HOST, '/index.html');
    expect(index.headers['x-route']).toBe('index');
    expect(index.headers['cache-control']).toBeUndefined();
    expect((await w.get(HOST, '/logo.png')).headers['x-route']).toBeUndefined();
  });
});

describe('the CDN answers a path the same every time, and afresh after a switch', () => {
  const without = (headers: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(headers).filter(([k]) => k !== 'date'));

  it('gives a file the same answer on its first request and later ones, plain or conditional, GET or HEAD', async () => {
    w = await cdnWorld();
    const header = [{ kind: { custom_headers: { headers: [{ name: 'X-Route', value: 'v1' }] } } }];
    await w.deploy(SITE, [{ glob: '*.js', priority: 1, middlewares: header }]);
    const first = await w.get(HOST, '/app.js');
    const again = await w.get(HOST, '/app.js');
    expect(without(again.headers)).toEqual(without(first.headers));
    expect(again.body.toString()).toBe(APP);
    expect(first.headers).toMatchObject({ 'x-route': 'v1', etag: `"${sha(APP)}"`, vary: 'Accept-Encoding', 'accept-ranges': 'bytes', 'content-length': String(Buffer.byteLength(APP)) });
    // The same answer when a condition sends it down the general path.
    const unmatched = await w.get(HOST, '/app.js', { 'if-none-match': '"other"' });
    expect(without(unmatched.headers)).toEqual(without(first.headers));
    expect(unmatched.body.toString()).toBe(APP);
    const head = await w.get(HOST, '/app.js', {}, 'HEAD');
    expect(without(head.headers)).toEqual(without(first.headers));
    expect(head.body.length).toBe(0);
    expect((await w.get(HOST, '/app.js', { 'if-none-match': `"${sha(APP)}"` })).status).toBe(304);
    expect((await w.get(HOST, '/app.js', { range: 'bytes=0-3' })).body.toString()).toBe(APP.slice(0, 4));
    expect((await w.get(HOST, '/missing.js')).status).toBe(404);
    expect((await w.get(HOST, '/missing.js')).status).toBe(404);
  });

  it('serves the next version its own bytes, headers and routes on the same paths', async () => {
    w = await cdnWorld();
    const header = (value: string): unknown => [{ kind: { custom_headers: { headers: [{ name: 'x-route', value }] } } }];
    await w.deploy(SITE, [{ glob: '*.js', priority: 1, middlewares: header('v1') }]);
    for (let i = 0; i < 3; i += 1) expect((await w.get(HOST, '/app.js')).headers['x-route']).toBe('v1');
    const next = 'console.log("v2");\n';
    await w.deploy([{ path: 'app.js', body: next }, { path: 'new.html', body: '<p>new</p>' }], [{ glob: '*.js', priority: 1, middlewares: header('v2') }]);
    const after = await w.get(HOST, '/app.js');
    expect(after.body.toString()).toBe(next);
    expect(after.headers).toMatchObject({ 'x-route': 'v2', etag: `"${sha(next)}"`, 'content-length': String(Buffer.byteLength(next)) });
    expect((await w.get(HOST, '/index.html')).status).toBe(404);
    expect((await w.get(HOST, '/new.html')).body.toString()).toBe('<p>new</p>');
  });
});

describe('CDN auth', () => {
  const basic = (user: string, password: string): Record<string, string> => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

  it('basic: asks for the realm, lets the namespace users in by bcrypt hash, and follows user and auth type changes', async () => {
    w = await cdnWorld();
    await w.deploy(SITE);
    const ns = `/cloud/games/${w.gameId}/namespaces/${w.nsId}`;
    const hash = await bcrypt.hash('s3cret', 4);
    expect((await w.h.call('POST', `${ns}/auth-user`, { token: w.cloud, body: { user: 'alice', password: hash } })).status).toBe(200);
    expect((await w.h.call('PUT', `${ns}/cdn-auth`, { token: w.cloud, body: { auth_type: 'basic' } })).status).toBe(200);
    const anonymous = await w.get(HOST, '/');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Basic realm="RivetCdn"');
    expect((await w.get(HOST, '/', basic('alice', 'wrong'))).status).toBe(401);
    expect((await w.get(HOST, '/', basic('bob', 's3cret'))).status).toBe(401);
    expect((await w.get(HOST, '/', { authorization: 'Bearer x' })).status).toBe(401);
    const ok = await w.get(HOST, '/', basic('alice', 's3cret'));
    expect(ok.status).toBe(200);
    expect(ok.body.toString()).toBe(INDEX);
    expect((await w.get(HOST, '/', basic('alice', 's3cret'))).status).toBe(200);
    // A new hash for alice: the old password no longer works (the verified-header memo follows the hash).
    await w.h.call('POST', `${ns}/auth-user`, { token: w.cloud, body: { user: 'alice', password: await bcrypt.hash('other', 4) } });
    expect((await w.get(HOST, '/', basic('alice', 's3cret'))).status).toBe(401);
    expect((await w.get(HOST, '/', basic('alice', 'other'))).status).toBe(200);
    expect((await w.h.call('DELETE', `${ns}/auth-user/alice`, { token: w.cloud })).status).toBe(200);
    expect((await w.get(HOST, '/', basic('alice', 'other'))).status).toBe(401);
    await w.h.call('PUT', `${ns}/cdn-auth`, { token: w.cloud, body: { auth_type: 'none' } });
    expect((await w.get(HOST, '/', basic('alice', 'wrong'))).status).toBe(200);
  });

  it('refuses a password that is not a bcrypt hash and a 33rd user, naming the field', async () => {
    w = await cdnWorld();
    const ns = `/cloud/games/${w.gameId}/namespaces/${w.nsId}`;
    const plain = await w.h.call('POST', `${ns}/auth-user`, { token: w.cloud, body: { user: 'alice', password: 'hunter2' } });
    expect(plain.status).toBe(400);
    expect(plain.body['code']).toBe('CDN_INVALID_AUTH_USER_PASSWORD');
    const missing = await w.h.call('POST', `${ns}/auth-user`, { token: w.cloud, body: { user: 'alice' } });
    expect(missing.status).toBe(400);
    const hash = await bcrypt.hash('x', 4);
    for (let i = 0; i < 32; i++) expect((await w.h.call('POST', `${ns}/auth-user`, { token: w.cloud, body: { user: `u${i}`, password: hash } })).status).toBe(200);
    const more = await w.h.call('POST', `${ns}/auth-user`, { token: w.cloud, body: { user: 'u32', password: hash } });
    expect(more.body['code']).toBe('CDN_TOO_MANY_AUTH_USERS');
    // Replacing an existing user's hash is not a new user.
    expect((await w.h.call('POST', `${ns}/auth-user`, { token: w.cloud, body: { user: 'u0', password: hash } })).status).toBe(200);
    const got = await w.h.call('GET', ns, { token: w.cloud });
    expect((got.body['namespace']?.['config']?.['cdn']?.['auth_user_list'] as unknown as unknown[]).length).toBe(32);
  });
});

describe('version switch', () => {
  it('serves every request that starts after the switch from the new version, never a mixed or partial file', async () => {
    w = await cdnWorld();
    const files = (v: string): { path: string; body: string }[] => ['index.html', 'a.js', 'b.js', 'c.css'].map((path) => ({ path, body: `${v}:${path}:${v.repeat(5000)}` }));
    await w.deploy(files('1'));
    const next = await w.version(await w.site(files('2')));
    const seen: { started: number; body: string; path: string }[] = [];
    let switchedAt = Number.POSITIVE_INFINITY;
    let stop = false;
    const load = async (): Promise<void> => {
      while (!stop) {
        for (const path of ['/', '/a.js', '/b.js', '/c.css']) {
          const started = performance.now();
          const r = await w.get(HOST, path);
          seen.push({ started, body: r.body.toString(), path });
        }
      }
    };
    const loaders = Array.from({ length: 8 }, load);
    // Counts, not durations: a busy machine serves fewer requests in a given time. Bounded waits.
    await eventually('40 requests before the switch', () => seen.length >= 40, { timeoutMs: 30_000 });
    await w.publish(next);
    switchedAt = performance.now();
    await eventually('40 requests after the switch', () => seen.filter((s) => s.started > switchedAt).length >= 40, { timeoutMs: 30_000 });
    stop = true;
    await Promise.all(loaders);
    const version = (s: { body: string; path: string }): string => {
      const file = s.path === '/' ? 'index.html' : s.path.slice(1);
      const v = s.body[0] ?? '?';
      expect(s.body).toBe(`${v}:${file}:${v.repeat(5000)}`);
      return v;
    };
    const after = seen.filter((s) => s.started > switchedAt);
    expect(after.length).toBeGreaterThan(20);
    expect(seen.filter((s) => s.started <= switchedAt).some((s) => version(s) === '1')).toBe(true);
    expect(after.map(version).every((v) => v === '2')).toBe(true);
  });
});
