import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsBlobs } from '../../src/adapters/fs/blobs.js';
import { StoredBuildArchives } from '../../src/services/build-archives.js';
import { createBuild, type NewBuild } from '../../src/services/builds.js';
import { Uploads } from '../../src/services/uploads.js';
import { cloud, expectOk } from './cloud.js';

const read = async (body: AsyncIterable<Uint8Array>): Promise<string> => {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks).toString();
};

describe('StoredBuildArchives', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'tavern-build-archives-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** A game, the uploads service on real blobs, and a way to upload a build like the CLI does. */
  const setup = async () => {
    const c = cloud();
    const game = await c.game();
    const uploads = new Uploads({ catalog: c.catalog, blobs: new FsBlobs(root), clock: c.clock, random: c.random, secret: new Uint8Array(32).fill(2), publicOrigin: 'http://tavern.test' });
    const archives = new StoredBuildArchives({ catalog: c.catalog, uploads });
    const upload = async (build: Pick<NewBuild, 'kind' | 'compression'>, content: string, complete = true): Promise<string> => {
      const made = expectOk(await createBuild({ ...c.deps, uploads }, game.id, {
        displayName: 'Build', imageTag: `game:${build.kind}-${build.compression}`, multipart: false, file: { contentLength: content.length }, ...build,
      }));
      const [part] = made.presigned;
      expectOk(await uploads.put(new URL(part?.url ?? ''), Readable.from([Buffer.from(content)]), content.length));
      if (complete) expectOk(await uploads.complete(made.upload.id, game.id));
      return made.record.id;
    };
    return { archives, upload };
  };

  it("reads a completed build's file, as often as asked, with the kind and compression it was created with", async () => {
    const { archives, upload } = await setup();
    for (const build of [{ kind: 'docker_image', compression: 'none' }, { kind: 'oci_bundle', compression: 'lz4' }] as const) {
      const id = await upload(build, `bytes of ${build.kind}`);
      const archive = await archives.build(id);
      expect(archive).toMatchObject(build);
      expect(await read(await archive!.open())).toBe(`bytes of ${build.kind}`);
      expect(await read(await archive!.open())).toBe(`bytes of ${build.kind}`);
    }
  });

  it('knows no build that does not exist or whose upload is not complete', async () => {
    const { archives, upload } = await setup();
    expect(await archives.build('00000000-0000-4000-8000-000000000000')).toBeUndefined();
    expect(await archives.build(await upload({ kind: 'oci_bundle', compression: 'none' }, 'half', false))).toBeUndefined();
  });
});
