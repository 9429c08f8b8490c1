/**
 * The engine side of the `runtime` benchmark: the bare baseline (a game server container created
 * and started straight through the Engine API with exactly the body Tavern would send, from
 * `containerSpec`), waiting for containers to go, cleaning up by label, and what the host shows
 * (free ports, a `docker-proxy` process for a port, a process's resident memory).
 */
import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type Dockerode from 'dockerode';
import { containerSpec } from '../src/adapters/docker/container-spec.js';
import { DEFAULT_HARDENING, LABELS } from '../src/adapters/docker/lobby-spec.js';
import { LOBBY_NETWORK } from '../src/adapters/docker/lobby-network.js';
import type { StartLobby } from '../src/core/effects.js';

export interface BareLobby {
  readonly image: string;
  /** The `tavern.instance` label: never the running Tavern's own, or its reconciler removes the container as an orphan. */
  readonly instanceId: string;
  readonly tier: string;
  readonly env: Readonly<Record<string, string>>;
  /** Container port → published port on 127.0.0.1, per transport. */
  readonly ports: readonly { readonly label: string; readonly transport: 'udp' | 'tcp'; readonly containerPort: number; readonly publicPort: number }[];
}

/**
 * The create body of a bare game server container: the same hardening, limits, labels, network
 * (Tavern's `tavern-lobbies`: the bench makes sure it exists) and port bindings as a Tavern lobby
 * of that tier.
 *
 * @example
 * await docker.createContainer(bareSpec({ image, instanceId: 'bench-bare', tier: 'basic-1d1', env: {}, ports: [{ label: 'game', transport: 'udp', containerPort: 7777, publicPort: 27000 }] }));
 */
export const bareSpec = (b: BareLobby): Dockerode.ContainerCreateOptions => {
  const lobby: StartLobby = {
    type: 'start-lobby',
    lobbyId: randomUUID(),
    namespaceId: 'bench',
    versionId: 'bench',
    gameMode: 'default',
    region: 'local',
    tier: b.tier,
    args: [],
    env: { ...b.env, ...Object.fromEntries(b.ports.map((p) => [`PORT_${p.label.replace(/-/g, '_').toUpperCase()}`, String(p.containerPort)])) },
    networkMode: 'bridge',
    ports: b.ports.map((p) => ({ label: p.label, protocol: p.transport, proxy: 'game_guard', transport: p.transport, publicPort: p.publicPort, containerPort: p.containerPort })),
  };
  return containerSpec(lobby, { image: b.image, instanceId: b.instanceId, publishHost: '127.0.0.1', network: LOBBY_NETWORK, hardening: DEFAULT_HARDENING });
};

const isNotFound = (error: unknown): boolean => (error as { statusCode?: number } | undefined)?.statusCode === 404;

/** Polls until the container is gone (404), for at most `timeoutMs`. */
export const waitGone = async (docker: Dockerode, nameOrId: string, timeoutMs = 30_000): Promise<void> => {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const gone = await docker.getContainer(nameOrId).inspect().then(() => false, (e: unknown) => {
      if (isNotFound(e)) return true;
      throw e;
    });
    if (gone) return;
    if (performance.now() > deadline) throw new Error(`container ${nameOrId} still there after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** Ids of the containers (running or not) carrying `tavern.instance=<instanceId>`. */
export const containersOf = async (docker: Dockerode, instanceId: string, runningOnly = false): Promise<string[]> =>
  (await docker.listContainers({ all: !runningOnly, filters: { label: [`${LABELS.instance}=${instanceId}`] } })).map((c) => c.Id);

/** Removes (forcibly) every container of these instances, a few at a time; resolves to how many. */
export const removeContainers = async (docker: Dockerode, instanceIds: readonly string[]): Promise<number> => {
  const ids = (await Promise.all(instanceIds.map((i) => containersOf(docker, i)))).flat();
  const queue = [...ids];
  const worker = async (): Promise<void> => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      await docker.getContainer(id).remove({ force: true, v: true }).catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return ids.length;
};

/**
 * The host pid of a container's program: the child of its init process (lobbies run with
 * `Init: true`), else the init process itself.
 */
export const containerPid = async (docker: Dockerode, nameOrId: string): Promise<number> => {
  const pid = (await docker.getContainer(nameOrId).inspect()).State.Pid;
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const first = Number(children.trim().split(/\s+/)[0]);
  return Number.isInteger(first) && first > 0 ? first : pid;
};

/** The container's address on its bridge network. */
export const containerAddress = async (docker: Dockerode, nameOrId: string): Promise<string> => {
  const info = await docker.getContainer(nameOrId).inspect();
  const address = Object.values(info.NetworkSettings.Networks).find((n) => n.IPAddress !== '')?.IPAddress;
  if (address === undefined) throw new Error(`container ${nameOrId} has no bridge address`);
  return address;
};

const bindable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const tcp = createServer();
    tcp.once('error', () => resolve(false));
    tcp.listen(port, '127.0.0.1', () => {
      const udp = createSocket('udp4');
      udp.once('error', () => tcp.close(() => resolve(false)));
      udp.bind(port, '127.0.0.1', () => udp.close(() => tcp.close(() => resolve(true))));
    });
  });

/**
 * A port in [min, max] free for both TCP and UDP on 127.0.0.1 now (tried at random).
 *
 * @example
 * const port = await freePort(26_000, 31_999);
 */
export const freePort = async (min: number, max: number): Promise<number> => {
  for (let i = 0; i < 200; i++) {
    const port = min + Math.floor(Math.random() * (max - min + 1));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${min}..${max} after 200 tries`);
};

/** Whether a `docker-proxy` process publishes this host port (the userland proxy at work). */
export const dockerProxyServes = async (port: number): Promise<boolean> => {
  for (const pid of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (!/(^|\/)docker-proxy$/.test(args[0] ?? '')) continue;
    const at = args.indexOf('-host-port');
    if (at >= 0 && args[at + 1] === String(port)) return true;
  }
  return false;
};

/** A process's resident memory in bytes (`VmRSS` of /proc/<pid>/status). */
export const residentBytes = async (pid: number): Promise<number> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) * 1024;
};

/**
 * How many idle lobbies each game mode keeps so that they add up to `total`, as evenly as possible:
 * a mode's `idle_lobbies.min` is at most `perModeMax` (16, wire.md §2.1) and a version has at most
 * `modesMax` (32) game modes.
 *
 * @example
 * idleSplit(200); // 13 modes: [16, 16, 16, 16, 16, 15, 15, 15, 15, 15, 15, 15, 15]
 */
export const idleSplit = (total: number, perModeMax = 16, modesMax = 32): number[] => {
  if (!Number.isInteger(total) || total < 1) throw new RangeError(`idle lobbies must be a positive integer, got ${total}`);
  const modes = Math.ceil(total / perModeMax);
  if (modes > modesMax) throw new RangeError(`at most ${perModeMax * modesMax} idle lobbies fit in one version (${modesMax} game modes × ${perModeMax}), asked for ${total}`);
  const base = Math.floor(total / modes);
  return Array.from({ length: modes }, (_, i) => base + (i < total % modes ? 1 : 0));
};
