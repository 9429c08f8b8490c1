import fc from 'fast-check';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsBlobs } from '../../src/adapters/fs/blobs.js';
import type { MatchError } from '../../src/core/errors.js';
import type { Result } from '../../src/core/result.js';
import type { CatalogStore, Created, UploadRecord } from '../../src/io/catalog.js';
import {
  DEFAULT_UPLOAD_LIMITS,
  Uploads,
  type FileToUpload,
  type PreparedUpload,
  type PresignedRequest,
  type UploadLimits,
} from '../../src/services/uploads.js';

const GAME = '11111111-1111-4111-8111-111111111111';
const ORIGIN = 'http://127.0.0.1:8080';
const T0 = 1_700_000_000_000;

/** The three catalog methods uploads use, on a Map. */
class Catalog implements Pick<CatalogStore, 'createUpload' | 'getUpload' | 'completeUpload' | 'expiredUploads' | 'abandonUpload'> {
  readonly uploads = new Map<string, UploadRecord>();

  createUpload(upload: UploadRecord): Promise<Created<UploadRecord>> {
    if (this.uploads.has(upload.id)) return Promise.resolve({ ok: false, error: { conflict: 'id', value: upload.id } });
    this.uploads.set(upload.id, upload);
    return Promise.resolve({ ok: true, value: upload });
  }

  getUpload(id: string): Promise<UploadRecord | undefined> {
    return Promise.resolve(this.uploads.get(id));
  }

  completeUpload(id: string, at: number): Promise<UploadRecord | undefined> {
    return Promise.resolve(this.#mark(id, { completedAt: at }));
  }

  expiredUploads(before: number, limit: number): Promise<readonly UploadRecord[]> {
    const open = [...this.uploads.values()].filter((u) => u.completedAt === undefined && u.abandonedAt === undefined && u.expiresAt < before);
    return Promise.resolve(open.sort((a, b) => a.expiresAt - b.expiresAt).slice(0, limit));
  }

  abandonUpload(id: string, at: number): Promise<UploadRecord | undefined> {
    return Promise.resolve(this.#mark(id, { abandonedAt: at }));
  }

  #mark(id: string, change: Pick<UploadRecord, 'completedAt'> | Pick<UploadRecord, 'abandonedAt'>): UploadRecord | undefined {
    const upload = this.uploads.get(id);
    if (upload === undefined || upload.completedAt !== undefined || upload.abandonedAt !== undefined) return upload;
    const next = { ...upload, ...change };
    this.uploads.set(id, next);
    return next;
  }
}

const bytesOf = (n: number, seed = 0): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 7 + 3) % 256);

/** `data` as a request body, in chunks of `size` bytes. */
async function* body(data: Uint8Array, size = 7): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < data.length; i += size) {
    await Promise.resolve();
    yield data.subarray(i, i + size);
  }
}

const readAll = async (stream: AsyncIterable<Uint8Array>): Promise<Buffer> => {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
};

const expectError = <T>(r: Result<T, MatchError>): MatchError => {
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r.value)}`);
  return r.error;
};

const expectOk = <T>(r: Result<T, MatchError>): T => {
  if (!r.ok) throw new Error(`expected success, got ${JSON.stringify(r.error)}`);
  return r.value;
};

interface Harness {
  readonly root: string;
  readonly catalog: Catalog;
  readonly blobs: FsBlobs;
  readonly clock: { now: () => number; at: number };
  readonly uploads: Uploads;
}

/** Every temp directory made, to remove after each test. */
const roots: string[] = [];

const harness = async (limits: Partial<UploadLimits> = {}, root?: string): Promise<Harness> => {
  const dir = root ?? (await mkdtemp(join(tmpdir(), 'tavern-uploads-')));
  roots.push(dir);
  const catalog = new Catalog();
  const blobs = new FsBlobs(dir);
  const clock = {
    at: T0,
    now(): number {
      return this.at;
    },
  };
  let n = 0;
  const random = {
    uuid: () => `00000000-0000-4000-8000-${String((n += 1)).padStart(12, '0')}`,
    u32: () => (n += 1),
  };
  const uploads = new Uploads({ catalog, blobs, clock, random, secret: new TextEncoder().encode('test secret'), publicOrigin: ORIGIN, limits });
  return { root: dir, catalog, blobs, clock, uploads };
};

/** PUTs every part of every file, `contents` by path. */
const putAll = async (h: Harness, prepared: PreparedUpload, contents: ReadonlyMap<string, Uint8Array>, order?: readonly number[]): Promise<void> => {
  const requests = order ? order.map((i) => prepared.presigned[i] as PresignedRequest) : prepared.presigned;
  for (const p of requests) {
    const data = contents.get(p.path) ?? new Uint8Array();
    expectOk(await h.uploads.put(new URL(p.url), body(data.subarray(p.byteOffset, p.byteOffset + p.contentLength)), p.contentLength));
  }
};

const readFile = async (h: Harness, uploadId: string, path: string): Promise<Buffer | undefined> => {
  const opened = await h.uploads.openFile(uploadId, path);
  return opened && readAll(opened.body);
};

/** A URL with one query parameter or the path replaced. */
const tamper = (url: string, change: (u: URL) => void): URL => {
  const u = new URL(url);
  change(u);
  return u;
};

describe('Uploads', () => {
  let h: Harness;

  beforeEach(async () => {
    h = await harness();
  });
  afterEach(async () => {
    for (const dir of roots.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  const prepareOne = async (path: string, data: Uint8Array, kind: 'build' | 'cdn' = 'cdn'): Promise<PreparedUpload> =>
    expectOk(await h.uploads.prepare({ gameId: GAME, kind, files: [{ path, contentLength: data.length }] }));

  describe('builds', () => {
    it('uploads a single-PUT image and publishes it on completion', async () => {
      const data = bytesOf(1000);
      const prepared = expectOk(
        await h.uploads.prepare({ gameId: GAME, kind: 'build', files: [{ path: 'image.tar', contentLength: 1000, contentType: 'binary/octet-stream' }] }),
      );
      const { upload, presigned } = prepared;
      expect(upload).toEqual({
        id: upload.id,
        gameId: GAME,
        kind: 'build',
        files: [{ path: 'image.tar', contentLength: 1000, contentType: 'binary/octet-stream', parts: 1 }],
        createdAt: T0,
        expiresAt: T0 + 3_600_000,
      });
      expect(h.catalog.uploads.get(upload.id)).toEqual(upload);
      expect(presigned).toHaveLength(1);
      expect(presigned[0]).toMatchObject({ path: 'image.tar', byteOffset: 0, contentLength: 1000 });
      expect(presigned[0]?.url).toMatch(
        new RegExp(`^${ORIGIN}/uploads/${upload.id}/image\\.tar\\?part=1&offset=0&length=1000&expires=${T0 + 3_600_000}&signature=[0-9a-f]{64}$`),
      );

      await putAll(h, prepared, new Map([['image.tar', data]]));
      expect(await h.uploads.openFile(upload.id, 'image.tar')).toBeUndefined();
      h.clock.at += 5;
      const done = expectOk(await h.uploads.complete(upload.id, GAME));
      expect(done).toEqual({ ...upload, completedAt: T0 + 5 });
      const opened = await h.uploads.openFile(upload.id, 'image.tar');
      expect(opened?.file).toEqual(upload.files[0]);
      expect(opened?.body.size).toBe(1000);
      expect(opened && (await readAll(opened.body)).equals(data)).toBe(true);
    });

    it('splits a multipart image into chunks and assembles them in order', async () => {
      h = await harness({ chunkBytes: 10 });
      const data = bytesOf(25);
      const prepared = expectOk(await h.uploads.prepare({ gameId: GAME, kind: 'build', files: [{ path: 'image.tar', contentLength: 25 }], multipart: true }));
      expect(prepared.upload.files[0]?.parts).toBe(3);
      expect(prepared.upload.expiresAt).toBe(T0 + 6 * 3_600_000);
      expect(prepared.presigned.map((p) => [p.path, p.byteOffset, p.contentLength])).toEqual([
        ['image.tar', 0, 10],
        ['image.tar', 10, 10],
        ['image.tar', 20, 5],
      ]);
      await putAll(h, prepared, new Map([['image.tar', data]]), [2, 0, 1]);
      expectOk(await h.uploads.complete(prepared.upload.id));
      expect((await readFile(h, prepared.upload.id, 'image.tar'))?.equals(data)).toBe(true);
      // The parts are gone once assembled.
      expect(await readdir(join(h.root, 'uploads', prepared.upload.id))).toEqual(['files']);
    });

    it('uses one part when a multipart file fits in a chunk, or multipart is off', async () => {
      h = await harness({ chunkBytes: 10 });
      for (const [contentLength, multipart] of [[10, true], [0, true], [25, false]] as const) {
        const prepared = expectOk(await h.uploads.prepare({ gameId: GAME, kind: 'build', files: [{ path: 'image.tar', contentLength }], multipart }));
        expect(prepared.upload.files[0]?.parts).toBe(1);
        expect(prepared.upload.expiresAt).toBe(T0 + 3_600_000);
        expect(prepared.presigned.map((p) => [p.byteOffset, p.contentLength])).toEqual([[0, contentLength]]);
      }
    });

    it('uses the configured expiries', async () => {
      h = await harness({ chunkBytes: 10, singleExpiryMs: 1000, multipartExpiryMs: 2000 });
      const single = expectOk(await h.uploads.prepare({ gameId: GAME, kind: 'build', files: [{ path: 'a', contentLength: 5 }] }));
      const multi = expectOk(await h.uploads.prepare({ gameId: GAME, kind: 'build', files: [{ path: 'a', contentLength: 50 }], multipart: true }));
      expect([single.upload.expiresAt, multi.upload.expiresAt]).toEqual([T0 + 1000, T0 + 2000]);
    });
  });

  describe('CDN sites', () => {
    it('uploads many files in nested directories', async () => {
      const files = Array.from({ length: 60 }, (_, i) => ({
        path: i % 3 === 0 ? `index${i}.html` : `assets/${i % 5}/file ${i} ü#?%.js`,
        data: bytesOf(i * 13, i),
      }));
      const prepared = expectOk(
        await h.uploads.prepare({ gameId: GAME, kind: 'cdn', files: files.map((f) => ({ path: f.path, contentLength: f.data.length, contentType: 'text/plain' })) }),
      );
      expect(prepared.presigned).toHaveLength(60);
      expect(prepared.presigned.every((p) => p.byteOffset === 0)).toBe(true);
      await putAll(h, prepared, new Map(files.map((f) => [f.path, f.data])));
      expectOk(await h.uploads.complete(prepared.upload.id, GAME));
      for (const f of files) expect((await readFile(h, prepared.upload.id, f.path))?.equals(f.data)).toBe(true);
      expect(await h.uploads.openFile(prepared.upload.id, 'missing.html')).toBeUndefined();
      expect(await h.uploads.openFile(prepared.upload.id, '../index0.html')).toBeUndefined();
      expect(await h.uploads.openFile('nope', 'index0.html')).toBeUndefined();
    });

    it('accepts an empty site', async () => {
      const prepared = expectOk(await h.uploads.prepare({ gameId: GAME, kind: 'cdn', files: [] }));
      expect(prepared.presigned).toEqual([]);
      expect(expectOk(await h.uploads.complete(prepared.upload.id)).completedAt).toBe(T0);
    });

    it('refuses multipart', async () => {
      const e = expectError(await h.uploads.prepare({ gameId: GAME, kind: 'cdn', files: [{ path: 'a', contentLength: 1 }], multipart: true }));
      expect(e).toMatchObject({ code: 'UPLOAD_INVALID', path: ['multipart_upload'] });
    });
  });

  describe('prepare validation', () => {
    const traversal = [
      '../a',
      'a/../../b',
      '..',
      '.',
      './a',
      'a/./b',
      '%2e%2e/x',
      'a/%2E%2E',
      '%2e',
      'a%2fb',
      'a%5c..%5cb',
      '%c0%ae%c0%ae/x',
      '．．/x',
      'a\\..\\b',
      'a\\b',
      '/etc/x',
      '//server/share',
      'C:/x',
      'c:x',
      'a//b',
      'a/',
      '',
      'a\0b',
      'a\nb',
      'a\u007fb',
      'a\u0085b',
      'a\ud800b',
      `${'a'.repeat(256)}/b`,
      `${'abcdefgh/'.repeat(114)}x`,
      `${'é'.repeat(128)}`,
    ];

    it.each(traversal)('refuses the path %j at files[1].path', async (path) => {
      const e = expectError(
        await h.uploads.prepare({ gameId: GAME, kind: 'cdn', files: [{ path: 'ok.txt', contentLength: 1 }, { path, contentLength: 1 }] }),
      );
      expect(e.code).toBe('UPLOAD_INVALID');
      expect(e.path).toEqual(['files', '1', 'path']);
      expect(h.catalog.uploads.size).toBe(0);
    });

    it('accepts ordinary names with dots, percent signs and Unicode', async () => {
      const paths = ['.well-known/a', 'a..b', '...', 'x/.htaccess', '100%.png', 'ü/日本.txt', `${'a'.repeat(255)}`, 'a b/c+d'];
      expectOk(await h.uploads.prepare({ gameId: GAME, kind: 'cdn', files: paths.map((path) => ({ path, contentLength: 1 })) }));
    });

    it.each([
      ['a', 'a', "duplicates 'a'"],
      ['caf\u00e9', 'cafe\u0301', 'duplicates'],
      ['Index.html', 'index.HTML', 'duplicates'],
      ['a/b', 'a', 'is a directory of'],
      ['A/b', 'a', 'is a directory of'],
      ['a', 'a/b', "is inside 'a'"],
    ])('refuses %j then %j in a CDN site', async (first, second, reason) => {
      const e = expectError(
        await h.uploads.prepare({ gameId: GAME, kind: 'cdn', files: [{ path: first, contentLength: 1 }, { path: second, contentLength: 1 }] }),
      );
      expect(e).toMatchObject({ code: 'UPLOAD_INVALID', path: ['files', '1', 'path'] });
      expect(e.params?.['reason']).toContain(reason);
    });

    it('tells case apart in builds', async () => {
      expectOk(await h.uploads.prepare({ gameId: GAME, kind: 'build', files: [{ path: 'A', contentLength: 1 }, { path: 'a', contentLength: 1 }] }));
    });

    it.each([-1, 0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])('refuses the content length %d', async (contentLength) => {
      const e = expectError(await h.uploads.prepare({ gameId: GAME, kind: 'cdn', files: [{ path: 'a', contentLength }] }));
      expect(e).toMatchObject({ code: 'UPLOAD_INVALID', path: ['files', '0', 'content_length'] });
    });

    it.each(['', 'text/html\r\nx-evil: 1', 'x'.repeat(256), 'tëxt/plain'])('refuses the content type %j', async (contentType) => {
      const e = expectError(await h.uploads.prepare({ gameId: GAME, kind: 'cdn', files: [{ path: 'a', contentLength: 1, contentType }] }));
      expect(e).toMatchObject({ code: 'UPLOAD_INVALID', path: ['files', '0', 'content_type'] });
    });

    it('bounds each file, the total, the part count and the file count', async () => {
      h = await harness({ maxFileBytes: 100, maxCdnBytes: 150, maxBuildBytes: 1000, maxFiles: 3, chunkBytes: 10, maxParts: 5 });
      const prepare = async (kind: 'build' | 'cdn', lengths: number[], multipart = false): Promise<MatchError> =>
        expectError(await h.uploads.prepare({ gameId: GAME, kind, files: lengths.map((contentLength, i) => ({ path: `f${i}`, contentLength })), multipart }));

      expect(await prepare('cdn', [101])).toMatchObject({ code: 'UPLOAD_TOO_LARGE', params: { max: 100 }, path: ['files', '0', 'content_length'] });
      expect(await prepare('cdn', [100, 51])).toMatchObject({ code: 'UPLOAD_TOO_LARGE', params: { max: 150 }, path: ['files'] });
      expect(await prepare('build', [51], true)).toMatchObject({ code: 'UPLOAD_TOO_LARGE', params: { max: 50 }, path: ['files', '0', 'content_length'] });
      expect(await prepare('cdn', [1, 1, 1, 1])).toMatchObject({ code: 'UPLOAD_INVALID', path: ['files'] });
      expectOk(await h.uploads.prepare({ gameId: GAME, kind: 'cdn', files: [{ path: 'a', contentLength: 100 }, { path: 'b', contentLength: 50 }] }));
      expectOk(await h.uploads.prepare({ gameId: GAME, kind: 'build', files: [{ path: 'a', contentLength: 50 }], multipart: true }));
    });

    it('checks the running total without overflow and reports it once', async () => {
      const max = Number.MAX_SAFE_INTEGER;
      h = await harness({ maxFileBytes: max });
      const e = expectError(
        await h.uploads.prepare({ gameId: GAME, kind: 'cdn', files: [0, 1, 2].map((i) => ({ path: `f${i}`, contentLength: max })) }),
      );
      expect(e.metadata).toEqual({ errors: [{ code: 'UPLOAD_TOO_LARGE', params: { max: 1e9 - 1 }, path: ['files'] }] });
    });

    it('reports every problem, the first as the error', async () => {
      const files: FileToUpload[] = [
        { path: 'fine', contentLength: 1 },
        { path: '../x', contentLength: -1 },
        { path: 'b', contentLength: 1, contentType: '\n' },
        { path: 'fine', contentLength: 2e9 },
      ];
      const e = expectError(await h.uploads.prepare({ gameId: GAME, kind: 'cdn', files }));
      expect(e).toMatchObject({ code: 'UPLOAD_INVALID', path: ['files', '1', 'path'] });
      expect((e.metadata as { errors: MatchError[] }).errors.map((p) => [p.code, p.path?.join('.')])).toEqual([
        ['UPLOAD_INVALID', 'files.1.path'],
        ['UPLOAD_INVALID', 'files.1.content_length'],
        ['UPLOAD_INVALID', 'files.2.content_type'],
        ['UPLOAD_INVALID', 'files.3.path'],
        ['UPLOAD_TOO_LARGE', 'files'],
      ]);
    });
  });

  describe('put', () => {
    const data = bytesOf(40);
    let prepared: PreparedUpload;
    let url: string;
    beforeEach(async () => {
      prepared = await prepareOne('dir/file.bin', data);
      url = prepared.presigned[0]?.url ?? '';
    });
    const stored = (): Promise<boolean> => h.blobs.stat(`uploads/${prepared.upload.id}/files/dir/file.bin`).then((s) => s !== undefined);
    const temps = (): Promise<string[]> => readdir(join(h.root, '.tmp')).catch(() => []);

    it.each<[string, (u: URL) => void]>([
      ['a flipped signature bit', (u) => u.searchParams.set('signature', (u.searchParams.get('signature') ?? '').replace(/^./, (c) => (c === '0' ? '1' : '0')))],
      ['a truncated signature', (u) => u.searchParams.set('signature', (u.searchParams.get('signature') ?? '').slice(0, 63))],
      ['an uppercase signature', (u) => u.searchParams.set('signature', (u.searchParams.get('signature') ?? '').toUpperCase())],
      ['no signature', (u) => u.searchParams.delete('signature')],
      ['another path', (u) => (u.pathname = u.pathname.replace('file.bin', 'other.bin'))],
      ['a traversing path', (u) => (u.pathname = u.pathname.replace('dir/file.bin', 'dir/../file.bin'))],
      ['another upload id', (u) => (u.pathname = u.pathname.replace(prepared.upload.id, '00000000-0000-4000-8000-000000000999'))],
      ['another part', (u) => u.searchParams.set('part', '2')],
      ['another offset', (u) => u.searchParams.set('offset', '1')],
      ['another length', (u) => u.searchParams.set('length', '41')],
      ['a later expiry', (u) => u.searchParams.set('expires', String(T0 + 999_999_999))],
      ['an expiry with a leading zero', (u) => u.searchParams.set('expires', `0${u.searchParams.get('expires') ?? ''}`)],
      ['an unsafe number', (u) => u.searchParams.set('length', '9007199254740993')],
      ['another route', (u) => (u.pathname = u.pathname.replace('/uploads/', '/upload/'))],
      ['a malformed escape', (u) => (u.pathname = `${u.pathname}%zz`)],
    ])('refuses %s', async (_, change) => {
      const e = expectError(await h.uploads.put(tamper(url, change), body(data)));
      expect(e.code).toBe('UPLOAD_SIGNATURE_INVALID');
      expect(await stored()).toBe(false);
    });

    it('refuses a URL signed with another key', async () => {
      const other = new Uploads({
        catalog: h.catalog,
        blobs: h.blobs,
        clock: h.clock,
        random: { uuid: () => 'x', u32: () => 0 },
        secret: new TextEncoder().encode('another secret'),
        publicOrigin: ORIGIN,
      });
      expect(expectError(await other.put(new URL(url), body(data))).code).toBe('UPLOAD_SIGNATURE_INVALID');
    });

    it('ignores the origin the request came in on, and honours a base path', async () => {
      expectOk(await h.uploads.put(tamper(url, (u) => (u.host = 'tavern.example:9000')), body(data)));
      const dir = await mkdtemp(join(tmpdir(), 'tavern-uploads-'));
      try {
        const catalog = new Catalog();
        const based = new Uploads({
          catalog,
          blobs: new FsBlobs(dir),
          clock: h.clock,
          random: { uuid: () => '22222222-2222-4222-8222-222222222222', u32: () => 0 },
          secret: new Uint8Array(32),
          publicOrigin: 'https://games.example/tavern/',
        });
        const p = expectOk(await based.prepare({ gameId: GAME, kind: 'cdn', files: [{ path: 'a', contentLength: 1 }] }));
        expect(p.presigned[0]?.url).toMatch(/^https:\/\/games\.example\/tavern\/uploads\/2{8}-/);
        expectOk(await based.put(new URL(p.presigned[0]?.url ?? ''), body(bytesOf(1))));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('refuses a PUT that starts at or after the expiry, and lets one that started in time finish', async () => {
      h.clock.at = prepared.upload.expiresAt;
      expect(expectError(await h.uploads.put(new URL(url), body(data))).code).toBe('UPLOAD_EXPIRED');
      h.clock.at = prepared.upload.expiresAt + 1000;
      expect(expectError(await h.uploads.put(new URL(url), body(data))).code).toBe('UPLOAD_EXPIRED');

      h.clock.at = prepared.upload.expiresAt - 1000;
      async function* slow(): AsyncGenerator<Uint8Array> {
        yield data.subarray(0, 20);
        await Promise.resolve();
        h.clock.at += 3000;
        yield data.subarray(20);
      }
      expectOk(await h.uploads.put(new URL(url), slow()));
      expectOk(await h.uploads.complete(prepared.upload.id));
    });

    it('refuses a body shorter than the part, storing nothing', async () => {
      const e = expectError(await h.uploads.put(new URL(url), body(data.subarray(0, 39))));
      expect(e).toMatchObject({ code: 'UPLOAD_INVALID', params: { reason: 'the body has 39 of 40 bytes' } });
      expect(await stored()).toBe(false);
      expect(await temps()).toEqual([]);
    });

    it('refuses a body longer than the part as soon as it overflows, storing nothing', async () => {
      let pulled = 0;
      async function* endless(): AsyncGenerator<Uint8Array> {
        for (;;) {
          await Promise.resolve();
          pulled += 1;
          yield bytesOf(16);
        }
      }
      const e = expectError(await h.uploads.put(new URL(url), endless()));
      expect(e).toMatchObject({ code: 'UPLOAD_INVALID', params: { reason: 'the body is longer than 40 bytes' } });
      expect(pulled).toBe(3);
      expect(await stored()).toBe(false);
      expect(await temps()).toEqual([]);

      const plusOne = expectError(await h.uploads.put(new URL(url), body(bytesOf(41))));
      expect(plusOne.code).toBe('UPLOAD_INVALID');
    });

    it('refuses a declared length other than the part, before reading', async () => {
      let pulled = false;
      async function* watched(): AsyncGenerator<Uint8Array> {
        pulled = true;
        yield await Promise.resolve(data);
      }
      const e = expectError(await h.uploads.put(new URL(url), watched(), 41));
      expect(e.code).toBe('UPLOAD_INVALID');
      expect(pulled).toBe(false);
    });

    it('a body that fails midway (the client went away) is UPLOAD_INVALID, not a failure: nothing stored, the temp file removed (outside probe)', async () => {
      async function* broken(): AsyncGenerator<Uint8Array> {
        yield data.subarray(0, 10);
        await Promise.resolve();
        throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
      }
      const e = expectError(await h.uploads.put(new URL(url), broken()));
      expect(e).toMatchObject({ code: 'UPLOAD_INVALID', params: { reason: 'the body ended after 10 of 40 bytes' } });
      expect(await stored()).toBe(false);
      expect(await temps()).toEqual([]);
    });

    it('a storage failure midway still fails (it is the server\'s, not the client\'s), removing the temp file', async () => {
      const begin = h.blobs.begin.bind(h.blobs);
      h.blobs.begin = async (key) => {
        const writer = await begin(key);
        let writes = 0;
        const write = writer.write.bind(writer);
        writer.write = (chunk) => (++writes === 2 ? Promise.reject(new Error('disk full')) : write(chunk));
        return writer;
      };
      await expect(h.uploads.put(new URL(url), body(data))).rejects.toThrow('disk full');
      expect(await stored()).toBe(false);
      expect(await temps()).toEqual([]);
    });

    it('replaces a part on a repeated PUT', async () => {
      const second = bytesOf(40, 9);
      expectOk(await h.uploads.put(new URL(url), body(data)));
      expectOk(await h.uploads.put(new URL(url), body(second)));
      expectOk(await h.uploads.complete(prepared.upload.id));
      expect((await readFile(h, prepared.upload.id, 'dir/file.bin'))?.equals(second)).toBe(true);
    });

    it('refuses a PUT once the upload is complete', async () => {
      expectOk(await h.uploads.put(new URL(url), body(data)));
      expectOk(await h.uploads.complete(prepared.upload.id));
      const e = expectError(await h.uploads.put(new URL(url), body(bytesOf(40, 5))));
      expect(e).toMatchObject({ code: 'UPLOAD_INVALID', params: { reason: 'the upload is already complete' } });
      expect((await readFile(h, prepared.upload.id, 'dir/file.bin'))?.equals(data)).toBe(true);
    });

    it('does not let a PUT still streaming when the upload completes change it', async () => {
      expectOk(await h.uploads.put(new URL(url), body(data)));
      let release = (): void => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      async function* held(): AsyncGenerator<Uint8Array> {
        yield bytesOf(20, 5);
        await gate;
        yield bytesOf(20, 6);
      }
      const late = h.uploads.put(new URL(url), held());
      expectOk(await h.uploads.complete(prepared.upload.id));
      release();
      expect(expectError(await late).code).toBe('UPLOAD_INVALID');
      expect((await readFile(h, prepared.upload.id, 'dir/file.bin'))?.equals(data)).toBe(true);
      expect(await temps()).toEqual([]);
    });

    it('answers UPLOAD_NOT_FOUND for a validly signed URL of an unknown upload', async () => {
      h.catalog.uploads.clear();
      expect(expectError(await h.uploads.put(new URL(url), body(data))).code).toBe('UPLOAD_NOT_FOUND');
    });
  });

  describe('multipart on the local disk: parts written in place', () => {
    const data = bytesOf(25);
    let prepared: PreparedUpload;
    const url = (i: number): URL => new URL(prepared.presigned[i]?.url ?? '');
    const slice = (i: number): Uint8Array => {
      const p = prepared.presigned[i] as PresignedRequest;
      return data.subarray(p.byteOffset, p.byteOffset + p.contentLength);
    };
    const missingParts = async (): Promise<number[]> => {
      const r = await h.uploads.complete(prepared.upload.id);
      return r.ok ? [] : (r.error.metadata as { missing: { part?: number }[] }).missing.map((m) => m.part ?? 0);
    };
    const published = (): Promise<Buffer | undefined> => readFile(h, prepared.upload.id, 'image.tar');
    const assembly = (): Promise<string[]> => readdir(join(h.root, 'uploads', prepared.upload.id, 'assembly', '0')).catch(() => []);
    beforeEach(async () => {
      h = await harness({ chunkBytes: 10 });
      prepared = expectOk(await h.uploads.prepare({ gameId: GAME, kind: 'build', files: [{ path: 'image.tar', contentLength: 25 }], multipart: true }));
    });

    it('writes each part once into one staged file of the full size, and publishes it by renaming', async () => {
      expect((await stat(join(h.root, 'uploads', prepared.upload.id, 'assembly', '0', 'data'))).size).toBe(25);
      await putAll(h, prepared, new Map([['image.tar', data]]), [1, 2, 0]);
      expect(await readdir(join(h.root, 'uploads', prepared.upload.id))).toEqual(['assembly']);
      expect(await h.blobs.stagedParts(`uploads/${prepared.upload.id}/assembly/0`)).toEqual(new Map([[1, 10], [2, 10], [3, 5]]));
      expectOk(await h.uploads.complete(prepared.upload.id));
      expect((await published())?.equals(data)).toBe(true);
      expect(await readdir(join(h.root, 'uploads', prepared.upload.id))).toEqual(['files']);
    });

    it('refuses a short or long part, which then counts as missing, without touching its neighbours', async () => {
      await putAll(h, prepared, new Map([['image.tar', data]]), [0, 2]);
      expect(expectError(await h.uploads.put(url(1), body(slice(1).subarray(0, 9)))).params).toEqual({ reason: 'the body has 9 of 10 bytes' });
      expect(await missingParts()).toEqual([2]);
      const long = Buffer.concat([slice(1), Buffer.from([0xee, 0xee, 0xee])]);
      expect(expectError(await h.uploads.put(url(1), body(long))).params).toEqual({ reason: 'the body is longer than 10 bytes' });
      expect(await missingParts()).toEqual([2]);
      expect(await published()).toBeUndefined();
      await putAll(h, prepared, new Map([['image.tar', data]]), [1]);
      expectOk(await h.uploads.complete(prepared.upload.id));
      expect((await published())?.equals(data)).toBe(true);
    });

    it('replaces a part on a repeated PUT; a repeated PUT that fails leaves the part missing', async () => {
      await putAll(h, prepared, new Map([['image.tar', bytesOf(25, 4)]]));
      await putAll(h, prepared, new Map([['image.tar', data]]), [0]);
      async function* broken(): AsyncGenerator<Uint8Array> {
        yield data.subarray(10, 13);
        await Promise.resolve();
        throw new Error('aborted');
      }
      expect(expectError(await h.uploads.put(url(1), broken())).params).toEqual({ reason: 'the body ended after 3 of 10 bytes' });
      expect(await missingParts()).toEqual([2]);
      await putAll(h, prepared, new Map([['image.tar', data]]), [1, 2]);
      expectOk(await h.uploads.complete(prepared.upload.id));
      expect((await published())?.equals(data)).toBe(true);
    });

    it('lets the later of two PUTs of a part win, stopping the earlier one', async () => {
      await putAll(h, prepared, new Map([['image.tar', data]]), [0, 2]);
      let release = (): void => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let taken = (): void => undefined;
      const firstTaken = new Promise<void>((resolve) => (taken = resolve));
      async function* held(): AsyncGenerator<Uint8Array> {
        yield bytesOf(5, 8);
        // The PUT asks for more: it has taken the first chunk.
        taken();
        await gate;
        yield bytesOf(5, 9);
      }
      const early = h.uploads.put(url(1), held());
      await firstTaken;
      expectOk(await h.uploads.put(url(1), body(slice(1))));
      release();
      expect(expectError(await early).params).toEqual({ reason: 'a later PUT of this part replaced this one' });
      expectOk(await h.uploads.complete(prepared.upload.id));
      expect((await published())?.equals(data)).toBe(true);
    });

    it('refuses completion while a part is streaming (even one received before), and every PUT once complete', async () => {
      await putAll(h, prepared, new Map([['image.tar', data]]));
      let release = (): void => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let taken = (): void => undefined;
      const firstTaken = new Promise<void>((resolve) => (taken = resolve));
      async function* held(): AsyncGenerator<Uint8Array> {
        yield slice(1).subarray(0, 4);
        taken();
        await gate;
        yield slice(1).subarray(4);
      }
      const streaming = h.uploads.put(url(1), held());
      await firstTaken;
      const e = expectError(await h.uploads.complete(prepared.upload.id));
      expect(e).toMatchObject({ code: 'UPLOAD_INCOMPLETE', params: { reason: "part 2 of 3 of file 'image.tar' has not been uploaded" } });
      release();
      expectOk(await streaming);
      expectOk(await h.uploads.complete(prepared.upload.id));
      const late = expectError(await h.uploads.put(url(0), body(bytesOf(10, 3))));
      expect(late).toMatchObject({ code: 'UPLOAD_INVALID', params: { reason: 'the upload is already complete' } });
      expect((await published())?.equals(data)).toBe(true);
    });

    it('after a crash: a part cut midway is missing and nothing is published; a completion cut after the rename finishes on retry', async () => {
      await putAll(h, prepared, new Map([['image.tar', data]]), [0, 2]);
      // The process dies while part 2 streams: the body never ends.
      let die = (): void => undefined;
      const death = new Promise<void>((_, reject) => (die = () => reject(new Error('the old process is gone'))));
      let taken = (): void => undefined;
      const firstTaken = new Promise<void>((resolve) => (taken = resolve));
      async function* dies(): AsyncGenerator<Uint8Array> {
        yield slice(1).subarray(0, 6);
        taken();
        await death;
      }
      const cut = h.uploads.put(url(1), dies());
      await firstTaken;
      const restarted = new Uploads({
        catalog: h.catalog, blobs: new FsBlobs(h.root), clock: h.clock, random: { uuid: () => 'unused', u32: () => 0 },
        secret: new TextEncoder().encode('test secret'), publicOrigin: ORIGIN, limits: { chunkBytes: 10 },
      });
      expect(expectError(await restarted.complete(prepared.upload.id)).metadata).toMatchObject({ missing: [{ path: 'image.tar', part: 2 }] });
      expect(await restarted.openFile(prepared.upload.id, 'image.tar')).toBeUndefined();
      expectOk(await restarted.put(url(1), body(slice(1))));
      // Then a crash right after completion renamed the file, before the catalog recorded it.
      expect(await h.blobs.publishStaged(`uploads/${prepared.upload.id}/assembly/0`, `uploads/${prepared.upload.id}/files/image.tar`)).toBe(true);
      expect(await restarted.openFile(prepared.upload.id, 'image.tar')).toBeUndefined();
      const refused = expectError(await restarted.put(url(0), body(bytesOf(10, 3))));
      expect(refused).toMatchObject({ code: 'UPLOAD_INVALID', params: { reason: 'the file takes no more parts: complete the upload' } });
      expectOk(await restarted.complete(prepared.upload.id));
      expect((await readFile(h, prepared.upload.id, 'image.tar'))?.equals(data)).toBe(true);
      die(); // (only to release the dead PUT's file handle)
      expect(expectError(await cut).code).toBe('UPLOAD_INVALID');
      expect((await readFile(h, prepared.upload.id, 'image.tar'))?.equals(data)).toBe(true);
    });

    it('completes an upload prepared before parts were written in place (one blob per part) the old way', async () => {
      await h.blobs.delete(`uploads/${prepared.upload.id}/assembly`);
      await putAll(h, prepared, new Map([['image.tar', data]]), [2, 0]);
      expect(await readdir(join(h.root, 'uploads', prepared.upload.id, 'parts', '0'))).toEqual(['1', '3']);
      expect(await missingParts()).toEqual([2]);
      await putAll(h, prepared, new Map([['image.tar', data]]), [1]);
      expectOk(await h.uploads.complete(prepared.upload.id));
      expect((await published())?.equals(data)).toBe(true);
      expect(await readdir(join(h.root, 'uploads', prepared.upload.id))).toEqual(['files']);
    });

    it('a storage failure while writing a part fails the PUT (the server\'s fault) and leaves the part missing', async () => {
      const writePart = h.blobs.writePart.bind(h.blobs);
      h.blobs.writePart = async (...args) => {
        const writer = await writePart(...args);
        if (writer !== undefined) writer.flush = () => Promise.reject(new Error('disk full'));
        return writer;
      };
      await expect(h.uploads.put(url(0), body(slice(0)))).rejects.toThrow('disk full');
      expect(await missingParts()).toEqual([1, 2, 3]);
      expect(await assembly()).toEqual(['data', 'parts']);
    });
  });

  describe('complete', () => {
    it('names the missing part, then completes once it arrives', async () => {
      h = await harness({ chunkBytes: 10 });
      const data = bytesOf(25);
      const prepared = expectOk(await h.uploads.prepare({ gameId: GAME, kind: 'build', files: [{ path: 'image.tar', contentLength: 25 }], multipart: true }));
      await putAll(h, prepared, new Map([['image.tar', data]]), [0, 2]);
      const e = expectError(await h.uploads.complete(prepared.upload.id));
      expect(e).toMatchObject({
        code: 'UPLOAD_INCOMPLETE',
        params: { reason: "part 2 of 3 of file 'image.tar' has not been uploaded" },
        metadata: { missing: [{ path: 'image.tar', part: 2, reason: "part 2 of 3 of file 'image.tar' has not been uploaded" }] },
      });
      expect(h.catalog.uploads.get(prepared.upload.id)?.completedAt).toBeUndefined();
      await putAll(h, prepared, new Map([['image.tar', data]]), [1]);
      expectOk(await h.uploads.complete(prepared.upload.id));
      expect((await readFile(h, prepared.upload.id, 'image.tar'))?.equals(data)).toBe(true);
    });

    it('lists every missing file of a site', async () => {
      const prepared = expectOk(
        await h.uploads.prepare({ gameId: GAME, kind: 'cdn', files: ['a', 'b', 'c'].map((path) => ({ path, contentLength: 3 })) }),
      );
      await putAll(h, { ...prepared, presigned: prepared.presigned.slice(1, 2) }, new Map([['b', bytesOf(3)]]));
      const e = expectError(await h.uploads.complete(prepared.upload.id));
      expect(e.params).toEqual({ reason: "file 'a' has not been uploaded" });
      expect((e.metadata as { missing: { path: string }[] }).missing.map((m) => m.path)).toEqual(['a', 'c']);
      expect(await h.uploads.openFile(prepared.upload.id, 'b')).toBeUndefined();
    });

    it('is idempotent', async () => {
      const prepared = await prepareOne('a', bytesOf(3));
      await putAll(h, prepared, new Map([['a', bytesOf(3)]]));
      h.clock.at = T0 + 10;
      const first = expectOk(await h.uploads.complete(prepared.upload.id));
      h.clock.at = T0 + 20;
      const [second, third] = await Promise.all([h.uploads.complete(prepared.upload.id), h.uploads.complete(prepared.upload.id, GAME)]);
      expect(first.completedAt).toBe(T0 + 10);
      expect(expectOk(second)).toEqual(first);
      expect(expectOk(third)).toEqual(first);
    });

    it('answers UPLOAD_NOT_FOUND for an unknown upload or another game', async () => {
      const prepared = await prepareOne('a', bytesOf(3));
      await putAll(h, prepared, new Map([['a', bytesOf(3)]]));
      expect(expectError(await h.uploads.complete('00000000-0000-4000-8000-000000000999')).code).toBe('UPLOAD_NOT_FOUND');
      expect(expectError(await h.uploads.complete(prepared.upload.id, '22222222-2222-4222-8222-222222222222')).code).toBe('UPLOAD_NOT_FOUND');
      expect(h.catalog.uploads.get(prepared.upload.id)?.completedAt).toBeUndefined();
    });
  });

  it('abandons uploads that expired without completing: their parts deleted, completion refused; completed ones stay', async () => {
    const k = await harness({ chunkBytes: 4 });
    const data = bytesOf(10);
    const open = expectOk(await k.uploads.prepare({ gameId: GAME, kind: 'build', files: [{ path: 'image.tar', contentLength: 10 }], multipart: true }));
    const [first] = open.presigned;
    expectOk(await k.uploads.put(new URL(first?.url ?? ''), body(data.subarray(0, 4)), 4));
    const done = expectOk(await k.uploads.prepare({ gameId: GAME, kind: 'cdn', files: [{ path: 'index.html', contentLength: 10 }] }));
    await putAll(k, done, new Map([['index.html', data]]));
    expectOk(await k.uploads.complete(done.upload.id));
    expect(await k.uploads.sweepExpired()).toBe(0);
    k.clock.at = open.upload.expiresAt + 1;
    expect(await k.uploads.sweepExpired()).toBe(1);
    expect(await readdir(join(k.root, 'uploads', open.upload.id)).catch(() => 'gone')).toBe('gone');
    expect(k.catalog.uploads.get(open.upload.id)?.abandonedAt).toBe(open.upload.expiresAt + 1);
    expect(expectError(await k.uploads.complete(open.upload.id)).code).toBe('UPLOAD_EXPIRED');
    expect(await k.uploads.sweepExpired()).toBe(0);
    expect((await readFile(k, done.upload.id, 'index.html'))?.equals(data)).toBe(true);
  });

  it('keeps byte-identical files through prepare, put and complete', async () => {
    const segment = fc.stringMatching(/^[a-zA-Z0-9 ._é-]{1,8}$/).filter((s) => s !== '.' && s !== '..');
    const file = fc.record({ path: fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join('/')), length: fc.nat(60), seed: fc.nat(255) });
    const files = fc.uniqueArray(file, { maxLength: 6, selector: (f) => f.path.normalize('NFC').toLowerCase() });
    // Keep only lists where no file is also another's directory.
    const consistent = files.filter((fs) => fs.every((a) => fs.every((b) => !b.path.toLowerCase().normalize('NFC').startsWith(`${a.path.toLowerCase().normalize('NFC')}/`))));
    const root = h.root;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(consistent, fc.boolean(), fc.integer({ min: 1, max: 16 }), fc.nat(), async (list, cdn, chunkBytes, shuffle) => {
        const k = await harness({ chunkBytes }, join(root, `run${(run += 1)}`));
        const contents = new Map(list.map((f) => [f.path, bytesOf(f.length, f.seed)]));
        const prepared = expectOk(
          await k.uploads.prepare({
            gameId: GAME,
            kind: cdn ? 'cdn' : 'build',
            files: list.map((f) => ({ path: f.path, contentLength: f.length })),
            multipart: !cdn,
          }),
        );
        const parts = prepared.presigned.length;
        expect(parts).toBe(list.reduce((n, f) => n + (cdn ? 1 : Math.max(1, Math.ceil(f.length / chunkBytes))), 0));
        const order = Array.from({ length: parts }, (_, i) => (i * (2 * shuffle + 1)) % parts);
        await putAll(k, prepared, contents, new Set(order).size === parts ? order : undefined);
        expectOk(await k.uploads.complete(prepared.upload.id));
        for (const [path, data] of contents) expect((await readFile(k, prepared.upload.id, path))?.equals(data)).toBe(true);
      }),
      { numRuns: 25 },
    );
  });

  it('defaults to Rivet’s limits', () => {
    expect(DEFAULT_UPLOAD_LIMITS).toMatchObject({ chunkBytes: 100 * 2 ** 20, singleExpiryMs: 3_600_000, multipartExpiryMs: 21_600_000 });
  });
});
