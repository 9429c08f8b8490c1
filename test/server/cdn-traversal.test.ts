/**
 * Path traversal in any form never leaves the site's files: a generated corpus of more than
 * 10,000 request paths (`..` and `.` in plain, percent-encoded, double-encoded, overlong UTF-8 and
 * fullwidth forms, every separator form, NUL and suffixes, at every depth), plus random paths from
 * fast-check (the run's seed), each sent as a real request to the CDN. Another site's file and
 * files beside and above the blobs hold a secret; no answer may carry it, and a 200 must be exactly
 * one of this site's own files.
 */
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { cdnWorld, CDN_DOMAIN, type CdnWorld } from './cdn-site.js';

let w: CdnWorld;
afterEach(() => w.close());

const SECRET = 'TOP-SECRET-7f3a';
const SITE = [
  { path: 'index.html', body: 'site index' },
  { path: 'a/b/page.html', body: 'deep page' },
  { path: 'a/asset.js', body: 'asset' },
];
const OWN = new Set(SITE.map((f) => f.body));

const DOTS = ['..', '.', '%2e%2e', '%2E%2E', '.%2e', '%2e.', '%252e%252e', '%25252e%25252e', '%c0%ae%c0%ae', '%e0%80%ae%e0%80%ae', '%ef%bc%8e%ef%bc%8e', '..%00', '%2e%2e%00', '...'];
const SEPARATORS = ['/', '\\', '%2f', '%2F', '%5c', '%5C', '%252f', '%255c', '%c0%af', '%c1%9c', '%e0%80%af', '//'];
const PREFIXES = ['/', '/a/b/'];
const SUFFIXES = ['', '%00', '%00.html', '/', '?x=..%2f..', '#..'];

/** The deterministic corpus: every dot form × separator × target × depth × prefix, and suffixed variants. */
function corpus(targets: readonly string[]): string[] {
  const paths: string[] = [];
  for (const dot of DOTS) {
    for (const sep of SEPARATORS) {
      for (const target of targets) {
        for (let depth = 1; depth <= 4; depth++) {
          for (const prefix of PREFIXES) paths.push(`${prefix}${`${dot}${sep}`.repeat(depth)}${target}`);
        }
        paths.push(`/${dot}${sep}${target}${SUFFIXES[(paths.length % (SUFFIXES.length - 1)) + 1] ?? ''}`);
      }
    }
  }
  return paths;
}

/** Encodes what an HTTP request line cannot carry raw (controls, space, non-Latin-1), keeping everything else. */
const requestable = (path: string): string => path.replace(/[^\u0021-\u007e]/gu, (c) => encodeURIComponent(c));

describe('the CDN traversal corpus', () => {
  it('never serves anything but the site own files, for more than 10,000 generated paths', async () => {
    w = await cdnWorld();
    await w.deploy(SITE);
    // A secret in another (unpublished, completed) site's upload, and files beside and above the blobs.
    const otherSite = await w.site([{ path: 'secret.html', body: SECRET }]);
    const secretUpload = (await w.h.catalog.getCdnSite(otherSite))?.uploadId ?? '';
    await writeFile(join(w.h.blobDir, 'SECRET.txt'), SECRET);
    await writeFile(join(dirname(w.h.blobDir), `cdn-traversal-${secretUpload}.txt`), SECRET);
    const targets = ['SECRET.txt', `uploads/${secretUpload}/files/secret.html`, `${secretUpload}/files/secret.html`, 'files/secret.html', `cdn-traversal-${secretUpload}.txt`, 'etc/passwd'];

    const generated = fc.sample(
      fc.array(fc.oneof(fc.constantFrom(...DOTS, ...SEPARATORS, ...targets, 'a', 'b', 'index.html', '%00', '%', '%zz'), fc.string({ maxLength: 4 })), { minLength: 1, maxLength: 10 }).map((parts) => `/${parts.join('')}`),
      3_000,
    );
    const paths = [...corpus(targets), ...generated].map(requestable);
    expect(paths.length).toBeGreaterThanOrEqual(10_000);

    const failures: string[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < paths.length) {
        const path = paths[next++] ?? '/';
        const r = await w.get(`my-game.${CDN_DOMAIN}`, path);
        const body = r.body.toString();
        if (body.includes(SECRET)) failures.push(`${path}: leaked the secret`);
        else if (r.status === 200 && !OWN.has(body)) failures.push(`${path}: 200 with ${JSON.stringify(body.slice(0, 40))}`);
        else if (r.status !== 200 && r.status !== 404) failures.push(`${path}: status ${r.status}`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    expect(failures.slice(0, 20)).toEqual([]);
    // The same requests reach the site: its own paths are served.
    expect((await w.get(`my-game.${CDN_DOMAIN}`, '/a/b/page.html')).body.toString()).toBe('deep page');
  }, 120_000);

  it('routes the path as sent: %2f and %5c never become separators (404), the same path with its `/` is served', async () => {
    w = await cdnWorld();
    await w.deploy(SITE);
    const host = `my-game.${CDN_DOMAIN}`;
    expect((await w.get(host, '/a/asset.js')).body.toString()).toBe('asset');
    for (const path of ['/a%2fasset.js', '/a%2Fasset.js', '/a%5casset.js', '/a%5Casset.js', '/a/b%2fpage.html', '/a%2fb%2fpage.html']) {
      const r = await w.get(host, path);
      expect(r.status, path).toBe(404);
      expect(r.body.toString(), path).toBe('Not Found\n');
    }
  });
});
