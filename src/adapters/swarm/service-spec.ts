/**
 * The Swarm service a lobby runs as, as the Engine API's create body (API 1.41, Engine 20.10):
 * one replica, never restarted (a lobby that dies is reported, not started again), placed only on
 * the nodes of its region that are not being drained and whose engine vouches for the hardening
 * the service spec cannot say, with the same environment, labels, tier limits and hardening as the
 * Docker runtime's container (lobby-spec.ts) and its ports published in host mode on the node
 * that runs it (no ingress routing mesh). Pure: the runtime calls the manager with it.
 *
 * Which hardening comes from where:
 * - in the service spec: no capabilities (`CapabilityDrop: ALL`), read-only root filesystem, the
 *   forced user, the pids limit, a tmpfs at /tmp, an init process, the tier's CPU and memory caps,
 *   the json-file log caps;
 * - from the node's dockerd (the service spec of Engine 20.10 has no field for it): no privilege
 *   gain (`dockerd --no-new-privileges`, or `"no-new-privileges": true` in daemon.json). A node
 *   says it does so with the engine label `tavern.no-new-privileges=true` (`dockerd --label`);
 *   lobbies are placed only on such nodes, and Tavern logs every node without it.
 *
 * Ports: each lobby's tcp/udp ports are published on the node at the proxied port the core
 * allocated. The core allocates ports per region (one port space per region in the world), and a
 * node serves exactly one region (its one `tavern.region` label), so a port unique in its region
 * can never collide on a node, with no per-node state in the core and nothing to reconcile when a
 * lobby moves to another node. The cost: a region's nodes share one range (26000..31999, 6,000
 * ports per transport) instead of each node having its own.
 */
import type Dockerode from 'dockerode';
import type { StartLobby } from '../../core/effects.js';
import { containerName, type Hardening, lobbyEnvLines, lobbyLabels, lobbyResources, publishedPorts } from '../docker/lobby-spec.js';

/** The node label naming the region a node serves. */
export const REGION_LABEL = 'tavern.region';
/** The node label giving the address players reach a node's host-mode ports at. */
export const ADDRESS_LABEL = 'tavern.public-address';
/** The node label that drains a node for Tavern: no new lobby is placed there, running ones finish. */
export const DRAIN_LABEL = 'tavern.drain';
/** The engine label by which a node's dockerd says it runs every container with no-new-privileges. */
export const NO_NEW_PRIVILEGES_LABEL = 'tavern.no-new-privileges';

export interface ServiceSpecOptions {
  /** The image, as every node pulls it (`registry/repo:tag@sha256:…`). */
  readonly image: string;
  readonly instanceId: string;
  readonly hardening: Hardening;
  /** SIGTERM, then SIGKILL this long after, when the service is scaled to 0 (Tavern's stop). */
  readonly stopGraceMs: number;
  /** The ids of the nodes Tavern drains now: the lobby is placed on none of them. */
  readonly drained?: readonly string[];
}

/**
 * The placement constraints of a lobby of `region`: its region's nodes whose engine runs
 * containers with no-new-privileges, and none of the nodes Tavern drains (`tavern.drain=true`,
 * named by node id). The drain is not a label constraint: Swarm shuts down running tasks whose
 * node stops meeting their service's constraints, so a label constraint would kill the lobbies
 * the drain should let finish; a node id never changes, so a lobby placed before the drain runs on.
 *
 * @example
 * placement('lnd', ['n3']); // ['node.labels.tavern.region == lnd', 'engine.labels.tavern.no-new-privileges == true', 'node.id != n3']
 */
export const placement = (region: string, drained: readonly string[] = []): string[] => [
  `node.labels.${REGION_LABEL} == ${region}`,
  `engine.labels.${NO_NEW_PRIVILEGES_LABEL} == true`,
  ...drained.map((id) => `node.id != ${id}`),
];

/**
 * The create body of a lobby's service. Throws for a host-network lobby: a Swarm task cannot be
 * put on its node's host network by Tavern (it would share the node with every other lobby).
 *
 * @example
 * await manager.createService(serviceSpec(lobby, { image: '10.0.0.1:5000/game@sha256:…', instanceId, hardening: DEFAULT_HARDENING, stopGraceMs: 30_000 }));
 */
export const serviceSpec = (lobby: StartLobby, options: ServiceSpecOptions): Dockerode.ServiceSpec => {
  if (lobby.networkMode === 'host') throw new Error('host networking is not available on the Swarm runtime: use the bridge network mode');
  const resources = lobbyResources(lobby.tier);
  const labels = lobbyLabels(lobby, options.instanceId);
  const { hardening } = options;
  return {
    Name: containerName(lobby.lobbyId),
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: {
        Image: options.image,
        ...(lobby.args.length > 0 ? { Args: [...lobby.args] } : {}),
        Env: lobbyEnvLines(lobby, resources),
        Labels: labels,
        ...(hardening.user === undefined ? {} : { User: hardening.user }),
        ReadOnly: hardening.readOnlyRoot,
        CapabilityDrop: ['ALL'],
        Init: true,
        Mounts: [{ Type: 'tmpfs', Source: '', Target: '/tmp', TmpfsOptions: { SizeBytes: hardening.tmpMiB * 1024 * 1024, Mode: 0o1777 } }],
        StopGracePeriod: options.stopGraceMs * 1_000_000,
      },
      Resources: {
        Limits: { NanoCPUs: resources.cpuMillicores * 1_000_000, MemoryBytes: resources.memoryBytes, Pids: hardening.pidsLimit },
      },
      RestartPolicy: { Condition: 'none', MaxAttempts: 0 },
      Placement: { Constraints: placement(lobby.region, options.drained) },
      LogDriver: { Name: 'json-file', Options: { 'max-size': '10m', 'max-file': '2' } },
    },
    Mode: { Replicated: { Replicas: 1 } },
    EndpointSpec: {
      Ports: publishedPorts(lobby).map((p) => ({ Protocol: p.transport, TargetPort: p.containerPort, PublishedPort: p.published, PublishMode: 'host' as const })),
    },
  };
};
