/**
 * What an image may hold is harmless to the host (real engine): symlinks, device nodes and FIFOs
 * inside a build, in both kinds (an OCI bundle's rootfs/, a `docker save` archive's layer), end up
 * inside the image only, and a lobby run as Tavern runs it (containerSpec: no capabilities, the
 * engine's devices cgroup), as root even, cannot use them to read the host, write to it, or reach
 * a host device. A layer's hard link out of the image is the engine's to resolve inside the image
 * (an OCI bundle's, Tavern refuses: archive-entries.test.ts). Each test would
 * fail if the entry became harmful: a host file read or written, a device opened, a load hung.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { containerSpec } from '../../src/adapters/docker/container-spec.js';
import { DEFAULT_HARDENING } from '../../src/adapters/docker/lobby-spec.js';
import { BuildImageError, BuildImages } from '../../src/adapters/docker/images.js';
import type { StartLobby } from '../../src/core/effects.js';
import { describeWithDocker, docker, dockerProblem, removeRepository } from './engine.js';
import { writeOciBundle, type RootfsFile } from './rootfs.js';
import { demux } from './run.js';
import { savedImage } from './saved.js';
import { fileSource, type FileBuild } from './sources.js';
import { DEFAULT_LOBBY_NETWORK, ensureLobbyNetwork } from '../../src/adapters/docker/lobby-network.js';

const problem = await dockerProblem();
const INSTANCE = `entries-${randomUUID().slice(0, 8)}`;
const SH = ['/bin/busybox', 'sh', '-c'];
const BUSYBOX: RootfsFile[] = [{ path: 'bin', kind: 'dir' }, { path: 'bin/busybox', kind: 'file', from: '/bin/busybox' }, { path: 'tmp', kind: 'dir', mode: 0o1777 }];

/** The host's first disk (`major:minor`), the device a lobby must never reach. */
const hostDisk = (): [number, number] => {
  const disk = readdirSync('/sys/block').find((d) => !/^(loop|ram|zram|nbd|sr)/.test(d));
  const dev = disk === undefined ? '8:0' : readFileSync(`/sys/block/${disk}/dev`, 'utf8').trim();
  const [major, minor] = dev.split(':').map(Number);
  return [major ?? 8, minor ?? 0];
};

describeWithDocker('what a build holds stays inside its image (real engine)', problem, () => {
  const repository = `tavern-test-${randomUUID().slice(0, 8)}`;
  const files = fileSource();
  const images = new BuildImages({ docker, source: files.source, repository });
  let dir: string;
  let host: string;
  const secret = `host-secret-${randomUUID()}`;

  beforeAll(async () => {
    // Outside /tmp (where a clone may live): a lobby has a /tmp of its own, which would hide an escape
    // into the host's, and the image's own tmp directory would clash with the host path's parents.
    dir = await mkdtemp(join('/var/tmp', 'tavern-entries-'));
    host = join(dir, 'host');
    await mkdir(host);
    await writeFile(join(host, 'secret'), secret);
  });

  afterAll(async () => {
    const left = await docker.listContainers({ all: true, filters: { label: [`tavern.instance=${INSTANCE}`] } });
    for (const c of left) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
    await removeRepository(repository);
    await rm(dir, { recursive: true, force: true });
  });

  /** The build of busybox and `extra` in one kind: its archive written, its build id. */
  const build = async (kind: FileBuild['kind'], extra: readonly RootfsFile[]): Promise<string> => {
    const path = join(dir, `${randomUUID()}.tar`);
    if (kind === 'oci_bundle') await writeOciBundle(path, [...BUSYBOX, ...extra], { args: SH, env: ['PATH=/bin'], cwd: '/', uid: 0, gid: 0 });
    else await writeFile(path, (await savedImage({ layers: [[...BUSYBOX, ...extra]], entrypoint: SH })).archive);
    return files.add({ kind, compression: 'none', path });
  };

  /** Runs `script` in a lobby container of `image`, as Tavern creates one; its exit code and output. */
  const lobby = async (image: string, script: string): Promise<{ code: number; stdout: string; stderr: string }> => {
    const start: StartLobby = {
      type: 'start-lobby', lobbyId: randomUUID(), namespaceId: 'ns', versionId: 'v', gameMode: 'default', region: 'local', tier: 'basic-1d16',
      args: [script], env: {}, networkMode: 'bridge', ports: [],
    };
    const network = (await ensureLobbyNetwork(docker, DEFAULT_LOBBY_NETWORK)).id;
    const container = await docker.createContainer(containerSpec(start, { image, instanceId: INSTANCE, publishHost: '127.0.0.1', network, hardening: DEFAULT_HARDENING }));
    try {
      await container.start();
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      return { code: StatusCode, ...demux(await container.logs({ stdout: true, stderr: true, follow: false })) };
    } finally {
      await container.remove({ force: true });
    }
  };

  for (const kind of ['oci_bundle', 'docker_image'] as const) {
    it(`${kind}: symlinks to host paths (absolute, climbing) stay links inside the image; a lobby reading them gets nothing of the host`, async () => {
      const image = await images.ensure(await build(kind, [
        { path: 'escape-abs', kind: 'symlink', target: join(host, 'secret') },
        { path: 'escape-up', kind: 'symlink', target: `${'../'.repeat(12)}${join(host, 'secret').slice(1)}` },
      ]));
      const run = await lobby(image, 'for f in /escape-abs /escape-up; do busybox readlink "$f"; busybox cat "$f"; echo "rc=$?"; done');
      expect(run.stdout).not.toContain(secret);
      expect(run.stdout).toContain(join(host, 'secret')); // the links are in the image, as uploaded
      expect(run.stdout.match(/rc=1/g)).toHaveLength(2);
      expect(run.stderr.match(/No such file or directory/g)).toHaveLength(2);
    }, 60_000);

    it(`${kind}: a file written through a symlink to a host directory never reaches the host: it fails the load, or lands in the image`, async () => {
      const through: RootfsFile[] = [{ path: 'planted-dir', kind: 'symlink', target: host }, { path: 'planted-dir/planted', kind: 'text', text: 'written by a build' }];
      // The engine unpacks a layer inside the layer's own root: the link leads to a directory the image lacks.
      const e = await images.ensure(await build(kind, through)).then(() => undefined, (error: unknown) => error);
      expect(e).toMatchObject({ failure: 'engine', message: expect.stringMatching(/open \/planted-dir\/planted: no such file or directory/) as unknown });
      expect(readdirSync(host)).toEqual(['secret']);
      // With that directory in the image, the file is written there, inside the image.
      const parents = host.split('/').slice(1).map((_, i, parts): RootfsFile => ({ path: parts.slice(0, i + 1).join('/'), kind: 'dir' }));
      const image = await images.ensure(await build(kind, [...parents, ...through]));
      expect(readdirSync(host)).toEqual(['secret']);
      expect(await lobby(image, `busybox ls ${host}; busybox cat ${join(host, 'planted')}`)).toEqual({ code: 0, stdout: 'planted\nwritten by a build', stderr: '' });
    }, 60_000);

    it(`${kind}: device nodes of the host's disks and memory are in the image, but a lobby (root, even) cannot open them, nor make one`, async () => {
      const [major, minor] = hostDisk();
      const image = await images.ensure(await build(kind, [
        { path: 'dev-disk', kind: 'block-device', major, minor, mode: 0o666 },
        { path: 'dev-loop', kind: 'block-device', major: 7, minor: 0, mode: 0o666 },
        { path: 'dev-mem', kind: 'character-device', major: 1, minor: 1, mode: 0o666 },
        { path: 'dev-zero', kind: 'character-device', major: 1, minor: 5, mode: 0o666 },
      ]));
      const run = await lobby(image, [
        'busybox id -u', 'busybox ls -l /dev-disk /dev-mem',
        ...['disk', 'loop', 'mem'].map((d) => `busybox head -c 16 /dev-${d} >/dev/null; echo "${d} rc=$?"`),
        `busybox mknod /tmp/disk b ${major} ${minor}; echo "mknod rc=$?"`,
        // What the engine lets every container use (/dev/zero, /dev/null…) works from the image too: nothing more.
        'busybox head -c 16 /dev-zero | busybox wc -c',
      ].join('; '));
      expect(run.stdout).toMatch(/^0\n/);
      expect(run.stdout).toMatch(new RegExp(`^b.* ${major}, +${minor} .*/dev-disk$`, 'm'));
      expect(run.stdout).toMatch(/^c.* 1, +1 .*\/dev-mem$/m);
      expect(run.stdout).toContain('disk rc=1\nloop rc=1\nmem rc=1\nmknod rc=1\n16\n');
      expect(run.stderr.match(/Operation not permitted/g)).toHaveLength(4);
    }, 60_000);

    it(`${kind}: a FIFO loads without hanging anything and is a pipe of the lobby's own, joined to nothing else`, async () => {
      const image = await images.ensure(await build(kind, [{ path: 'pipe', kind: 'fifo', mode: 0o666 }]));
      const run = await lobby(image, 'busybox test -p /pipe && echo "a fifo"; (echo "through the pipe" > /pipe &); busybox cat /pipe');
      expect(run).toMatchObject({ code: 0, stdout: 'a fifo\nthrough the pipe\n' });
    }, 60_000);
  }

  it('docker_image: the archive itself may link a repeated layer to the first, as docker save writes it: it loads and runs', async () => {
    const path = join(dir, 'repeated.tar');
    const { archive, id } = await savedImage({ layers: [BUSYBOX, [{ path: 'game', kind: 'text', text: 'a layer' }], BUSYBOX], entrypoint: SH });
    expect(archive.includes(Buffer.from('../layer0/layer.tar'))).toBe(true);
    await writeFile(path, archive);
    const image = await images.ensure(files.add({ kind: 'docker_image', compression: 'none', path }));
    expect((await docker.getImage(image).inspect()).Id).toBe(id);
    expect(await lobby(image, 'busybox cat /game')).toEqual({ code: 0, stdout: 'a layer', stderr: '' });
  }, 60_000);

  it("docker_image: a layer's hard link to ../../etc/passwd links the image's own /etc/passwd, or fails the load when it has none", async () => {
    const link: RootfsFile = { path: 'passwd', kind: 'link', target: '../../etc/passwd' };
    const own = 'game:x:1000:1000:the image, not the host:/:/bin/sh\n';
    const image = await images.ensure(await build('docker_image', [{ path: 'etc', kind: 'dir' }, { path: 'etc/passwd', kind: 'text', text: own }, link]));
    expect(await lobby(image, 'busybox cat /passwd')).toEqual({ code: 0, stdout: own, stderr: '' });
    const e = await images.ensure(await build('docker_image', [link])).then(() => undefined, (error: unknown) => error);
    expect(e).toBeInstanceOf(BuildImageError);
    expect(e).toMatchObject({ failure: 'engine' });
    expect((e as Error).message).toMatch(/^the Docker Engine could not load the build's image \(docker_image, compression none\): .*link \/etc\/passwd \/passwd: no such file or directory$/);
  }, 60_000);
});
