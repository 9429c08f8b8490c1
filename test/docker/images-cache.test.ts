/**
 * BuildImages against the real engine, beyond the happy path: one load for concurrent lobbies,
 * reuse of an image already in the engine (a restart), a reload when it was removed from outside,
 * OCI bundles laid out as the Rivet CLI lays them out (config.json last, under a prefix),
 * config.json's process applied exactly, and an upload's own tags never reaching the engine.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';
import tar from 'tar-stream';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { readReply } from '../../src/adapters/docker/engine-upload.js';
import { BuildImages } from '../../src/adapters/docker/images.js';
import { describeWithDocker, docker, dockerProblem, removeRepository } from './engine.js';
import { busyboxGameServer, type GameServerArchives } from './images.js';
import { lz4, tarOf, writeOciBundle } from './rootfs.js';
import { runHardened, type TestContainer } from './run.js';
import { fileSource } from './sources.js';

const problem = await dockerProblem();

/** A copy of a `docker save` archive whose manifest and `repositories` file claim the tag `claim`. */
const retag = async (from: string, to: string, claim: string): Promise<void> => {
  const [repo, tag] = claim.split(':') as [string, string];
  const extract = tar.extract();
  const pack = tar.pack();
  const writing = pipeline(pack as unknown as NodeJS.ReadableStream, createWriteStream(to));
  const reading = pipeline(createReadStream(from), extract as unknown as NodeJS.WritableStream);
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    let body = Buffer.concat(chunks);
    if (entry.header.name === 'manifest.json') {
      const manifest = JSON.parse(body.toString()) as { RepoTags: string[] }[];
      body = Buffer.from(JSON.stringify(manifest.map((m) => ({ ...m, RepoTags: [claim] }))));
    } else if (entry.header.name === 'repositories') {
      const layers = JSON.parse(body.toString()) as Record<string, Record<string, string>>;
      body = Buffer.from(JSON.stringify({ [repo]: { [tag]: Object.values(Object.values(layers)[0] ?? {})[0] ?? '' } }));
    }
    await new Promise<void>((resolve, reject) => pack.entry({ ...entry.header, size: body.length }, body, (e) => (e ? reject(e) : resolve())));
  }
  pack.finalize();
  await Promise.all([reading, writing]);
};

describeWithDocker('BuildImages caching and OCI bundles (real engine)', problem, () => {
  const repository = `tavern-test-${randomUUID().slice(0, 8)}`;
  const files = fileSource();
  const started: TestContainer[] = [];
  let busybox: GameServerArchives;
  let dir: string;

  beforeAll(async () => {
    busybox = await busyboxGameServer(docker);
    dir = await mkdtemp(join(tmpdir(), 'tavern-images-'));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(started.map((c) => c.remove()));
    await rm(dir, { recursive: true, force: true });
    await removeRepository(repository);
  });

  /** Runs `image` to its end (hardened) and returns its exit code and stdout. */
  const runToEnd = async (image: string, cmd?: readonly string[]): Promise<{ code: number; stdout: string }> => {
    const game = await runHardened(docker, image, cmd === undefined ? {} : { cmd });
    started.push(game);
    const { code } = await game.exited();
    return { code, stdout: (await game.logs()).stdout };
  };

  it('loads once for concurrent lobbies of one build (each kind), then serves the tag without loading', async () => {
    const images = new BuildImages({ docker, source: files.source, repository });
    const loads = vi.spyOn(docker, 'loadImage');
    const imports = vi.spyOn(docker, 'importImage');
    try {
      for (const build of [
        { kind: 'docker_image', compression: 'none', path: busybox.dockerImage },
        { kind: 'oci_bundle', compression: 'lz4', path: busybox.ociBundleLz4 },
      ] as const) {
        const id = files.add(build);
        const refs = await Promise.all(Array.from({ length: 5 }, () => images.ensure(id)));
        expect(new Set(refs)).toEqual(new Set([`${repository}:${id}`]));
        expect(await images.ensure(id)).toBe(`${repository}:${id}`);
        expect(files.opens(id)).toBe(1);
      }
      expect(loads).toHaveBeenCalledTimes(1);
      expect(imports).toHaveBeenCalledTimes(1);
    } finally {
      loads.mockRestore();
      imports.mockRestore();
    }
  });

  it('after a restart, uses the image already tagged in the engine; one removed from outside is loaded again', async () => {
    const id = files.add({ kind: 'oci_bundle', compression: 'none', path: busybox.ociBundle });
    const ref = await new BuildImages({ docker, source: files.source, repository }).ensure(id);
    const restarted = new BuildImages({ docker, source: files.source, repository });
    expect(await restarted.ensure(id)).toBe(ref);
    expect(files.opens(id)).toBe(1);
    await docker.getImage(ref).remove({ force: true });
    expect(await restarted.ensure(id)).toBe(ref);
    expect(files.opens(id)).toBe(2);
    expect((await docker.getImage(ref).inspect()).Config.Entrypoint).toEqual(['/bin/game-server']);
  });

  it('imports bundles with config.json after rootfs/ or under a prefix (the Rivet CLI tars its temp folder): two passes, same image', async () => {
    const images = new BuildImages({ docker, source: files.source, repository });
    const layouts = [
      { name: 'config first', layout: {}, opens: 1 },
      { name: 'config last', layout: { configLast: true }, opens: 2 },
      { name: 'prefixed', layout: { prefix: 'tmp/.tmpA1b2C3/' }, opens: 2 },
      { name: 'prefixed, config last, lz4', layout: { prefix: 'tmp/.tmpA1b2C3/', configLast: true }, opens: 2, lz4: true },
    ];
    for (const { name, layout, opens, lz4: compress } of layouts) {
      const path = join(dir, `${name.replace(/\W+/g, '-')}.tar`);
      await writeOciBundle(path, busybox.files, { ...busybox.process, args: ['/bin/sh', '-c', `echo ${name.replace(/\W+/g, '-')}`] }, layout);
      if (compress === true) await lz4(path, `${path}.lz4`);
      const id = files.add({ kind: 'oci_bundle', compression: compress === true ? 'lz4' : 'none', path: compress === true ? `${path}.lz4` : path });
      const image = await images.ensure(id);
      expect(files.opens(id), name).toBe(opens);
      expect(await runToEnd(image), name).toEqual({ code: 0, stdout: `${name.replace(/\W+/g, '-')}\n` });
    }
  }, 60_000);

  it("applies config.json's args, env, cwd and user verbatim: spaces, quotes, $, backslashes, = and unicode", async () => {
    const tricky = ['SPACES=a b  c', 'QUOTES="double" \'single\'', 'DOLLAR=$HOME ${PATH} $(id)', 'BACKSLASH=C:\\dir\\ end\\', 'EQUALS=a=b=c', 'EMPTY=', 'UNICODE=héllo ✓'];
    const script = 'env | grep -E "^(SPACES|QUOTES|DOLLAR|BACKSLASH|EQUALS|EMPTY|UNICODE)=" | sort; pwd; id -u; id -g; printf "[%s]" "$@"; echo';
    const bundle = { args: ['/bin/sh', '-c', script, 'sh', 'two words', '"quoted"', '$NOT_EXPANDED', 'back\\slash'], env: ['PATH=/bin', ...tricky], cwd: '/tmp/work dir', uid: 4321, gid: 8765 };
    const path = join(dir, 'tricky.tar');
    await writeOciBundle(path, [...busybox.files, { path: 'tmp/work dir', kind: 'dir' }], bundle);
    const image = await new BuildImages({ docker, source: files.source, repository }).ensure(files.add({ kind: 'oci_bundle', compression: 'none', path }));
    const { code, stdout } = await runToEnd(image);
    expect(code).toBe(0);
    const expected = [...tricky].sort().join('\n');
    expect(stdout).toBe(`${expected}\n/tmp/work dir\n4321\n8765\n[two words]["quoted"][$NOT_EXPANDED][back\\slash]\n`);
  }, 60_000);

  it("a version's args follow the bundle's command (it is the image's ENTRYPOINT)", async () => {
    const path = join(dir, 'args.tar');
    await writeOciBundle(path, busybox.files, { ...busybox.process, args: ['/bin/sh', '-c', 'echo "$@"', 'sh', 'from-bundle'] });
    const image = await new BuildImages({ docker, source: files.source, repository }).ensure(files.add({ kind: 'oci_bundle', compression: 'none', path }));
    expect(await runToEnd(image, ['--from-version', 'x'])).toEqual({ code: 0, stdout: 'from-bundle --from-version x\n' });
  }, 30_000);

  it('a gzipped docker save archive (docker save | gzip) loads as it is', async () => {
    const path = join(dir, 'image.tar.gz');
    await writeFile(path, gzipSync(await readFile(busybox.dockerImage)));
    const image = await new BuildImages({ docker, source: files.source, repository }).ensure(files.add({ kind: 'docker_image', compression: 'none', path }));
    expect((await docker.getImage(image).inspect()).Config.Entrypoint).toEqual(['/bin/game-server']);
  });

  it("an upload's own tags never reach the engine: an archive claiming another image's tag leaves that tag where it was", async () => {
    const victim = `${repository}-victim:v1`;
    const original = await readReply(await docker.importImage(tarOf([{ path: 'victim', kind: 'text', text: randomUUID() }]) as unknown as NodeJS.ReadableStream, { repo: `${repository}-victim`, tag: 'v1' }));
    expect(original.error).toBeUndefined();
    const before = (await docker.getImage(victim).inspect()).Id;
    const path = join(dir, 'claims-victim.tar');
    await retag(busybox.dockerImage, path, victim);
    const ref = await new BuildImages({ docker, source: files.source, repository }).ensure(files.add({ kind: 'docker_image', compression: 'none', path }));
    expect((await docker.getImage(victim).inspect()).Id).toBe(before);
    expect((await docker.getImage(ref).inspect()).RepoTags).not.toContain(victim);
    await docker.getImage(victim).remove({ force: true });
  });
});
