/**
 * The test Swarm's image registry: Debian's `docker-registry` (CNCF Distribution 2.8) with a
 * config of its own (filesystem storage under the cluster's folder, plain HTTP on the host's
 * bridge address, where every node reaches it), and pushing an image built FROM scratch into it
 * through a node's engine. Nothing is ever pulled from the internet. Test helpers.
 */
import { spawn } from 'node:child_process';
import { mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Dockerode from 'dockerode';
import { readReply } from '../../src/adapters/docker/engine-upload.js';
import { eventually } from '../wait.js';
import { tarOf, type OciProcess, type RootfsFile } from '../docker/rootfs.js';

/**
 * Starts the registry on `address` (`10.77.0.1:5000`), its files and log under `dir`, and waits
 * (at most `ms`) until `GET /v2/` answers 200. It runs until killed (its command line names `dir`).
 *
 * @example
 * await startRegistry('/tmp/tavern-swarm-0/registry', '10.77.0.1:5000');
 */
export const startRegistry = async (dir: string, address: string, ms = 30_000): Promise<void> => {
  await mkdir(join(dir, 'data'), { recursive: true });
  const config = join(dir, 'config.yml');
  await writeFile(config, [
    'version: 0.1',
    'log:', '  level: warn', '  accesslog:', '    disabled: true',
    'storage:', '  filesystem:', `    rootdirectory: ${join(dir, 'data')}`, '  delete:', '    enabled: true',
    'http:', `  addr: ${address}`, '  secret: tavern-swarm-test',
    '',
  ].join('\n'));
  const logFile = join(dir, 'registry.log');
  const log = await open(logFile, 'a');
  const child = spawn('docker-registry', ['serve', config], { detached: true, stdio: ['ignore', log.fd, log.fd] });
  await log.close();
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited (${signal ?? code ?? '?'})`));
  child.once('error', (e) => (exited = e.message));
  child.unref();
  try {
    await eventually(`the registry at ${address} to answer`, async () => {
      if (exited !== undefined) throw new Error(`the registry ${exited}`);
      const res = await fetch(`http://${address}/v2/`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    }, { timeoutMs: ms });
  } catch (e) {
    throw new Error(`${(e as Error).message}; ${logFile} ends:\n${(await readFile(logFile, 'utf8').catch(() => '')).trimEnd().split('\n').slice(-15).join('\n')}`);
  }
};

/** An image to push: its files and its process (test/docker/images.ts's GameServerArchives is one). */
export interface ImageSource {
  readonly files: readonly RootfsFile[];
  readonly process: OciProcess;
}

/** An image in the registry. */
export interface PushedImage {
  /** `10.77.0.1:5000/name:tag`. */
  readonly ref: string;
  /** The manifest's digest (`sha256:…`), as the push reported it. */
  readonly digest: string;
  /** `ref@digest`, which an engine uses without asking the registry when it already has it. */
  readonly pinned: string;
}

/**
 * Imports `image` into `engine` as `ref` (`repo:tag`): its files as the root filesystem, its
 * process as the entrypoint, environment, working directory and user.
 *
 * @example
 * await importImage(new Dockerode(), 'tavern-bench-busybox:1', { files, process });
 */
export const importImage = async (engine: Dockerode, ref: string, image: ImageSource): Promise<void> => {
  const [repo, tag = 'latest'] = ref.split(/:(?=[^:/]*$)/) as [string, string?];
  const p = image.process;
  const changes = [`ENTRYPOINT ${JSON.stringify(p.args)}`, ...p.env.map((e) => `ENV ${e}`), `WORKDIR ${p.cwd}`, `USER ${p.uid}:${p.gid}`];
  const imported = await readReply(await engine.importImage(tarOf(image.files) as unknown as NodeJS.ReadableStream, { repo, tag, changes }));
  if (imported.error !== undefined) throw new Error(`importing ${ref} failed: ${imported.error}`);
};

/**
 * Imports `image` into `engine` (a node's) as `<registry>/<name>`, pushes it to the registry
 * and removes the local tag; the pushed reference and digest.
 *
 * @example
 * const { ref } = await pushImage(manager.docker, '10.77.0.1:5000', 'tavern-httpd:1', { files, process });
 */
export const pushImage = async (engine: Dockerode, registry: string, name: string, image: ImageSource): Promise<PushedImage> => {
  const [repo, tag = 'latest'] = `${registry}/${name}`.split(/:(?=[^:/]*$)/) as [string, string?];
  const ref = `${repo}:${tag}`;
  await importImage(engine, ref, image);
  const pushed = await readReply(await engine.getImage(ref).push({ authconfig: {} }));
  if (pushed.error !== undefined) throw new Error(`pushing ${ref} failed: ${pushed.error}`);
  const digest = pushed.messages.map((m) => /digest: (sha256:[0-9a-f]{64})/.exec(m)?.[1]).find((d) => d !== undefined);
  if (digest === undefined) throw new Error(`pushing ${ref} reported no digest: ${pushed.messages.join(' | ')}`);
  await engine.getImage(ref).remove();
  return { ref, digest, pinned: `${ref}@${digest}` };
};
