/**
 * The parts of the Engine API's Swarm objects (nodes, tasks) the harness and its tests read,
 * typed (dockerode gives them as `any`). Test helpers.
 */
import type Dockerode from 'dockerode';

/** A Swarm node as a manager describes it (`GET /nodes/{id}`). */
export interface SwarmNode {
  readonly ID: string;
  readonly Version: { readonly Index: number };
  readonly Spec: {
    readonly Name?: string;
    readonly Labels?: Readonly<Record<string, string>>;
    readonly Role: 'manager' | 'worker';
    readonly Availability: 'active' | 'pause' | 'drain';
  };
  readonly Description: { readonly Hostname: string };
  /** `State`: unknown, down, ready or disconnected. */
  readonly Status: { readonly State: string; readonly Addr?: string };
  readonly ManagerStatus?: { readonly Leader?: boolean; readonly Reachability?: string };
}

/** A task of a service (`GET /tasks`). */
export interface SwarmTask {
  readonly ID: string;
  readonly NodeID?: string;
  readonly DesiredState: string;
  /** `State`: new, pending, assigned, accepted, preparing, starting, running, complete, failed, … */
  readonly Status: { readonly State: string; readonly Err?: string; readonly Message?: string };
}

/**
 * Every node of the swarm `manager` manages.
 *
 * @example
 * (await swarmNodes(cluster.manager.docker)).filter((n) => n.Status.State === 'ready').length; // 3
 */
export const swarmNodes = async (manager: Dockerode): Promise<SwarmNode[]> => (await manager.listNodes()) as SwarmNode[];

/**
 * One node, as `manager` describes it.
 *
 * @example
 * (await swarmNode(cluster.manager.docker, cluster.node(2).id)).Status.State; // 'down'
 */
export const swarmNode = async (manager: Dockerode, id: string): Promise<SwarmNode> => (await manager.getNode(id).inspect()) as SwarmNode;

/**
 * The tasks of service `service` (its id or name).
 *
 * @example
 * (await serviceTasks(cluster.manager.docker, 'web'))[0]?.Status.State; // 'running'
 */
export const serviceTasks = async (manager: Dockerode, service: string): Promise<SwarmTask[]> =>
  (await manager.listTasks({ filters: { service: [service] } })) as SwarmTask[];
