/**
 * Test game-server images built FROM scratch without any registry, as the three archives a game
 * developer would upload: a `docker save` archive (kind docker_image), an OCI bundle tar (kind
 * oci_bundle: config.json + rootfs/) and that bundle LZ4-compressed (frame format, `lz4 -1 -BD`,
 * the Rivet CLI's default). Each image is imported into the engine from a generated rootfs tar,
 * saved, then removed again; the archives are kept under test/.generated/images/, keyed by a hash
 * of everything that goes in, so later test files (and runs) reuse them.
 *
 * - {@link busyboxGameServer}: Debian's static busybox; on start it calls `lobbies/ready`, prints
 *   a line on stdout and one on stderr, and serves a TCP echo on $PORT_DEFAULT (≈ 1 MB).
 * - {@link nodeGameServer}: the host's node and the libraries `ldd` lists, running
 *   test/docker/game-server.js (UDP and TCP echo, ready, players/connected, crash/oom commands,
 *   SIGTERM → exit 0) (≈ 100 MB).
 */
import { execFile } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type Dockerode from 'dockerode';
import { readReply } from '../../src/adapters/docker/engine-upload.js';
import { contentHash, lz4, tarOf, writeOciBundle, type OciProcess, type RootfsFile } from './rootfs.js';

/** How long each step took when the archives were made (ms) and how large they are (bytes). */
export interface FixtureStats {
  readonly importMs: number;
  readonly saveMs: number;
  readonly bundleMs: number;
  readonly lz4Ms: number;
  readonly dockerImageBytes: number;
  readonly ociBundleBytes: number;
  readonly ociBundleLz4Bytes: number;
}

/** A test image and its three upload forms (paths of files). */
export interface GameServerArchives {
  readonly name: string;
  /** The cache key (a content hash prefix). */
  readonly key: string;
  readonly files: readonly RootfsFile[];
  readonly process: OciProcess;
  /** `docker save` archive: kind docker_image, compression none. */
  readonly dockerImage: string;
  /** OCI bundle (config.json first, then rootfs/): kind oci_bundle, compression none. */
  readonly ociBundle: string;
  /** The OCI bundle in the LZ4 frame format: kind oci_bundle, compression lz4. */
  readonly ociBundleLz4: string;
  readonly stats: FixtureStats;
}

/** @example { uid: 0, gid: 0 } // run as root instead of 1000:1000 */
export interface FixtureOptions {
  readonly uid?: number;
  readonly gid?: number;
  /** Where archives are kept (default test/.generated/images). */
  readonly dir?: string;
}

/**
 * The repository's root. This file also runs compiled in the benchmarks' tree
 * (node_modules/.cache/tavern-bench/test/docker/), which holds neither game-server.js nor the
 * archives: both are taken from the sources, so tests and benchmarks share one cache.
 */
const ROOT = ((here: string): string => {
  const benchTree = here.indexOf(`${sep}node_modules${sep}.cache${sep}tavern-bench${sep}`);
  return benchTree >= 0 ? here.slice(0, benchTree) : join(here, '..', '..');
})(fileURLToPath(new URL('.', import.meta.url)));
const GENERATED = join(ROOT, 'test', '.generated', 'images');
/** The node game server's program (see {@link nodeGameServer}); the benchmarks also run it as a host process. */
export const GAME_SERVER_JS = join(ROOT, 'test', 'docker', 'game-server.js');
/** Bump when the way archives are made changes, so cached ones are rebuilt. */
const RECIPE = 1;

const passwd = (uid: number, gid: number): RootfsFile[] => [
  { path: 'etc', kind: 'dir' },
  { path: 'etc/passwd', kind: 'text', text: `root:x:0:0:root:/root:/bin/sh\ngame:x:${uid}:${gid}:game:/tmp:/bin/sh\n` },
  { path: 'etc/group', kind: 'text', text: `root:x:0:\ngame:x:${gid}:\n` },
  { path: 'tmp', kind: 'dir', mode: 0o1777 },
];

const BUSYBOX_SERVER = `#!/bin/sh
# Tavern's busybox test game server: listen, say ready, log, echo TCP on $PORT_DEFAULT until SIGTERM.
trap 'echo "SIGTERM received, exiting"; exit 0' TERM
busybox nc -ll -p "\${PORT_DEFAULT:?PORT_DEFAULT is not set}" -e cat &
busybox wget -q -O - --post-data='' --header "Authorization: Bearer $RIVET_TOKEN" "$RIVET_API_ENDPOINT/matchmaker/lobbies/ready" >/dev/null \\
  && echo "lobby ready" || echo "lobbies/ready failed" >&2
echo "busybox game server listening on tcp $PORT_DEFAULT"
echo "busybox game server stderr check" >&2
wait
`;

/** Builds an image from `files` in the engine, saves it and writes the bundle forms into `dir`. */
const build = async (docker: Dockerode, dir: string, key: string, files: readonly RootfsFile[], p: OciProcess): Promise<FixtureStats> => {
  const ref = `tavern-fixture:${key}`;
  const changes = [`ENTRYPOINT ${JSON.stringify(p.args)}`, ...p.env.map((e) => `ENV ${e}`), `WORKDIR ${p.cwd}`, `USER ${p.uid}:${p.gid}`];
  let t = performance.now();
  const reply = await readReply(await docker.importImage(tarOf(files) as unknown as NodeJS.ReadableStream, { repo: 'tavern-fixture', tag: key, changes }));
  if (reply.error !== undefined) throw new Error(`importing the ${key} fixture failed: ${reply.error}`);
  const importMs = performance.now() - t;
  t = performance.now();
  await pipeline(await docker.getImage(ref).get(), createWriteStream(join(dir, 'image.tar')));
  const saveMs = performance.now() - t;
  await docker.getImage(ref).remove({ force: true });
  t = performance.now();
  await writeOciBundle(join(dir, 'oci-bundle.tar'), files, p);
  const bundleMs = performance.now() - t;
  t = performance.now();
  await lz4(join(dir, 'oci-bundle.tar'), join(dir, 'oci-bundle.tar.lz4'));
  const lz4Ms = performance.now() - t;
  const size = async (name: string): Promise<number> => (await stat(join(dir, name))).size;
  return {
    importMs, saveMs, bundleMs, lz4Ms,
    dockerImageBytes: await size('image.tar'), ociBundleBytes: await size('oci-bundle.tar'), ociBundleLz4Bytes: await size('oci-bundle.tar.lz4'),
  };
};

const made = new Map<string, Promise<GameServerArchives>>();

/** The archives of an image, from the cache, or built (into a temporary folder renamed into place, so concurrent test files never see half of them). */
const archives = (docker: Dockerode, name: string, files: readonly RootfsFile[], p: OciProcess, options: FixtureOptions): Promise<GameServerArchives> => {
  const make = async (): Promise<GameServerArchives> => {
    const key = `${name}-${(await contentHash(files, JSON.stringify({ RECIPE, p }))).slice(0, 16)}`;
    const dir = join(options.dir ?? GENERATED, key);
    if (!existsSync(join(dir, 'stats.json'))) {
      const temp = `${dir}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
      await mkdir(temp, { recursive: true });
      try {
        const stats = await build(docker, temp, key, files, p);
        await writeFile(join(temp, 'stats.json'), JSON.stringify(stats));
        if (!existsSync(dir)) await rename(temp, dir).catch(() => undefined);
      } finally {
        await rm(temp, { recursive: true, force: true });
      }
    }
    const stats = JSON.parse(await readFile(join(dir, 'stats.json'), 'utf8')) as FixtureStats;
    return { name, key, files, process: p, dockerImage: join(dir, 'image.tar'), ociBundle: join(dir, 'oci-bundle.tar'), ociBundleLz4: join(dir, 'oci-bundle.tar.lz4'), stats };
  };
  const id = JSON.stringify({ name, options });
  const existing = made.get(id);
  if (existing !== undefined) return existing;
  const promise = make();
  made.set(id, promise);
  return promise;
};

/**
 * The busybox game server's archives (built on first use).
 *
 * @example
 * const { dockerImage, ociBundle, ociBundleLz4 } = await busyboxGameServer(docker);
 */
export const busyboxGameServer = (docker: Dockerode, options: FixtureOptions = {}): Promise<GameServerArchives> => {
  const uid = options.uid ?? 1000;
  const gid = options.gid ?? 1000;
  const applets = ['sh', 'cat', 'nc', 'wget', 'echo', 'env', 'id', 'pwd', 'sleep', 'printf'];
  const files: RootfsFile[] = [
    { path: 'bin', kind: 'dir' },
    { path: 'bin/busybox', kind: 'file', from: '/bin/busybox' },
    ...applets.map((a): RootfsFile => ({ path: `bin/${a}`, kind: 'symlink', target: 'busybox' })),
    { path: 'bin/game-server', kind: 'text', text: BUSYBOX_SERVER, mode: 0o755 },
    ...passwd(uid, gid),
  ];
  return archives(docker, 'busybox', files, { args: ['/bin/game-server'], env: ['PATH=/bin', 'GAME=busybox'], cwd: '/', uid, gid }, options);
};

/** The libraries `ldd` lists for `binary` (and the dynamic loader), by the paths it lists. */
const libraries = async (binary: string): Promise<string[]> => {
  const { stdout } = await promisify(execFile)('ldd', [binary]);
  return [...stdout.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((m) => m[1] as string);
};

/**
 * The node game server's archives (built on first use): the host's node (`process.execPath`),
 * its libraries and test/docker/game-server.js.
 *
 * @example
 * const node = await nodeGameServer(docker); // node.process.args: ['/usr/bin/node', '/srv/game-server.js']
 */
export const nodeGameServer = (docker: Dockerode, options: FixtureOptions = {}): Promise<GameServerArchives> =>
  nodeImage(docker, 'node', GAME_SERVER_JS, options);

/**
 * An image running `script` (an ES module, as /srv/game-server.js) with the host's node: the node
 * game server, or another test's own server program.
 *
 * @example
 * const lobby = await nodeImage(docker, 'node-http', fileURLToPath(new URL('./lobby-server.js', import.meta.url)));
 */
export const nodeImage = async (docker: Dockerode, name: string, script: string, options: FixtureOptions = {}): Promise<GameServerArchives> => {
  const uid = options.uid ?? 1000;
  const gid = options.gid ?? 1000;
  const files: RootfsFile[] = [
    ...(await nodeFiles()),
    { path: 'srv/game-server.js', kind: 'text', text: await readFile(script, 'utf8') },
    { path: 'srv/package.json', kind: 'text', text: '{ "type": "module" }\n' },
    ...passwd(uid, gid),
  ];
  return archives(docker, name, files, { args: ['/usr/bin/node', '/srv/game-server.js'], env: ['PATH=/usr/bin:/bin', 'NODE_ENV=production'], cwd: '/srv', uid, gid }, options);
};

/** The host's node (`/usr/bin/node`) and the libraries it needs, and `/srv`. */
const nodeFiles = async (): Promise<RootfsFile[]> => {
  const libs = await libraries(process.execPath);
  const dirs = [...new Set(['usr', 'usr/bin', 'srv', ...libs.flatMap((l) => l.split('/').slice(1, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/')))])];
  return [
    ...dirs.map((d): RootfsFile => ({ path: d, kind: 'dir' })),
    { path: 'usr/bin/node', kind: 'file', from: process.execPath },
    ...libs.map((l): RootfsFile => ({ path: l.slice(1), kind: 'file', from: l })),
  ];
};

/**
 * Imports into the engine, as `ref`, an image holding only the host's node (`/usr/bin/node`, user
 * `game` 1000:1000): what `FROM node` gives a Dockerfile on a machine that cannot pull. The caller
 * removes it.
 *
 * @example
 * await importNodeBase(docker, 'tavern-node-base:1a2b'); // a Dockerfile may say FROM tavern-node-base:1a2b
 */
export const importNodeBase = async (docker: Dockerode, ref: string): Promise<void> => {
  const [repo, tag] = ref.split(':') as [string, string];
  const changes = ['ENV PATH=/usr/bin:/bin', 'WORKDIR /srv', 'USER 1000:1000'];
  const reply = await readReply(await docker.importImage(tarOf([...(await nodeFiles()), ...passwd(1000, 1000)]) as unknown as NodeJS.ReadableStream, { repo, tag, changes }));
  if (reply.error !== undefined) throw new Error(`importing ${ref} failed: ${reply.error}`);
};
