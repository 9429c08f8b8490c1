import { describe, expect, it } from 'vitest';
import { matchError } from '../../src/core/errors.js';
import { err } from '../../src/core/result.js';
import type { Blobs } from '../../src/io/blobs.js';
import { conflict } from '../../src/io/catalog.js';
import {
  createBuild,
  createSite,
  imageTagProblems,
  listBuilds,
  listSites,
  type NewBuild,
  type UploadPreparer,
} from '../../src/services/builds.js';
import { DEFAULT_UPLOAD_LIMITS, Uploads, type PrepareUpload } from '../../src/services/uploads.js';
import { cloud, expectError, expectOk, overriding, T0 } from './cloud.js';

const unused = (): never => {
  throw new Error('preparing an upload touches no blob');
};
const NO_BLOBS: Blobs = { begin: unused, open: unused, stat: unused, delete: unused };

/** The cloud fixture with a real uploads service (1 KiB chunks) whose `prepare` calls are recorded. */
const setup = async () => {
  const c = cloud();
  const game = await c.game();
  const real = new Uploads({
    catalog: c.catalog, blobs: NO_BLOBS, clock: c.clock, random: c.random,
    secret: new Uint8Array(32).fill(1), publicOrigin: 'http://tavern.test', limits: { ...DEFAULT_UPLOAD_LIMITS, chunkBytes: 1024 },
  });
  const prepared: PrepareUpload[] = [];
  const uploads: UploadPreparer = { prepare: (request) => (prepared.push(request), real.prepare(request)) };
  return { c, game, prepared, deps: { ...c.deps, uploads } };
};

const build = (over: Partial<NewBuild> = {}): NewBuild => ({
  displayName: 'Build', imageTag: 'game:v1', kind: 'docker_image', compression: 'none', multipart: false, file: { contentLength: 3 }, ...over,
});

describe('imageTagProblems', () => {
  it("reports image-tag.not-unique for a tag one of the game's builds has", async () => {
    const { c, game, deps } = await setup();
    const other = await c.game('other');
    expectOk(await createBuild(deps, game.id, build({ imageTag: 'game:v1' })));
    expect(await imageTagProblems(deps, game.id, 'game:v1')).toEqual([{ path: ['image-tag', 'not-unique'] }]);
    expect(await imageTagProblems(deps, game.id, 'game:v2')).toEqual([]);
    expect(await imageTagProblems(deps, other.id, 'game:v1')).toEqual([]);
  });
});

describe('createBuild', () => {
  it('prepares the image upload under a name from kind and compression, and records the build', async () => {
    const { c, game, deps, prepared } = await setup();
    c.clock.t = T0 + 3;
    const made = expectOk(await createBuild(deps, game.id, build({ kind: 'oci_bundle', compression: 'lz4', file: { contentLength: 5, contentType: 'application/x-tar' } })));
    expect(prepared).toEqual([{ gameId: game.id, kind: 'build', files: [{ contentLength: 5, contentType: 'application/x-tar', path: 'oci-bundle.tar.lz4' }], multipart: false }]);
    expect(made.record).toEqual({
      id: made.record.id, gameId: game.id, uploadId: made.upload.id, displayName: 'Build', imageTag: 'game:v1',
      kind: 'oci_bundle', compression: 'lz4', createdAt: T0 + 3,
    });
    expect(await c.catalog.getBuild(made.record.id)).toEqual(made.record);
    expect(made.presigned.map((p) => p.path)).toEqual(['oci-bundle.tar.lz4']);
    expect(expectOk(await createBuild(deps, game.id, build({ imageTag: 'game:v2' }))).upload.files[0]?.path).toBe('image.tar');
  });

  it('splits a multipart image into chunks', async () => {
    const { game, deps } = await setup();
    const made = expectOk(await createBuild(deps, game.id, build({ multipart: true, file: { contentLength: 2500 } })));
    expect(made.presigned.map((p) => [p.byteOffset, p.contentLength])).toEqual([[0, 1024], [1024, 1024], [2048, 452]]);
  });

  it('refuses a taken image tag as a VALIDATION_ERROR before preparing anything', async () => {
    const { game, deps, prepared } = await setup();
    expectOk(await createBuild(deps, game.id, build()));
    const error = expectError(await createBuild(deps, game.id, build({ displayName: 'Again' })));
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', params: { error: 'image-tag.not-unique' } });
    expect(prepared).toHaveLength(1);
  });

  it('answers UPLOAD_INVALID when the server has no uploads service', async () => {
    const { c, game } = await setup();
    const error = expectError(await createBuild(c.deps, game.id, build()));
    expect(error).toEqual(matchError('UPLOAD_INVALID', { reason: 'uploads are not configured on this server' }));
    expect(await c.catalog.listBuilds(game.id)).toEqual([]);
  });

  it("passes the uploads service's refusal on, and records no build", async () => {
    const { c, game, deps } = await setup();
    const error = expectError(await createBuild(deps, game.id, build({ file: { contentLength: 3, contentType: 'bad\ntype' } })));
    expect(error).toMatchObject({ code: 'UPLOAD_INVALID', path: ['files', '0', 'content_type'] });
    expect(await c.catalog.listBuilds(game.id)).toEqual([]);
  });

  it('answers UPLOAD_INVALID when the catalog refuses the record', async () => {
    const { c, game, deps } = await setup();
    const catalog = overriding(c.catalog, { createBuild: (b) => Promise.resolve(conflict('id', b.id)) });
    const error = expectError(await createBuild({ ...deps, catalog }, game.id, build()));
    expect(error).toEqual(matchError('UPLOAD_INVALID', { reason: 'the build could not be recorded' }));
  });
});

describe('createSite', () => {
  const files = [{ path: 'index.html', contentLength: 10, contentType: 'text/html' }, { path: 'assets/app.js', contentLength: 20 }];

  it("prepares the site's files and records the site", async () => {
    const { c, game, deps, prepared } = await setup();
    c.clock.t = T0 + 4;
    const made = expectOk(await createSite(deps, game.id, { displayName: 'Site', files }));
    expect(prepared).toEqual([{ gameId: game.id, kind: 'cdn', files }]);
    expect(made.record).toEqual({ id: made.record.id, gameId: game.id, uploadId: made.upload.id, displayName: 'Site', createdAt: T0 + 4 });
    expect(await c.catalog.getCdnSite(made.record.id)).toEqual(made.record);
    expect(made.presigned.map((p) => p.path)).toEqual(['index.html', 'assets/app.js']);
  });

  it("answers UPLOAD_INVALID without an uploads service, and passes the uploads service's refusal on", async () => {
    const { c, game, deps } = await setup();
    expect(expectError(await createSite(c.deps, game.id, { displayName: 'Site', files })).code).toBe('UPLOAD_INVALID');
    const refusing = { ...deps, uploads: { prepare: () => err(matchError('UPLOAD_INVALID', { reason: 'no' })) } };
    expect(expectError(await createSite(refusing, game.id, { displayName: 'Site', files }))).toEqual(matchError('UPLOAD_INVALID', { reason: 'no' }));
    expect(await c.catalog.listCdnSites(game.id)).toEqual([]);
  });

  it('answers UPLOAD_INVALID when the catalog refuses the record', async () => {
    const { c, game, deps } = await setup();
    const catalog = overriding(c.catalog, { createCdnSite: (s) => Promise.resolve(conflict('id', s.id)) });
    const error = expectError(await createSite({ ...deps, catalog }, game.id, { displayName: 'Site', files }));
    expect(error).toEqual(matchError('UPLOAD_INVALID', { reason: 'the site could not be recorded' }));
  });
});

describe('listBuilds and listSites', () => {
  it("list the game's records newest first with their upload's total size and completion", async () => {
    const { c, game, deps } = await setup();
    const first = expectOk(await createBuild(deps, game.id, build({ imageTag: 'game:a', file: { contentLength: 7 } })));
    const second = expectOk(await createBuild(deps, game.id, build({ imageTag: 'game:b', file: { contentLength: 9 } })));
    await c.catalog.completeUpload(first.upload.id, T0);
    expect((await listBuilds(deps, game.id)).map((b) => [b.record.id, b.contentLength, b.complete])).toEqual([
      [second.record.id, 9, false],
      [first.record.id, 7, true],
    ]);
    const site = expectOk(await createSite(deps, game.id, { displayName: 'Site', files: [{ path: 'a', contentLength: 2 }, { path: 'b', contentLength: 3 }] }));
    expect(await listSites(deps, game.id)).toEqual([{ record: site.record, contentLength: 5, complete: false }]);
    expect(await listSites(deps, (await c.game('other')).id)).toEqual([]);
  });

  it('count a record whose upload is gone as empty and incomplete', async () => {
    const { c, game } = await setup();
    const build = { id: 'b', gameId: game.id, uploadId: 'gone', displayName: 'B', imageTag: 'x:y', kind: 'docker_image', compression: 'none', createdAt: T0 };
    await c.catalog.createBuild(build);
    expect(await listBuilds(c.deps, game.id)).toEqual([{ record: build, contentLength: 0, complete: false }]);
  });
});
