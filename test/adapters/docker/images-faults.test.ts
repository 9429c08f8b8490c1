/**
 * BuildImages when the engine or the archive's store fails (no engine needed: a scripted engine
 * answers like the real one, or an engine that is not there): a refusal such as a full disk marks
 * the build broken with the engine's reason; an engine that stops reading early never hangs the
 * load; a lost connection or an unreachable engine is not a broken build (the next call tries
 * again); and a read error of the archive aborts the upload, so the engine never takes a partial
 * archive for a whole one.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildImageError, BuildImages } from '../../../src/adapters/docker/images.js';
import { writeOciBundle, type RootfsFile } from '../../docker/rootfs.js';
import { fileSource } from '../../docker/sources.js';
import { readAll, scripted } from './scripted-engine.js';

const FILES: RootfsFile[] = [{ path: 'bin', kind: 'dir' }, { path: 'bin/game', kind: 'text', text: 'x'.repeat(3_000_000), mode: 0o755 }];
const PROCESS = { args: ['/bin/game'], env: [], cwd: '/', uid: 1000, gid: 1000 };

describe('BuildImages when the engine or the store fails', () => {
  let dir: string;
  let bundle: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tavern-faults-'));
    bundle = join(dir, 'bundle.tar');
    await writeOciBundle(bundle, FILES, PROCESS);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const failure = async (images: BuildImages, id: string): Promise<BuildImageError> => {
    const e = await images.ensure(id).then(() => undefined, (error: unknown) => error);
    expect(e).toBeInstanceOf(BuildImageError);
    return e as BuildImageError;
  };

  it("a full disk is the engine's refusal: the build is marked broken with that reason", async () => {
    const engine = scripted(async (body, seen) => {
      await readAll(body, seen);
      return '{"errorDetail":{"message":"write /var/lib/docker/tmp/docker-import-1/rootfs/bin/game: no space left on device"},"error":"write …: no space left on device"}\n';
    });
    const files = fileSource();
    const id = files.add({ kind: 'oci_bundle', compression: 'none', path: bundle });
    const images = new BuildImages({ docker: engine.docker, source: files.source });
    const e = await failure(images, id);
    expect(e).toMatchObject({ failure: 'engine', lasting: true });
    expect(e.message).toMatch(/^the Docker Engine ran out of disk space while loading the build's image \(write .*no space left on device\)$/);
    expect(engine.seen[0]?.bytes).toBeGreaterThan(3_000_000);
    await expect(images.ensure(id)).rejects.toBe(e);
    expect(engine.seen).toHaveLength(1);
  });

  it('an engine that answers before reading the whole archive does not hang the load', async () => {
    const engine = scripted(async (body) => {
      for await (const _ of body) break; // one chunk, then the answer
      return '{"errorDetail":{"message":"unexpected EOF"},"error":"unexpected EOF"}\n';
    });
    const files = fileSource();
    const id = files.add({ kind: 'oci_bundle', compression: 'none', path: bundle });
    const e = await failure(new BuildImages({ docker: engine.docker, source: files.source }), id);
    expect(e).toMatchObject({ failure: 'engine', message: "the Docker Engine could not load the build's image (oci_bundle, compression none): unexpected EOF" });
  });

  it('a connection lost mid-upload, or an engine that is not there, is no broken build: the next call tries again', async () => {
    const engine = scripted(async (body) => {
      for await (const _ of body) break;
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    });
    const files = fileSource();
    const id = files.add({ kind: 'oci_bundle', compression: 'none', path: bundle });
    const images = new BuildImages({ docker: engine.docker, source: files.source });
    expect(await failure(images, id)).toMatchObject({ failure: 'unavailable', lasting: false });
    expect(await failure(images, id)).toMatchObject({ failure: 'unavailable' });
    expect(files.opens(id)).toBe(2);

    const nowhere = new BuildImages({ docker: new Dockerode({ socketPath: join(dir, 'no-engine.sock') }), source: files.source });
    const e = await failure(nowhere, id);
    expect(e).toMatchObject({ failure: 'unavailable', lasting: false });
    expect(e.message).toMatch(/Docker Engine is unreachable or failing: .*no-engine.sock/);
    expect(nowhere.broken().size).toBe(0);
  });

  it("a store that cannot look the build up is no broken build either", async () => {
    const images = new BuildImages({ docker: scripted(() => Promise.resolve('')).docker, source: { build: () => Promise.reject(new Error('database is down')) } });
    expect(await failure(images, 'b1')).toMatchObject({ failure: 'unavailable', message: 'the build could not be looked up: database is down' });
  });

  it("a read error of the archive aborts the upload: the engine never gets a partial archive as a whole one", async () => {
    const engine = scripted(async (body, seen) => {
      await readAll(body, seen).catch(() => undefined);
      return '{"status":"sha256:' + 'cd'.repeat(32) + '"}\n';
    });
    async function* failing(): AsyncGenerator<Uint8Array> {
      let sent = 0;
      for await (const chunk of createReadStream(bundle)) {
        yield chunk as Buffer;
        sent += (chunk as Buffer).length;
        if (sent > 1_000_000) throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
      }
    }
    const images = new BuildImages({
      docker: engine.docker,
      source: { build: () => Promise.resolve({ kind: 'oci_bundle', compression: 'none', open: () => Promise.resolve(failing()) }) },
    });
    expect(await failure(images, 'b2')).toMatchObject({ failure: 'unavailable', message: expect.stringMatching(/EIO/) as unknown });
    expect(engine.seen[0]?.aborted).toBe(true);
  });
});
