/**
 * One Swarm node's Docker Engine: a `dockerd` of its own inside the node's network namespace
 * (entered with `nsenter --net`, not `ip netns exec`, which remounts /sys and leaves dockerd
 * without its cgroups) and UTS namespace (its hostname is the node's name), with its own data
 * root, exec root, pidfile, socket, config file and log under the node's folder. It starts its own
 * containerd (under its exec root); its bridge and iptables rules live in the namespace, so it
 * never meets the host's dockerd. Nothing is pulled but from the test registry, which it trusts
 * as an insecure (plain HTTP) registry. Test helpers; root only.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import { eventually } from '../wait.js';
import { alive, pidsMentioning, signalAndWait, succeeds } from './system.js';

/** What makes one node's engine. */
export interface DaemonSpec {
  /** The node's name: its hostname, and the network namespace (/run/netns/<name>) it runs in. */
  readonly name: string;
  /** The node's folder (data-root, exec-root, socket, log). */
  readonly dir: string;
  /** The registry it may pull from over plain HTTP (`10.77.0.1:5000`). */
  readonly registry: string;
}

/**
 * The socket a node's engine listens on.
 *
 * @example
 * socketOf(spec); // '/tmp/tavern-swarm-0/tvswarm0-n1/docker.sock'
 */
export const socketOf = (spec: DaemonSpec): string => join(spec.dir, 'docker.sock');

/** The log a node's engine writes. */
const logOf = (spec: DaemonSpec): string => join(spec.dir, 'dockerd.log');

/**
 * A client for the node's engine; every request gives up after 60 s of silence.
 *
 * @example
 * await engineOf(spec).ping();
 */
export const engineOf = (spec: DaemonSpec): Dockerode => new Dockerode({ socketPath: socketOf(spec), timeout: 60_000 });

const tail = async (file: string, lines = 15): Promise<string> =>
  (await readFile(file, 'utf8').catch(() => '')).trimEnd().split('\n').slice(-lines).join('\n');

/**
 * Starts the node's dockerd (again, after a stop: same folder, same state) and waits until its
 * API answers (at most `ms`); its pid. Rejects with the log's last lines when it exits or stays
 * silent.
 *
 * @example
 * const pid = await startDaemon({ name: 'tvswarm0-n1', dir: '/tmp/tavern-swarm-0/tvswarm0-n1', registry: '10.77.0.1:5000' });
 */
export const startDaemon = async (spec: DaemonSpec, ms = 60_000): Promise<number> => {
  await mkdir(spec.dir, { recursive: true });
  const config = join(spec.dir, 'daemon.json');
  if (!existsSync(config)) await writeFile(config, '{}\n');
  const args = [
    '--config-file', config, '--data-root', join(spec.dir, 'data'), '--exec-root', join(spec.dir, 'exec'),
    '--pidfile', join(spec.dir, 'dockerd.pid'), '-H', `unix://${socketOf(spec)}`,
    '--userland-proxy=false', '--insecure-registry', spec.registry,
    // What a Tavern node sets because a service spec cannot (and says so with a label Tavern reads).
    '--no-new-privileges', '--label', 'tavern.no-new-privileges=true',
  ];
  const log = await open(logOf(spec), 'a');
  // nsenter and unshare exec what follows, and sh execs dockerd: the child's pid is dockerd's.
  const child = spawn('nsenter', [`--net=/run/netns/${spec.name}`, 'unshare', '--uts', '--', 'sh', '-c', 'hostname "$0" && exec dockerd "$@"', spec.name, ...args], {
    detached: true, stdio: ['ignore', log.fd, log.fd],
  });
  await log.close();
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited (${signal ?? code ?? '?'})`));
  child.once('error', (e) => (exited = e.message));
  child.unref();
  const engine = engineOf(spec);
  try {
    await eventually(`${spec.name}'s dockerd to answer`, async () => {
      if (exited !== undefined) throw new Error(`${spec.name}'s dockerd ${exited}`);
      return (await engine.ping().then(() => true, () => undefined));
    }, { timeoutMs: ms });
  } catch (e) {
    throw new Error(`${(e as Error).message}; ${logOf(spec)} ends:\n${await tail(logOf(spec))}`);
  }
  if (child.pid === undefined) throw new Error(`${spec.name}'s dockerd has no pid`);
  return child.pid;
};

/**
 * Sends `signal` to the node's dockerd and waits (at most `ms`) until it has exited. SIGKILL is
 * a daemon crash: its containerd and containers keep running, as they would.
 *
 * @example
 * await stopDaemon(spec, pid, 'SIGKILL');
 */
export const stopDaemon = async (spec: DaemonSpec, pid: number, signal: NodeJS.Signals, ms = 30_000): Promise<void> => {
  if (!(await alive(pid))) return;
  const left = await signalAndWait([pid], signal, ms);
  if (left.length > 0) throw new Error(`${spec.name}'s dockerd (pid ${pid}) is still running ${ms} ms after ${signal}`);
};

/** The runc root dockerd 20.10 keeps its containers' state in. */
const runcRoot = (dir: string): string => join(dir, 'exec', 'runtime-runc', 'moby');

/** The ids of the containers containerd knows in `dir` (tasks) or runc still runs. */
const containerIds = async (dir: string): Promise<string[]> => {
  const tasks = await readdir(join(dir, 'exec', 'containerd', 'daemon', 'io.containerd.runtime.v2.task', 'moby')).catch(() => []);
  const runc = await readdir(runcRoot(dir)).catch(() => []);
  return [...new Set([...tasks, ...runc])];
};

/**
 * Ends what a node's engine left running under `dir`, however it ended: every process mentioning
 * the folder (dockerd, containerd, shims) is killed, every container runc still runs is deleted
 * (which kills it), and the shims' sockets containerd keeps in /run/containerd/s are removed (they
 * are named by a hash of containerd's address, namespace and container id). Idempotent.
 *
 * @example
 * await endDaemon('/tmp/tavern-swarm-0/tvswarm0-n2');
 */
export const endDaemon = async (dir: string): Promise<void> => {
  await signalAndWait(await pidsMentioning(`${dir}/`), 'SIGKILL', 10_000);
  const ids = await containerIds(dir);
  for (const id of ids) await succeeds('runc', ['--root', runcRoot(dir), 'delete', '--force', id], 15_000);
  const containerd = join(dir, 'exec', 'containerd', 'containerd.sock');
  for (const id of ids) {
    await rm(join('/run/containerd/s', createHash('sha256').update(join(containerd, 'moby', id)).digest('hex')), { force: true });
  }
};
