/**
 * The Docker container a lobby runs in, as the Engine API's create body: the lobby's environment,
 * Tavern's labels, the tier's limits, the hardening defaults and the published ports. Pure: the
 * runtime calls the engine with it.
 */
import type Dockerode from 'dockerode';
import { tierResources } from '../../core/config/tiers.js';
import type { StartLobby } from '../../core/effects.js';

/** Labels that mark Tavern's containers; `tavern.instance` tells which Tavern owns one. */
export const LABELS = {
  lobby: 'tavern.lobby',
  namespace: 'tavern.namespace',
  version: 'tavern.version',
  instance: 'tavern.instance',
} as const;

/** Hardening every lobby container gets unless the operator relaxes it. */
export interface Hardening {
  /** Processes and threads the container may hold (fork bombs stop here). */
  readonly pidsLimit: number;
  /** Size of the writable tmpfs at /tmp, in MiB (the root filesystem is read-only). */
  readonly tmpMiB: number;
  /** Mount the image's root filesystem read-only. */
  readonly readOnlyRoot: boolean;
  /** The user lobby processes run as (`uid[:gid]` or a name of the image); absent: the image's own. */
  readonly user?: string;
}

export const DEFAULT_HARDENING: Hardening = Object.freeze({ pidsLimit: 256, tmpMiB: 64, readOnlyRoot: true });

export interface ContainerSpecOptions {
  /** The image to run (the build's local image). */
  readonly image: string;
  /** This Tavern's instance id (`tavern.instance`). */
  readonly instanceId: string;
  /** Where proxied TCP/UDP ports (and the host ports the game proxy reaches) are published. */
  readonly publishHost: string;
  /** The network a bridge lobby joins, by id or name (Tavern's `tavern-lobbies`, inter-container communication off). */
  readonly network: string;
  readonly hardening: Hardening;
  /** Hostnames to add to /etc/hosts (e.g. `host.docker.internal:host-gateway`). */
  readonly extraHosts?: readonly string[];
}

/**
 * The container name of a lobby: unique in the engine, so a lobby can never be started twice.
 *
 * @example
 * containerName('5b0c…'); // 'tavern-5b0c…'
 */
export const containerName = (lobbyId: string): string => `tavern-${lobbyId}`;

type PortMap = Record<string, { HostIp: string; HostPort: string }[]>;

/**
 * Where each port is published. TCP and UDP ports through the game proxy are published on the
 * proxied port the client is given (26000..31999), so clients reach the game straight through the
 * kernel; HTTP, HTTPS and TCP+TLS ports on their host port, where the game proxy routes and
 * terminates them. Host-network containers publish nothing (they listen on those ports directly).
 */
const portBindings = (lobby: StartLobby, host: string): { exposed: Record<string, object>; bindings: PortMap } => {
  const exposed: Record<string, object> = {};
  const bindings: PortMap = {};
  if (lobby.networkMode === 'host') return { exposed, bindings };
  for (const p of lobby.ports) {
    if (p.proxy !== 'game_guard' || p.containerPort === undefined) continue;
    const direct = p.protocol === 'tcp' || p.protocol === 'udp';
    const published = direct ? p.publicPort : p.hostPort;
    if (published === undefined) continue;
    const key = `${p.containerPort}/${p.transport}`;
    exposed[key] = {};
    (bindings[key] ??= []).push({ HostIp: host, HostPort: String(published) });
  }
  return { exposed, bindings };
};

/**
 * The create body of a lobby's container.
 *
 * @example
 * await docker.createContainer(containerSpec(lobby, { image: 'tavern-build:…', instanceId, publishHost: '127.0.0.1', network: 'tavern-lobbies', hardening: DEFAULT_HARDENING }));
 */
export const containerSpec = (lobby: StartLobby, options: ContainerSpecOptions): Dockerode.ContainerCreateOptions => {
  const resources = tierResources(lobby.tier) ?? tierResources('basic-1d1');
  if (resources === undefined) throw new Error('the default tier has no resources');
  const env: Record<string, string> = {
    ...lobby.env,
    RIVET_CPU: String(resources.cpuMillicores),
    RIVET_MEMORY: String(resources.memoryBytes),
    RIVET_MEMORY_OVERSUBSCRIBE: String(resources.memoryBytes),
  };
  const { exposed, bindings } = portBindings(lobby, options.publishHost);
  const { hardening } = options;
  return {
    name: containerName(lobby.lobbyId),
    Image: options.image,
    ...(lobby.args.length > 0 ? { Cmd: [...lobby.args] } : {}),
    ...(hardening.user === undefined ? {} : { User: hardening.user }),
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    Labels: {
      [LABELS.lobby]: lobby.lobbyId,
      [LABELS.namespace]: lobby.namespaceId,
      [LABELS.version]: lobby.versionId,
      [LABELS.instance]: options.instanceId,
    },
    ExposedPorts: exposed,
    AttachStdin: false,
    OpenStdin: false,
    Tty: false,
    HostConfig: {
      NetworkMode: lobby.networkMode === 'host' ? 'host' : options.network,
      PortBindings: bindings,
      ...(options.extraHosts === undefined || lobby.networkMode === 'host' ? {} : { ExtraHosts: [...options.extraHosts] }),
      // Tier limits: a CPU share (weight under contention) and a hard cap, memory without swap.
      CpuShares: Math.max(2, Math.round((resources.cpuMillicores * 1024) / 1000)),
      NanoCpus: resources.cpuMillicores * 1_000_000,
      Memory: resources.memoryBytes,
      MemorySwap: resources.memoryBytes,
      // Hardening: no capabilities, no privilege gain, bounded processes, read-only root, no privileged mode.
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      PidsLimit: hardening.pidsLimit,
      ReadonlyRootfs: hardening.readOnlyRoot,
      Tmpfs: { '/tmp': `rw,nosuid,nodev,size=${hardening.tmpMiB}m` },
      Privileged: false,
      Init: true,
      RestartPolicy: { Name: 'no' },
      LogConfig: { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '2' } },
    },
  };
};
