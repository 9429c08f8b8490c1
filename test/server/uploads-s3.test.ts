/**
 * Builds and CDN sites stored in S3 (the test server `.ci/run` starts; it must answer under CI):
 * presigned requests point straight at the bucket, completion lists every part and HEADs every
 * object, the CDN serves from the bucket; and the bad input of issue 21: wrong lengths, forged and
 * expired URLs, PUTs after completion, missing parts, an endpoint that is down.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { S3Blobs } from '../../src/adapters/s3/blobs.js';
import { describeWithS3, freshBucket, s3Problem, S3_ENDPOINT } from '../s3/s3.js';
import { cdnWorld, CDN_DOMAIN, type CdnWorld } from './cdn-site.js';
import { ADMIN, harness, str, type Harness } from './harness.js';
import { eventually } from '../wait.js';

const MiB = 2 ** 20;
const problem = await s3Problem();

let w: CdnWorld | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await w?.close();
  h?.cleanup();
  w = undefined;
  h = undefined;
});

const s3World = async (limits = {}): Promise<CdnWorld> => {
  const s3 = new S3Blobs(await freshBucket());
  return cdnWorld('my-game', { blobs: s3, direct: s3, limits });
};

const readAll = async (body: AsyncIterable<Uint8Array> | undefined): Promise<Buffer> => {
  const chunks: Uint8Array[] = [];
  if (body !== undefined) for await (const c of body) chunks.push(c);
  return Buffer.concat(chunks);
};

interface Presigned {
  readonly path: string;
  readonly url: string;
  readonly byte_offset: number;
  readonly content_length: number;
}

/** A multipart build of `size` bytes: its ids and its presigned part PUTs. */
const multipartBuild = async (world: CdnWorld, size: number): Promise<{ buildId: string; uploadId: string; parts: Presigned[] }> => {
  const r = await world.h.call('POST', `/cloud/games/${world.gameId}/builds`, {
    token: world.cloud, body: { display_name: 'Big', image_tag: `game:${Math.random().toString(36).slice(2, 8)}`, image_file: { path: 'image.tar', content_length: size }, multipart_upload: true },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { buildId: str(r.body['build_id']), uploadId: str(r.body['upload_id']), parts: r.body['image_presigned_requests'] as unknown as Presigned[] };
};

const complete = (world: CdnWorld, uploadId: string) => world.h.call('POST', `/cloud/uploads/${uploadId}/complete`, { token: world.cloud });

describeWithS3('uploads to S3', problem, () => {
    it('uploads a CDN site straight to the bucket and the CDN serves it from there', async () => {
      w = await s3World();
      const created = await w.h.call('POST', `/cloud/games/${w.gameId}/cdn/sites`, { token: w.cloud, body: { display_name: 'S', files: [{ path: 'index.html', content_length: 2, content_type: 'text/html' }] } });
      const [p] = created.body['presigned_requests'] as unknown as Presigned[];
      expect(p?.url).toMatch(new RegExp(`^${S3_ENDPOINT}/t-[0-9a-f-]+/uploads/${str(created.body['upload_id'])}/staging/index\\.html\\?`));
      expect(p?.url).toContain('X-Amz-Signature=');
      await w.deploy([{ path: 'index.html', body: '<p>from s3</p>' }, { path: 'app.js', body: 'x'.repeat(3000) }]);
      const root = await w.get(`my-game.${CDN_DOMAIN}`, '/');
      expect(root.status).toBe(200);
      expect(root.body.toString()).toBe('<p>from s3</p>');
      const range = await w.get(`my-game.${CDN_DOMAIN}`, '/app.js', { range: 'bytes=10-19' });
      expect(range.status).toBe(206);
      expect(range.body.toString()).toBe('x'.repeat(10));
    });

    it('uploads a multipart build part by part in any order, lists every part on completion, and reads it back whole', async () => {
      w = await s3World({ chunkBytes: 5 * MiB });
      const size = 11 * MiB + 123;
      const image = randomBytes(size);
      const { buildId, uploadId, parts } = await multipartBuild(w, size);
      expect(parts.map((p) => p.content_length)).toEqual([5 * MiB, 5 * MiB, MiB + 123]);
      for (const p of [...parts].reverse()) {
        const res = await fetch(p.url, { method: 'PUT', body: image.subarray(p.byte_offset, p.byte_offset + p.content_length) });
        expect(res.status, await res.text()).toBe(200);
      }
      const done = await complete(w, uploadId);
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      const build = await w.h.catalog.getBuild(buildId);
      const opened = await w.h.uploads.openFile(build?.uploadId ?? '', 'image.tar');
      const back = await readAll(opened?.body);
      expect(createHash('sha256').update(back).digest('hex')).toBe(createHash('sha256').update(image).digest('hex'));
      // A part PUT after completion is refused: the multipart upload is gone.
      const late = await fetch(parts[0]?.url ?? '', { method: 'PUT', body: image.subarray(0, 5 * MiB) });
      expect(late.status).toBe(404);
      expect((await complete(w, uploadId)).status).toBe(200);
    });

    it('refuses to complete with a missing part, naming the file and part, and changes nothing', async () => {
      w = await s3World({ chunkBytes: 5 * MiB });
      const { uploadId, parts } = await multipartBuild(w, 10 * MiB + 1);
      const [first, , last] = parts;
      for (const p of [first, last]) expect((await fetch(p?.url ?? '', { method: 'PUT', body: randomBytes(p?.content_length ?? 0) })).status).toBe(200);
      const r = await complete(w, uploadId);
      expect(r.status).toBe(400);
      expect(r.body['code']).toBe('UPLOAD_INCOMPLETE');
      expect(r.body['message']).toBe("The upload is incomplete: part 2 of 3 of file 'image.tar' has not been uploaded (Tavern).");
      expect((await w.h.catalog.getUpload(uploadId))?.completedAt).toBeUndefined();
      expect(await w.h.uploads.openFile(uploadId, 'image.tar')).toBeUndefined();
    });

    it('refuses a PUT with the wrong length, a forged or an expired URL, and a site file PUT after completion changes nothing', async () => {
      // Long enough for the steps before the expiry check on a loaded machine; short enough to wait out.
      w = await s3World({ singleExpiryMs: 8_000 });
      const created = await w.h.call('POST', `/cloud/games/${w.gameId}/cdn/sites`, { token: w.cloud, body: { display_name: 'S', files: [{ path: 'index.html', content_length: 5 }] } });
      const uploadId = str(created.body['upload_id']);
      const [p] = created.body['presigned_requests'] as unknown as Presigned[];
      const url = p?.url ?? '';
      expect((await fetch(url, { method: 'PUT', body: 'toolong' })).status).toBe(403);
      expect((await fetch(url, { method: 'PUT', body: 'shrt' })).status).toBe(403);
      const forged = url.replace(/X-Amz-Signature=([0-9a-f])/, (_, c: string) => `X-Amz-Signature=${c === '0' ? '1' : '0'}`);
      expect((await fetch(forged, { method: 'PUT', body: 'hello' })).status).toBe(403);
      const other = url.replace('index.html', 'other.html');
      expect((await fetch(other, { method: 'PUT', body: 'hello' })).status).toBe(403);
      const short = await complete(w, uploadId);
      expect(short.body).toMatchObject({ code: 'UPLOAD_INCOMPLETE', metadata: { missing: [{ path: 'index.html', reason: "file 'index.html' has not been uploaded" }] } });
      expect((await fetch(url, { method: 'PUT', body: 'hello' })).status).toBe(200);
      expect((await complete(w, uploadId)).status).toBe(200);
      expect((await fetch(url, { method: 'PUT', body: 'HACKD' })).status).toBe(200);
      expect((await readAll((await w.h.uploads.openFile(uploadId, 'index.html'))?.body)).toString()).toBe('hello');
      // The bucket refuses the URL once it expired (8 s after it was signed), and from then on.
      await eventually('the bucket to refuse the expired URL', async () => (await fetch(url, { method: 'PUT', body: 'hello' })).status === 403, { timeoutMs: 20_000, everyMs: 250 });
      expect((await fetch(url, { method: 'PUT', body: 'hello' })).status).toBe(403);
    });

    it('aborts and deletes an upload that expired without completing: its parts are gone from the bucket and it can never complete', async () => {
      w = await s3World({ chunkBytes: 5 * MiB });
      const { uploadId, parts } = await multipartBuild(w, 10 * MiB + 1);
      const [first] = parts;
      expect((await fetch(first?.url ?? '', { method: 'PUT', body: randomBytes(5 * MiB) })).status).toBe(200);
      const record = await w.h.catalog.getUpload(uploadId);
      const multipartId = record?.files[0]?.multipartId ?? '';
      const s3 = w.h.blobs as S3Blobs;
      expect((await s3.listParts(`uploads/${uploadId}/files/image.tar`, multipartId)).map((p) => p.part)).toEqual([1]);
      expect(await w.h.uploads.sweepExpired()).toBe(0);
      w.h.clock.set((record?.expiresAt ?? 0) + 1);
      expect(await w.h.uploads.sweepExpired()).toBe(1);
      await expect(s3.listParts(`uploads/${uploadId}/files/image.tar`, multipartId)).rejects.toThrow(/upload does not exist/);
      expect((await fetch(parts[1]?.url ?? '', { method: 'PUT', body: randomBytes(5 * MiB) })).status).toBe(404);
      expect((await complete(w, uploadId)).body['code']).toBe('UPLOAD_EXPIRED');
    });

    it('answers 503 STORAGE_UNAVAILABLE when the S3 endpoint is down, recording nothing half-way', async () => {
      const down = new S3Blobs({ bucket: 'down', region: 'us-east-1', endpoint: 'http://127.0.0.1:9', forcePathStyle: true, accessKeyId: 'x', secretAccessKey: 'y' });
      h = harness({ blobs: down, direct: down, limits: { chunkBytes: 5 * MiB } });
      const game = await h.call('POST', '/cloud/games', { token: ADMIN, body: { name_id: 'down-game', display_name: 'Down', developer_group_id: randomUUID() } });
      const gameId = str(game.body['game_id']);
      const cloud = str((await h.call('POST', `/cloud/games/${gameId}/tokens/cloud`, { token: ADMIN })).body['token']);
      const builds = (await h.call('GET', `/cloud/games/${gameId}/builds`, { token: cloud })).body['builds'] as unknown as unknown[];
      const r = await h.call('POST', `/cloud/games/${gameId}/builds`, { token: cloud, body: { display_name: 'B', image_tag: 'game:down', image_file: { path: 'i', content_length: 11 * MiB }, multipart_upload: true } });
      expect(r.status).toBe(503);
      expect(r.body['code']).toBe('STORAGE_UNAVAILABLE');
      expect(r.headers.get('retry-after')).toBe('5');
      expect((await h.call('GET', `/cloud/games/${gameId}/builds`, { token: cloud })).body['builds']).toHaveLength(builds.length);
      const site = await h.call('POST', `/cloud/games/${gameId}/cdn/sites`, { token: cloud, body: { display_name: 'S', files: [{ path: 'index.html', content_length: 5 }] } });
      expect(site.status).toBe(200);
      const done = await h.call('POST', `/cloud/uploads/${str(site.body['upload_id'])}/complete`, { token: cloud });
      expect(done.status).toBe(503);
      expect(done.body['code']).toBe('STORAGE_UNAVAILABLE');
      expect((await h.catalog.getUpload(str(site.body['upload_id'])))?.completedAt).toBeUndefined();
    }, 30_000);
});
