/**
 * The Docker container a lobby runs in, as the Engine API's create body: the lobby's environment,
 * Tavern's labels, the tier's limits, the hardening defaults and the published ports. Pure: the
 * runtime calls the engine with it.
 */
import type Dockerode from 'dockerode';
import type { StartLobby } from '../../core/effects.js';
import { containerName, type Hardening, lobbyEnvLines, lobbyLabels, lobbyResources, publishedPorts } from './lobby-spec.js';

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

type PortMap = Record<string, { HostIp: string; HostPort: string }[]>;

/** The ports to expose and their bindings on `host` (see {@link publishedPorts}). */
const portBindings = (lobby: StartLobby, host: string): { exposed: Record<string, object>; bindings: PortMap } => {
  const exposed: Record<string, object> = {};
  const bindings: PortMap = {};
  for (const p of publishedPorts(lobby)) {
    const key = `${p.containerPort}/${p.transport}`;
    exposed[key] = {};
    (bindings[key] ??= []).push({ HostIp: host, HostPort: String(p.published) });
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
  const resources = lobbyResources(lobby.tier);
  const { exposed, bindings } = portBindings(lobby, options.publishHost);
  const { hardening } = options;
  return {
    name: containerName(lobby.lobbyId),
    Image: options.image,
    ...(lobby.args.length > 0 ? { Cmd: [...lobby.args] } : {}),
    ...(hardening.user === undefined ? {} : { User: hardening.user }),
    Env: lobbyEnvLines(lobby, resources),
    Labels: lobbyLabels(lobby, options.instanceId),
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
