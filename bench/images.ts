/**
 * `npm run bench -- images [--json] [--rounds 3]`: how long a build takes to become an image, per
 * upload form (docker_image, oci_bundle, oci_bundle + lz4) of the two test game servers (busybox
 * ≈ 2 MB, node ≈ 104 MB), through Tavern's BuildImages (streaming: LZ4 decoded in JS, the tar
 * re-packed on the fly, uploaded through the Engine API) against the docker CLI doing the nearest
 * thing in the same run: `docker load -i image.tar`; `docker import` of the same rootfs as a plain
 * tar; `lz4 -dc rootfs.tar.lz4 | docker import -` (native LZ4). Every load is cold: the image is
 * removed after each. Needs a Docker Engine (DOCKER_HOST or /var/run/docker.sock), `lz4`, busybox.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Dockerode from 'dockerode';
import { BuildImages } from '../src/adapters/docker/images.js';
import { busyboxGameServer, nodeGameServer, type GameServerArchives } from '../test/docker/images.js';
import { lz4, tarOf, writeTar } from '../test/docker/rootfs.js';
import { fileSource, type FileBuild } from '../test/docker/sources.js';
import { table } from './measure.js';

const run = promisify(execFile);

interface Row {
  readonly image: string;
  readonly form: string;
  readonly archive_mb: number;
  readonly tavern_s: number;
  readonly cli_s: number;
  readonly ratio: number;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

const timed = async (op: () => Promise<unknown>): Promise<number> => {
  const t = performance.now();
  await op();
  return (performance.now() - t) / 1000;
};

/** The `docker import --change` flags of a fixture's process. */
const changeFlags = (a: GameServerArchives): string[] =>
  [`ENTRYPOINT ${JSON.stringify(a.process.args)}`, ...a.process.env.map((e) => `ENV ${e}`), `WORKDIR ${a.process.cwd}`, `USER ${a.process.uid}:${a.process.gid}`].flatMap((c) => ['--change', c]);

/** One fixture's three forms: Tavern and the CLI, `rounds` times each, alternating which goes first. */
const measure = async (docker: Dockerode, a: GameServerArchives, dir: string, rounds: number): Promise<Row[]> => {
  const rootfs = join(dir, `${a.key}-rootfs.tar`);
  await writeTar(tarOf(a.files), rootfs);
  await lz4(rootfs, `${rootfs}.lz4`);
  const baseline = `tavern-bench-baseline:${a.key}`;
  const forms: { form: string; build: FileBuild; cli: () => Promise<unknown>; cliImage: string }[] = [
    { form: 'docker_image', build: { kind: 'docker_image', compression: 'none', path: a.dockerImage }, cli: () => run('docker', ['load', '-q', '-i', a.dockerImage]), cliImage: `tavern-fixture:${a.key}` },
    { form: 'oci_bundle', build: { kind: 'oci_bundle', compression: 'none', path: a.ociBundle }, cli: () => run('docker', ['import', ...changeFlags(a), rootfs, baseline]), cliImage: baseline },
    {
      form: 'oci_bundle+lz4', build: { kind: 'oci_bundle', compression: 'lz4', path: a.ociBundleLz4 },
      cli: () => run('sh', ['-c', `lz4 -dc "$0" | docker import ${changeFlags(a).map((f) => `'${f.replace(/'/g, `'\\''`)}'`).join(' ')} - ${baseline}`, `${rootfs}.lz4`]),
      cliImage: baseline,
    },
  ];
  const rows: Row[] = [];
  for (const { form, build, cli, cliImage } of forms) {
    const tavern: number[] = [];
    const native: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const files = fileSource();
      const images = new BuildImages({ docker, source: files.source, repository: 'tavern-bench' });
      const id = files.add(build);
      const viaTavern = async (): Promise<void> => {
        tavern.push(await timed(() => images.ensure(id)));
        await docker.getImage(images.reference(id)).remove({ force: true });
      };
      const viaCli = async (): Promise<void> => {
        native.push(await timed(cli));
        await docker.getImage(cliImage).remove({ force: true });
      };
      for (const step of round % 2 === 0 ? [viaTavern, viaCli] : [viaCli, viaTavern]) await step();
    }
    const archive = (await stat(build.path)).size;
    rows.push({ image: a.name, form, archive_mb: archive / 1e6, tavern_s: median(tavern), cli_s: median(native), ratio: median(tavern) / median(native) });
  }
  return rows;
};

export const imagesBench = async (args: readonly string[]): Promise<void> => {
  const json = args.includes('--json');
  const at = args.indexOf('--rounds');
  const rounds = at >= 0 ? Number(args[at + 1]) : 3;
  const docker = new Dockerode();
  await docker.ping().catch((e: unknown) => {
    throw new Error(`the images benchmark needs a Docker Engine: ${e instanceof Error ? e.message : String(e)}`);
  });
  const dir = await mkdtemp(join(tmpdir(), `tavern-bench-images-${randomUUID().slice(0, 8)}-`));
  const rows: Row[] = [];
  try {
    for (const fixture of [busyboxGameServer, nodeGameServer]) {
      const archives = await fixture(docker);
      rows.push(...(await measure(docker, archives, dir, rounds)));
      if (!json) process.stderr.write(`measured ${archives.name}\n`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  if (json) {
    process.stdout.write(`${JSON.stringify({ bench: 'images', rounds, rows })}\n`);
    return;
  }
  process.stdout.write(`${table(['image', 'form', 'archive MB', 'Tavern s', 'docker CLI s', 'Tavern/CLI'], rows.map((r) => [
    r.image, r.form, r.archive_mb.toFixed(1), r.tavern_s.toFixed(2), r.cli_s.toFixed(2), `${r.ratio.toFixed(2)}x`,
  ]))}\n`);
};
