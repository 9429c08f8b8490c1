import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UploadUrls, type UploadTarget } from '../../src/services/upload-urls.js';

const KEY = new Uint8Array(32).fill(7);
const T0 = 1_700_000_000_000;

// Upload paths have no `.` or `..` segment (upload-paths.ts), which a URL would resolve away.
const segment = fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme' }).filter((s) => !s.includes('/') && s !== '.' && s !== '..');
const target: fc.Arbitrary<UploadTarget> = fc.record({
  uploadId: fc.uuid(),
  path: fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join('/')),
  part: fc.integer({ min: 1, max: 10_000 }),
  offset: fc.nat({ max: 2 ** 40 }),
  length: fc.nat({ max: 2 ** 30 }),
  expires: fc.integer({ min: T0 + 1, max: T0 + 10 * 3_600_000 }),
});
const origin = fc.constantFrom('http://127.0.0.1:8080', 'https://api.example.test', 'http://127.0.0.1:8080/tavern/', 'https://example.test/a/b');

const codeOf = (urls: UploadUrls, url: string, now = T0): string => {
  const r = urls.verify(new URL(url), now);
  return r.ok ? 'ok' : r.error.code;
};

/** One way to change what a URL names (each query field, the upload id, the path) or its signature. */
const tamper = (url: URL, how: number): void => {
  const field = ['part', 'offset', 'length', 'expires'][how % 6];
  if (field !== undefined) url.searchParams.set(field, String(Number(url.searchParams.get(field)) + 1));
  else if (how % 6 === 4) url.pathname = url.pathname.replace(/\/uploads\/([^/]+)\//, '/uploads/$1x/');
  else url.pathname = `${url.pathname}x`;
};

describe('presigned upload URLs', () => {
  it('verify gives back exactly what sign named, before it expires, behind any path prefix of the origin', () => {
    fc.assert(
      fc.property(origin, target, (o, t) => {
        const urls = new UploadUrls(KEY, o);
        const url = urls.sign(t);
        expect(url.startsWith(`${o.replace(/\/+$/, '')}/uploads/`)).toBe(true);
        expect(urls.verify(new URL(url), t.expires - 1)).toEqual({ ok: true, value: t });
      }),
    );
  });

  it('refuses a URL with any field changed (part, offset, length, expiry, upload id, path)', () => {
    fc.assert(
      fc.property(origin, target, fc.nat(), (o, t, how) => {
        const urls = new UploadUrls(KEY, o);
        const url = new URL(urls.sign(t));
        tamper(url, how);
        expect(codeOf(urls, url.href)).toBe('UPLOAD_SIGNATURE_INVALID');
      }),
    );
  });

  it('refuses a changed, truncated, uppercase or missing signature', () => {
    fc.assert(
      fc.property(target, fc.nat({ max: 63 }), (t, at) => {
        const urls = new UploadUrls(KEY, 'http://127.0.0.1:8080');
        const url = new URL(urls.sign(t));
        const signature = url.searchParams.get('signature') ?? '';
        const flipped = `${signature.slice(0, at)}${signature[at] === '0' ? '1' : '0'}${signature.slice(at + 1)}`;
        for (const bad of [flipped, signature.slice(0, 63), signature.toUpperCase(), undefined]) {
          if (bad === signature) continue;
          if (bad === undefined) url.searchParams.delete('signature');
          else url.searchParams.set('signature', bad);
          expect(codeOf(urls, url.href)).toBe('UPLOAD_SIGNATURE_INVALID');
        }
      }),
    );
  });

  it('refuses a URL signed with another key', () => {
    fc.assert(
      fc.property(target, fc.uint8Array({ minLength: 32, maxLength: 32 }), (t, other) => {
        fc.pre(other.some((b, i) => b !== KEY[i]));
        const url = new UploadUrls(other, 'http://127.0.0.1:8080').sign(t);
        expect(codeOf(new UploadUrls(KEY, 'http://127.0.0.1:8080'), url)).toBe('UPLOAD_SIGNATURE_INVALID');
      }),
    );
  });

  it('refuses an expired URL from its expiry on, and only then', () => {
    fc.assert(
      fc.property(target, fc.integer({ min: -5, max: 5 }), (t, delta) => {
        const urls = new UploadUrls(KEY, 'http://127.0.0.1:8080');
        expect(codeOf(urls, urls.sign(t), t.expires + delta)).toBe(delta >= 0 ? 'UPLOAD_EXPIRED' : 'ok');
      }),
    );
  });

  it('refuses what is not an upload URL', () => {
    const urls = new UploadUrls(KEY, 'http://127.0.0.1:8080/tavern');
    const url = urls.sign({ uploadId: '11111111-1111-4111-8111-111111111111', path: 'a b/ü.txt', part: 1, offset: 0, length: 5, expires: T0 + 1 });
    expect(codeOf(urls, url)).toBe('ok');
    expect(codeOf(urls, url.replace('/uploads/', '/upload/'))).toBe('UPLOAD_SIGNATURE_INVALID');
    expect(codeOf(urls, url.replace('part=1', 'part=01'))).toBe('UPLOAD_SIGNATURE_INVALID');
    expect(codeOf(urls, url.replace('part=1', 'part=-1'))).toBe('UPLOAD_SIGNATURE_INVALID');
    expect(codeOf(urls, url.replace('/a%20b/', '/a%ZZb/'))).toBe('UPLOAD_SIGNATURE_INVALID');
  });
});
