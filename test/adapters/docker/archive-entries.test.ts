/**
 * Links, special files and odd names in the tar entries of both archive kinds, as Tavern reads
 * and re-packs them (no engine needed: a scripted engine records what it is sent). The `docker
 * save` archive itself (which the engine unpacks on the host) may hold only files, directories
 * and links that lead to one of its files; an OCI bundle's hard links stay inside rootfs/; entry
 * names never climb out; Tavern reads manifest.json and config.json from the archive's bytes only,
 * never through a link. What an image may hold inside (symlinks, devices, FIFOs) goes to the
 * engine as it is: images-entries.test.ts shows it harmless.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildImageError, BuildImages } from '../../../src/adapters/docker/images.js';
import type { BuildArchive } from '../../../src/io/build-archives.js';
import { addFile, ociConfig, tarOf, type RootfsFile } from '../../docker/rootfs.js';
import { bytesOf, savedImage } from '../../docker/saved.js';
import { scripted } from './scripted-engine.js';

/** An entry as the engine received it. */
interface Received {
  readonly name: string;
  readonly type: string | null | undefined;
  readonly linkname: string | null | undefined;
}

/** An engine that reads each upload as a tar and answers as a successful load (of `id`) and import do. */
const recording = (id = `sha256:${'cd'.repeat(32)}`) => {
  const received: Received[][] = [];
  const engine = scripted(async (body) => {
    const entries: Received[] = [];
    received.push(entries);
    const extract = tar.extract();
    body.pipe(extract);
    try {
      for await (const entry of extract) {
        entries.push({ name: entry.header.name, type: entry.header.type, linkname: entry.header.linkname });
        entry.resume();
      }
    } catch {
      entries.push({ name: '(cut short)', type: undefined, linkname: undefined });
    }
    return `{"status":"${id}"}\n{"stream":"Loaded image ID: ${id}\\n"}\n`;
  });
  return { docker: engine.docker, seen: engine.seen, received };
};

/** Loads `bytes` as a build of `kind`: the image reference, or the BuildImageError. */
const load = async (engine: ReturnType<typeof recording>, kind: BuildArchive['kind'], bytes: Buffer): Promise<string | BuildImageError> => {
  const source = { build: () => Promise.resolve({ kind, compression: 'none' as const, open: () => Promise.resolve(Readable.from([bytes])) }) };
  return new BuildImages({ docker: engine.docker, source }).ensure('b').catch((e: unknown) => {
    if (e instanceof BuildImageError) return e;
    throw e;
  });
};

const refused = async (kind: BuildArchive['kind'], bytes: Buffer, reason: string | RegExp): Promise<ReturnType<typeof recording>> => {
  const engine = recording();
  const e = await load(engine, kind, bytes);
  expect(e).toBeInstanceOf(BuildImageError);
  expect(e).toMatchObject({ failure: 'invalid' });
  expect((e as BuildImageError).message).toMatch(reason);
  expect(engine.seen.every((s) => s.aborted)).toBe(true);
  return engine;
};

const LAYER: RootfsFile[] = [{ path: 'bin', kind: 'dir' }, { path: 'bin/game', kind: 'text', text: 'echo hi', mode: 0o755 }];
const saved = async (extra: readonly RootfsFile[], layers: readonly (readonly RootfsFile[])[] = [LAYER]): Promise<{ archive: Buffer; id: string }> =>
  savedImage({ layers, entrypoint: ['/bin/game'], extra });

const DOCKER = "^the build's archive \\(docker_image, compression none\\) cannot be used: ";

describe('a docker save archive: what the engine unpacks on the host', () => {
  it('passes on a symlink to an earlier layer, as docker save writes a repeated layer', async () => {
    const { archive, id } = await saved([], [LAYER, LAYER]);
    const engine = recording(id);
    expect(await load(engine, 'docker_image', archive)).toBe('tavern-build:b');
    expect(engine.received[0]).toContainEqual({ name: 'layer1/layer.tar', type: 'symlink', linkname: '../layer0/layer.tar' });
  });

  it.each([
    ['an absolute path', 'layer0/evil', '/etc/passwd'],
    ['a path that climbs out', 'layer0/evil', '../../etc/passwd'],
    ['a path that climbs out through a directory of the archive', 'evil', 'layer0/../../etc/shadow'],
  ])('refuses a symlink to %s', async (_what, path, target) => {
    const { archive } = await saved([{ path, kind: 'symlink', target }]);
    await refused('docker_image', archive, new RegExp(`${DOCKER}the archive has a symlink that leads out of it: '${path}' -> '${target.replace(/\./g, '\\.')}'$`));
  });

  it('refuses a symlink to a directory (a chain of links climbing out), or to nothing the archive holds', async () => {
    const { archive } = await saved([{ path: 'layer0/up', kind: 'symlink', target: '..' }, { path: 'layer0/up2', kind: 'symlink', target: 'up/..' }]);
    await refused('docker_image', archive, /the archive has a symlink to something that is not one of its files: 'layer0\/up' -> '\.\.'$/);
    const dangling = await saved([{ path: 'layer0/gone', kind: 'symlink', target: 'nowhere.tar' }]);
    await refused('docker_image', dangling.archive, /the archive has a symlink to something that is not one of its files: 'layer0\/gone' -> 'nowhere\.tar'$/);
  });

  it.each([
    ['../../etc/passwd', '../../etc/passwd'],
    ['/etc/passwd', '/etc/passwd'],
    ['a file that comes after it', 'later.json'],
  ])('refuses a hard link to %s', async (_what, target) => {
    const { archive } = await saved([{ path: 'copy', kind: 'link', target }, { path: 'later.json', kind: 'text', text: '{}' }]);
    await refused('docker_image', archive, `the archive has a hard link to something that is not one of its files (before it): 'copy' -> '${target}'`);
  });

  it('passes on a hard link to one of its files before it', async () => {
    const { archive, id } = await saved([{ path: 'copy.json', kind: 'link', target: 'manifest.json' }]);
    const engine = recording(id);
    expect(await load(engine, 'docker_image', archive)).toBe('tavern-build:b');
    expect(engine.received[0]).toContainEqual({ name: 'copy.json', type: 'link', linkname: 'manifest.json' });
  });

  it.each([
    ['a character device', { path: 'mem', kind: 'character-device', major: 1, minor: 1 }],
    ['a block device', { path: 'layer0/disk', kind: 'block-device', major: 8, minor: 0 }],
    ['a FIFO (named pipe)', { path: 'layer0/layer.tar', kind: 'fifo' }],
  ] as const)('refuses %s', async (what, file) => {
    const { archive } = await saved([file]);
    await refused('docker_image', archive, `the archive holds ${what} ('${file.path}'): a docker save archive holds only files, directories and links between them`);
  });

  describe('Tavern reads manifest.json from the archive only', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'tavern-entries-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('a manifest.json that is a link (to a host file holding a manifest, or to another entry) is refused', async () => {
      const host = join(dir, 'manifest.json');
      const { archive } = await saved([]);
      await writeFile(host, JSON.stringify([{ Config: `${'ef'.repeat(32)}.json`, RepoTags: ['host:tag'], Layers: [] }]));
      const only = await bytesOf(tarOf([{ path: 'manifest.json', kind: 'symlink', target: host }]));
      await refused('docker_image', only, `the archive has a symlink that leads out of it: 'manifest.json' -> '${host}'`);
      const inside = await bytesOf(tarOf([{ path: 'real.json', kind: 'text', text: '[]' }, { path: 'manifest.json', kind: 'symlink', target: 'real.json' }]));
      await refused('docker_image', inside, /manifest\.json must be a file, not a symlink entry$/);
      const hard = await bytesOf(tarOf([{ path: 'real.json', kind: 'text', text: '[]' }, { path: 'manifest.json', kind: 'link', target: 'real.json' }]));
      await refused('docker_image', hard, /manifest\.json must be a file, not a link entry$/);
      expect(archive.length).toBeGreaterThan(0);
    });
  });

  it('refuses a manifest.json that names a layer outside the archive', async () => {
    const manifest = JSON.stringify([{ Config: `${'ab'.repeat(32)}.json`, Layers: ['../../../var/lib/docker/secret.tar'] }]);
    const bytes = await bytesOf(tarOf([{ path: 'manifest.json', kind: 'text', text: manifest }]));
    await refused('docker_image', bytes, 'manifest.json names a layer outside the archive: "../../../var/lib/docker/secret.tar"');
  });

  it('refuses an entry whose name climbs out; sends an absolute name as a relative one', async () => {
    await refused('docker_image', (await saved([{ path: 'layer0/../../escape', kind: 'text', text: 'x' }])).archive, "the archive has an entry outside itself: 'layer0/../../escape'");
    const { archive, id } = await saved([{ path: '/etc/cron.d/evil', kind: 'text', text: 'x' }]);
    const engine = recording(id);
    expect(await load(engine, 'docker_image', archive)).toBe('tavern-build:b');
    const names = engine.received[0]?.map((e) => e.name) ?? [];
    expect(names).toContain('etc/cron.d/evil');
    expect(names.filter((n) => n.startsWith('/') || n.split('/').includes('..'))).toEqual([]);
  });
});

describe('an OCI bundle: what Tavern re-packs from rootfs/', () => {
  const PROCESS = { args: ['/bin/game'], env: [], cwd: '/', uid: 0, gid: 0 };
  /** config.json, `outside`, then rootfs/ with the game and `rootfs` (under rootfs/; an absolute path as it is). */
  const bundle = async (rootfs: readonly RootfsFile[], outside: readonly RootfsFile[] = []): Promise<Buffer> => {
    const pack = tar.pack();
    const bytes = bytesOf(pack);
    const files: RootfsFile[] = [
      { path: 'config.json', kind: 'text', text: ociConfig(PROCESS) }, ...outside,
      { path: 'rootfs', kind: 'dir' }, ...LAYER.map((f) => ({ ...f, path: `rootfs/${f.path}` })), ...rootfs.map((f) => ({ ...f, path: f.path.startsWith('/') ? f.path : `rootfs/${f.path}` })),
    ];
    for (const file of files) await addFile(pack, file, file.path);
    pack.finalize();
    return bytes;
  };

  it.each([
    ['../../etc/passwd', '../../etc/passwd'],
    ['/etc/passwd', '/etc/passwd'],
    ['a file of the bundle outside rootfs/', 'config.json'],
    ['a path that climbs out of rootfs/', 'rootfs/../config.json'],
  ])('refuses a hard link to %s', async (_what, target) => {
    await refused('oci_bundle', await bundle([{ path: 'bin/copy', kind: 'link', target }]), "rootfs has a hard link to outside itself: 'rootfs/bin/copy'");
  });

  it('passes on a hard link inside rootfs/, re-rooted like its target; entries outside rootfs/ never reach the engine', async () => {
    const outside: RootfsFile[] = [{ path: 'disk', kind: 'block-device', major: 8, minor: 0 }, { path: 'out', kind: 'symlink', target: '/' }, { path: 'fifo', kind: 'fifo' }];
    const engine = recording();
    expect(await load(engine, 'oci_bundle', await bundle([{ path: 'bin/copy', kind: 'link', target: 'rootfs/bin/game' }], outside))).toBe('tavern-build:b');
    expect(engine.received[0]).toContainEqual({ name: 'bin/copy', type: 'link', linkname: 'bin/game' });
    expect(engine.received[0]?.map((e) => e.name)).toEqual(['bin', 'bin/game', 'bin/copy']);
  });

  it('never reads config.json through a link: one that links to a host file holding a config is no config.json', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tavern-entries-'));
    const host = join(dir, 'config.json');
    await writeFile(host, ociConfig(PROCESS));
    const bytes = await bytesOf(tarOf([{ path: 'config.json', kind: 'symlink', target: host }, { path: 'rootfs', kind: 'dir' }, ...LAYER.map((f) => ({ ...f, path: `rootfs/${f.path}` }))]));
    await refused('oci_bundle', bytes, /the OCI bundle has no config\.json/);
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses an entry whose name climbs out; sends absolute names inside rootfs/ as relative ones', async () => {
    await refused('oci_bundle', await bundle([{ path: 'rootfs/../../escape', kind: 'text', text: 'x' }]), "the archive has an entry outside itself: 'rootfs/rootfs/../../escape'");
    const engine = recording();
    expect(await load(engine, 'oci_bundle', await bundle([{ path: '/rootfs/etc/evil', kind: 'text', text: 'x' }]))).toBe('tavern-build:b');
    expect(engine.received[0]?.map((e) => e.name)).toEqual(['bin', 'bin/game', 'etc/evil']);
  });

  it('passes on symlinks, device nodes and FIFOs inside rootfs/ as they are (the image holds them; images-entries.test.ts shows them harmless)', async () => {
    const engine = recording();
    const inside: RootfsFile[] = [
      { path: 'escape', kind: 'symlink', target: '../../../../etc/shadow' }, { path: 'disk', kind: 'block-device', major: 8, minor: 0 },
      { path: 'mem', kind: 'character-device', major: 1, minor: 1 }, { path: 'pipe', kind: 'fifo' },
    ];
    expect(await load(engine, 'oci_bundle', await bundle(inside))).toBe('tavern-build:b');
    expect(engine.received[0]?.slice(2).map((e) => [e.name, e.type])).toEqual([['escape', 'symlink'], ['disk', 'block-device'], ['mem', 'character-device'], ['pipe', 'fifo']]);
  });
});
