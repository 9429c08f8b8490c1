/**
 * What a lobby's container is made of, whichever engine runs it: its environment (with the tier's
 * figures), Tavern's labels, the tier's limits, the hardening defaults and which ports are
 * published where. Pure; the Docker runtime (container-spec.ts) and the Swarm runtime
 * (../swarm/service-spec.ts) each put these into their own engine's body.
 */
import { tierResources, type TierResources } from '../../core/config/tiers.js';
import type { StartLobby } from '../../core/effects.js';
import type { HostedContainer } from '../../io/runtime.js';

/** Labels that mark Tavern's containers (and Swarm services); `tavern.instance` tells which Tavern owns one. */
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

/**
 * The container (and service) name of a lobby: unique in the engine (in the swarm), so a lobby can
 * never be started twice.
 *
 * @example
 * containerName('5b0c…'); // 'tavern-5b0c…'
 */
export const containerName = (lobbyId: string): string => `tavern-${lobbyId}`;

/**
 * The tier's resources (an unknown tier gets the smallest one's).
 *
 * @example
 * lobbyResources('basic-1d2'); // { cpuMillicores: 500, memoryBytes: 1073741824 }
 */
export const lobbyResources = (tier: string): TierResources => {
  const resources = tierResources(tier) ?? tierResources('basic-1d1');
  if (resources === undefined) throw new Error('the default tier has no resources');
  return resources;
};

/**
 * The container's environment as `KEY=value` lines: the lobby's own and the tier's figures
 * (`RIVET_CPU`, `RIVET_MEMORY`, `RIVET_MEMORY_OVERSUBSCRIBE`).
 *
 * @example
 * lobbyEnvLines(lobby, lobbyResources(lobby.tier)); // ['PORT_GAME=7777', …, 'RIVET_CPU=500', …]
 */
export const lobbyEnvLines = (lobby: StartLobby, resources: TierResources): string[] =>
  Object.entries({
    ...lobby.env,
    RIVET_CPU: String(resources.cpuMillicores),
    RIVET_MEMORY: String(resources.memoryBytes),
    RIVET_MEMORY_OVERSUBSCRIBE: String(resources.memoryBytes),
  }).map(([k, v]) => `${k}=${v}`);

/**
 * Tavern's labels of a lobby's container.
 *
 * @example
 * lobbyLabels(lobby, 'inst-a'); // { 'tavern.lobby': 'l-1', 'tavern.namespace': 'ns-1', 'tavern.version': 'v-1', 'tavern.instance': 'inst-a' }
 */
export const lobbyLabels = (lobby: StartLobby, instanceId: string): Record<string, string> => ({
  [LABELS.lobby]: lobby.lobbyId,
  [LABELS.namespace]: lobby.namespaceId,
  [LABELS.version]: lobby.versionId,
  [LABELS.instance]: instanceId,
});

/** A container port published on the host (the node) that runs it. */
export interface PublishedPort {
  readonly containerPort: number;
  readonly transport: 'tcp' | 'udp';
  /** The host's port. */
  readonly published: number;
}

/**
 * Where each port is published. TCP and UDP ports through the game proxy are published on the
 * proxied port the client is given (26000..31999), so clients reach the game straight through the
 * kernel; HTTP, HTTPS and TCP+TLS ports on their host port, where the game proxy routes and
 * terminates them. Host-network containers publish nothing (they listen on those ports directly).
 *
 * @example
 * publishedPorts(lobby); // [{ containerPort: 7777, transport: 'udp', published: 27001 }, …]
 */
export const publishedPorts = (lobby: StartLobby): PublishedPort[] => {
  if (lobby.networkMode === 'host') return [];
  return lobby.ports.flatMap((p): PublishedPort[] => {
    if (p.proxy !== 'game_guard' || p.containerPort === undefined) return [];
    const direct = p.protocol === 'tcp' || p.protocol === 'udp';
    const published = direct ? p.publicPort : p.hostPort;
    return published === undefined ? [] : [{ containerPort: p.containerPort, transport: p.transport, published }];
  });
};

/**
 * The lobby a container (or service) of Tavern's belongs to, read from its labels; none without them.
 *
 * @example
 * hostedOf(c.Labels, c.Id, c.State === 'running'); // [{ lobbyId, namespaceId, versionId, containerId: c.Id, running: true }]
 */
export const hostedOf = (labels: Readonly<Record<string, string>>, containerId: string, running: boolean): HostedContainer[] => {
  const lobbyId = labels[LABELS.lobby];
  const namespaceId = labels[LABELS.namespace];
  const versionId = labels[LABELS.version];
  if (lobbyId === undefined || namespaceId === undefined || versionId === undefined) return [];
  return [{ lobbyId, namespaceId, versionId, containerId, running }];
};
