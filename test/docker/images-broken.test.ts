/**
 * Broken build archives against the real engine: each fails with a BuildImageError whose message
 * says what is wrong, the build stays marked broken (later calls fail at once, without reading the
 * archive again) until forget(), and nothing is left tagged in the engine.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { pipeline } from 'node:stream/promises';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readReply } from '../../src/adapters/docker/engine-upload.js';
import { BuildImageError, BuildImages } from '../../src/adapters/docker/images.js';
import { describeWithDocker, docker, dockerProblem, removeRepository } from './engine.js';
import { writeBomb } from './bomb.js';
import { busyboxGameServer, type GameServerArchives } from './images.js';
import { tarOf, writeOciBundle } from './rootfs.js';
import { fileSource, type FileBuild } from './sources.js';

const problem = await dockerProblem();

describeWithDocker('broken build archives (real engine)', problem, () => {
  const repository = `tavern-test-${randomUUID().slice(0, 8)}`;
  const files = fileSource();
  const logged: string[] = [];
  const images = new BuildImages({ docker, source: files.source, repository, log: (id, line) => logged.push(`${id} ${line}`) });
  /** Loads builds of at most 16 MiB once decompressed. */
  const bounded = new BuildImages({ docker, source: files.source, repository, log: (id, line) => logged.push(`${id} ${line}`), maxExpandedBytes: 16 * 2 ** 20 });
  let busybox: GameServerArchives;
  let dir: string;

  beforeAll(async () => {
    busybox = await busyboxGameServer(docker);
    dir = await mkdtemp(join(tmpdir(), 'tavern-broken-'));
  }, 120_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await removeRepository(repository);
  });

  /** A file in the temp folder holding `bytes`. */
  const file = async (name: string, bytes: Uint8Array): Promise<string> => {
    const path = join(dir, name);
    await writeFile(path, bytes);
    return path;
  };

  /** Loads `build` with `using`, expects a lasting BuildImageError matching `reason`, then checks the build stays broken. */
  const broken = async (build: FileBuild, reason: RegExp, using = images): Promise<BuildImageError> => {
    const id = files.add(build);
    const error = await using.ensure(id).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(BuildImageError);
    const e = error as BuildImageError;
    expect(e.message).toMatch(reason);
    expect(e.lasting).toBe(true);
    expect(e.buildId).toBe(id);
    const opened = files.opens(id);
    await expect(using.ensure(id)).rejects.toBe(e);
    expect(files.opens(id)).toBe(opened);
    await expect(docker.getImage(images.reference(id)).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect(logged.some((l) => l.startsWith(id) && l.includes('marked broken') && l.includes(e.message))).toBe(true);
    return e;
  };

  it('a truncated docker save archive', async () => {
    const whole = await readFile(busybox.dockerImage);
    const path = await file('half.tar', whole.subarray(0, Math.floor(whole.length / 2)));
    const e = await broken({ kind: 'docker_image', compression: 'none', path }, /truncated/);
    expect(e.failure).toBe('invalid');
  });

  it('an OCI bundle cut exactly at an entry boundary (no end-of-archive marker)', async () => {
    const whole = await readFile(busybox.ociBundle);
    const path = await file('cut.tar', whole.subarray(0, whole.length - 1024));
    await broken({ kind: 'oci_bundle', compression: 'none', path }, /truncated: it ends without tar's end-of-archive marker/);
  });

  it('a truncated or corrupted LZ4 archive', async () => {
    const whole = await readFile(busybox.ociBundleLz4);
    await broken({ kind: 'oci_bundle', compression: 'lz4', path: await file('short.tar.lz4', whole.subarray(0, whole.length - 100)) }, /LZ4 compression is broken: the LZ4 data is truncated/);
    const corrupt = Buffer.from(whole);
    corrupt[Math.floor(corrupt.length / 2)] = (corrupt[Math.floor(corrupt.length / 2)] as number) ^ 0x5a;
    await broken({ kind: 'oci_bundle', compression: 'lz4', path: await file('corrupt.tar.lz4', corrupt) }, /LZ4 compression is broken: (corrupt|.*checksum)/);
  });

  it('an LZ4 bomb (4 MB that expands to 1 GiB) stops at the bound, naming it and its setting', async () => {
    const path = join(dir, 'bomb.tar.lz4');
    await writeBomb(path, { kind: 'oci_bundle', compression: 'lz4', zeroBytes: 2 ** 30 });
    const e = await broken({ kind: 'oci_bundle', compression: 'lz4', path }, /^the build's archive \(oci_bundle, compression lz4\) cannot be used: the archive is more than 16777216 bytes \(16.8 MB\) once decompressed, the most this server takes \(TAVERN_BUILD_MAX_EXPANDED_BYTES\)/, bounded);
    expect(e.failure).toBe('invalid');
  });

  it('the wrong kind, both ways', async () => {
    await broken({ kind: 'docker_image', compression: 'none', path: busybox.ociBundle }, /is an OCI bundle .*upload it with kind oci_bundle/);
    await broken({ kind: 'oci_bundle', compression: 'none', path: busybox.dockerImage }, /is a `docker save` archive .*upload it with kind docker_image/);
  });

  it('the wrong compression, both ways', async () => {
    await broken({ kind: 'oci_bundle', compression: 'none', path: busybox.ociBundleLz4 }, /is LZ4-compressed, but the build says compression none/);
    await broken({ kind: 'oci_bundle', compression: 'lz4', path: busybox.ociBundle }, /is not LZ4-compressed, but the build says compression lz4/);
  });

  it('an OCI bundle without config.json, without rootfs/, or with a config.json that says nothing runnable', async () => {
    const noConfig = join(dir, 'no-config.tar');
    await writeOciBundle(noConfig, busybox.files, busybox.process, { config: undefined });
    await broken({ kind: 'oci_bundle', compression: 'none', path: noConfig }, /has no config.json/);
    const badConfig = join(dir, 'bad-config.tar');
    await writeOciBundle(badConfig, busybox.files, busybox.process, { config: JSON.stringify({ process: { args: [], cwd: '/' } }) });
    await broken({ kind: 'oci_bundle', compression: 'none', path: badConfig }, /config.json: process.args must be a non-empty list/);
    const noRootfs = join(dir, 'no-rootfs.tar');
    await writeOciBundle(noRootfs, [], busybox.process, { config: JSON.stringify({ process: { args: ['/x'] }, root: { path: 'elsewhere' } }) });
    await broken({ kind: 'oci_bundle', compression: 'none', path: noRootfs }, /has no elsewhere\/ directory next to its config.json/);
  });

  it('garbage bytes, as every kind and compression', async () => {
    const path = await file('garbage.bin', randomBytes(300_000));
    await broken({ kind: 'docker_image', compression: 'none', path }, /not a valid tar file/);
    await broken({ kind: 'oci_bundle', compression: 'none', path }, /not a valid tar file/);
    await broken({ kind: 'oci_bundle', compression: 'lz4', path }, /not LZ4-compressed/);
    await broken({ kind: 'docker_image', compression: 'none', path: await file('empty.tar', new Uint8Array(0)) }, /archive is empty/);
  });

  it('a gzipped archive that is cut short, and compressions Tavern does not read', async () => {
    const gzipped = gzipSync(await readFile(busybox.dockerImage));
    await broken({ kind: 'docker_image', compression: 'none', path: await file('cut.tar.gz', gzipped.subarray(0, gzipped.length - 50)) }, /gzip compression is broken: unexpected end of file/);
    const xz = Buffer.concat([Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), randomBytes(100)]);
    await broken({ kind: 'docker_image', compression: 'none', path: await file('image.tar.xz', xz) }, /compressed with xz, which Tavern does not read/);
  });

  it('a layer the engine cannot read (a docker save archive with a corrupt layer) is the engine saying so', async () => {
    // An image of its own (a layer no other test has loaded: the engine skips layers it already has).
    const ref = `${repository}-source:corrupt`;
    const reply = await readReply(await docker.importImage(tarOf([{ path: 'unique', kind: 'text', text: randomUUID().repeat(300) }]) as unknown as NodeJS.ReadableStream, { repo: `${repository}-source`, tag: 'corrupt' }));
    expect(reply.error).toBeUndefined();
    const saved = join(dir, 'unique.tar');
    await pipeline(await docker.getImage(ref).get(), createWriteStream(saved));
    await docker.getImage(ref).remove({ force: true });
    const bad = await readFile(saved);
    const layer = bad.toString('latin1').indexOf('layer.tar');
    bad.fill(0x41, layer + 512 * 3, layer + 512 * 6); // inside the layer's own tar, past its first header
    const e = await broken({ kind: 'docker_image', compression: 'none', path: await file('bad-layer.tar', bad) }, /Docker Engine could not load the build's image/);
    expect(e.failure).toBe('engine');
  });

  it('a missing build, and forget() letting a broken build load once it is fixed', async () => {
    const missing = randomUUID();
    await expect(images.ensure(missing)).rejects.toMatchObject({ failure: 'missing', message: 'the build does not exist or its upload was never completed' });
    const id = files.add({ kind: 'oci_bundle', compression: 'none', path: await file('not-yet.tar', randomBytes(2048)) });
    await expect(images.ensure(id)).rejects.toMatchObject({ failure: 'invalid' });
    files.set(id, { kind: 'oci_bundle', compression: 'none', path: busybox.ociBundle });
    await expect(images.ensure(id)).rejects.toMatchObject({ failure: 'invalid' });
    images.forget(id);
    expect(await images.ensure(id)).toBe(images.reference(id));
  });
});
