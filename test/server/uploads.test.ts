/** createGameBuild, createGameCdnSite, listings, upload completion and the presigned PUT (§2.8, §2.9, §6). */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { harness, str, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

const put = (url: string, body: string | Uint8Array, headers: Record<string, string> = {}) => h.app.handle(new Request(url, { method: 'PUT', body, headers }));

describe('builds', () => {
  it('creates a build with one presigned PUT, completes it, and lists it', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    const r = await h.call('POST', `/cloud/games/${gameId}/builds`, {
      token: cloud,
      body: { display_name: 'Build 2', image_tag: 'game:v2', image_file: { path: 'whatever.tar', content_type: 'binary/octet-stream', content_length: 5 }, kind: 'oci_bundle', compression: 'lz4' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['build_id', 'image_presigned_request', 'upload_id']);
    const presigned = r.body['image_presigned_request'];
    expect(presigned).toMatchObject({ path: 'oci-bundle.tar.lz4', byte_offset: 0, content_length: 5 });
    expect(str(presigned?.['url'])).toMatch(/^http:\/\/tavern\.test\/uploads\//);
    const res = await put(str(presigned?.['url']), 'hello');
    expect(res.status).toBe(200);
    expect(res.headers.get('rvt-ray-id')).toBeTruthy();
    const done = await h.call('POST', `/cloud/uploads/${str(r.body['upload_id'])}/complete`, { token: cloud });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({});
    const list = await h.call('GET', `/cloud/games/${gameId}/builds`, { token: cloud });
    expect(list.body['builds']?.[0]).toMatchObject({ build_id: r.body['build_id'], upload_id: r.body['upload_id'], display_name: 'Build 2', content_length: 5, complete: true });
    expect(list.body['builds']).toHaveLength(2);
  });

  it('hands out one presigned PUT per part for a multipart build', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    const size = 250 * 1024 * 1024;
    const r = await h.call('POST', `/cloud/games/${gameId}/builds`, {
      token: cloud, body: { display_name: 'Big', image_tag: 'game:big', image_file: { path: 'image.tar', content_length: size }, multipart_upload: true },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body['image_presigned_request']).toBeUndefined();
    const parts = r.body['image_presigned_requests'] as unknown as { byte_offset: number; content_length: number }[];
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.reduce((n, p) => n + p.content_length, 0)).toBe(size);
    const incomplete = await h.call('POST', `/cloud/uploads/${str(r.body['upload_id'])}/complete`, { token: cloud });
    expect(incomplete.body['code']).toBe('UPLOAD_INCOMPLETE');
  });

  it('validates the body (every problem), the image tag and the size', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    const bad = await h.call('POST', `/cloud/games/${gameId}/builds`, { token: cloud, body: { display_name: '', image_tag: 'nocolon', image_file: { content_length: -1 } } });
    expect(bad.body['message']).toBe('did not pass validation: display-name.too-short, image-tag.invalid, image_file.path.missing, image_file.content_length.out-of-range');
    await h.call('POST', `/cloud/games/${gameId}/builds`, { token: cloud, body: { display_name: 'a', image_tag: 'game:dup', image_file: { path: 'i', content_length: 1 } } });
    const dup = await h.call('POST', `/cloud/games/${gameId}/builds`, { token: cloud, body: { display_name: 'a', image_tag: 'game:dup', image_file: { path: 'i', content_length: 1 } } });
    expect(dup.body['message']).toBe('did not pass validation: image-tag.not-unique');
    // Builds stay under 8 GB (wire.md §6.1): one byte less is accepted (multipart), 8 GB is not.
    const big = await h.call('POST', `/cloud/games/${gameId}/builds`, { token: cloud, body: { display_name: 'a', image_tag: 'game:big', image_file: { path: 'i', content_length: 8_000_000_000 } } });
    expect(big.status).toBe(400);
    expect(big.body['code']).toBe('UPLOAD_TOO_LARGE');
    const under = await h.call('POST', `/cloud/games/${gameId}/builds`, { token: cloud, body: { display_name: 'a', image_tag: 'game:under', multipart_upload: true, image_file: { path: 'i', content_length: 7_999_999_999 } } });
    expect(under.status, JSON.stringify(under.body)).toBe(200);
    const kind = await h.call('POST', `/cloud/games/${gameId}/builds`, { token: cloud, body: { display_name: 'a', image_tag: 'game:k', kind: 'zip', image_file: { path: 'i', content_length: 1 } } });
    expect(kind.body['message']).toBe('did not pass validation: kind.invalid');
  });
});

describe('CDN sites', () => {
  it('creates a site with one PUT per file (Content-Type signed) and lists it', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    const r = await h.call('POST', `/cloud/games/${gameId}/cdn/sites`, {
      token: cloud,
      body: { display_name: 'Site', files: [{ path: 'index.html', content_type: 'text/html', content_length: 4 }, { path: 'js/app.js', content_length: 2 }] },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const presigned = r.body['presigned_requests'] as unknown as { path: string; url: string; content_length: number }[];
    expect(presigned.map((p) => p.path).sort()).toEqual(['index.html', 'js/app.js']);
    for (const p of presigned) expect((await put(p.url, 'x'.repeat(p.content_length))).status).toBe(200);
    expect((await h.call('POST', `/cloud/uploads/${str(r.body['upload_id'])}/complete`, { token: cloud })).status).toBe(200);
    const list = await h.call('GET', `/cloud/games/${gameId}/cdn/sites`, { token: cloud });
    expect(list.body['sites']).toEqual([expect.objectContaining({ site_id: r.body['site_id'], content_length: 6, complete: true })]);
  });

  it('UPLOAD_TOO_LARGE at 1 GB in all, not a byte less; errors of the uploads service pass through', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    const big = await h.call('POST', `/cloud/games/${gameId}/cdn/sites`, { token: cloud, body: { display_name: 'Site', files: [{ path: 'a', content_length: 600_000_000 }, { path: 'b', content_length: 400_000_000 }] } });
    expect(big.status).toBe(400);
    expect(big.body['code']).toBe('UPLOAD_TOO_LARGE');
    const under = await h.call('POST', `/cloud/games/${gameId}/cdn/sites`, { token: cloud, body: { display_name: 'Site', files: [{ path: 'a', content_length: 600_000_000 }, { path: 'b', content_length: 399_999_999 }] } });
    expect(under.status, JSON.stringify(under.body)).toBe(200);
    const escape = await h.call('POST', `/cloud/games/${gameId}/cdn/sites`, { token: cloud, body: { display_name: 'Site', files: [{ path: '../etc/passwd', content_length: 1 }] } });
    expect(escape.status).toBe(400);
    expect(str(escape.body['code'])).toMatch(/^(UPLOAD_INVALID|VALIDATION_ERROR)$/);
  });
});

describe('presigned PUT and completion', () => {
  it('refuses a tampered signature, a wrong length, and unknown uploads', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    const r = await h.call('POST', `/cloud/games/${gameId}/cdn/sites`, { token: cloud, body: { display_name: 'Site', files: [{ path: 'index.html', content_length: 4 }] } });
    const url = str(r.body['presigned_requests']?.[0]?.['url']);
    const tampered = url.replace(/signature=[^&]+/, 'signature=00');
    expect((await put(tampered, 'abcd')).status).toBe(403);
    const short = await put(url, 'abc');
    expect(short.status).toBe(400);
    expect(((await short.json()) as { code: string }).code).toBe('UPLOAD_INVALID');
    const missing = await h.call('POST', `/cloud/uploads/${randomUUID()}/complete`, { token: cloud });
    expect(missing.status).toBe(404);
    expect(missing.body['code']).toBe('UPLOAD_NOT_FOUND');
  });

  it('completion needs a cloud token of the upload\'s game (Rivet checked no ownership)', async () => {
    h = harness();
    const a = await h.setup(undefined, 'game-a');
    const b = await h.setup(undefined, 'game-b');
    const r = await h.call('POST', `/cloud/games/${a.gameId}/cdn/sites`, { token: a.cloud, body: { display_name: 'Site', files: [{ path: 'i', content_length: 1 }] } });
    await put(str(r.body['presigned_requests']?.[0]?.['url']), 'x');
    const other = await h.call('POST', `/cloud/uploads/${str(r.body['upload_id'])}/complete`, { token: b.cloud });
    expect(other.status).toBeGreaterThanOrEqual(400);
    expect(other.status).toBeLessThan(500);
    expect((await h.call('POST', `/cloud/uploads/${str(r.body['upload_id'])}/complete`, { token: a.pub })).status).toBe(401);
    expect((await h.call('POST', `/cloud/uploads/${str(r.body['upload_id'])}/complete`, { token: a.cloud })).status).toBe(200);
  });

  it('streams PUT bodies larger than the JSON cap', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    const size = 3 * 1024 * 1024;
    const r = await h.call('POST', `/cloud/games/${gameId}/builds`, { token: cloud, body: { display_name: 'B', image_tag: 'g:large', image_file: { path: 'i', content_length: size } } });
    const res = await put(str(r.body['image_presigned_request']?.['url']), new Uint8Array(size).fill(1));
    expect(res.status).toBe(200);
  });
});
