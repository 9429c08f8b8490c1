/**
 * The swarm's nodes for the operator (`tavern nodes`): each with its region, state, drain and the
 * Tavern lobbies running on it, and Tavern's drain set or lifted through the manager (the node
 * label `tavern.drain`, never Swarm's own availability `drain`, which would stop the lobbies
 * running there).
 */
import type Dockerode from 'dockerode';
import type { ClusterNode, ClusterNodes } from '../../io/runtime.js';
import { describeEngineError, isStatus } from '../docker/engine-errors.js';
import { LABELS } from '../docker/lobby-spec.js';
import { DRAIN_LABEL } from './service-spec.js';
import { nodeFacts, type RawNode, type RawTask } from './swarm-state.js';

/** A node as `GET /nodes/{id}` gives it, as far as a label update needs it. */
interface InspectedNode {
  readonly ID: string;
  readonly Version: { readonly Index: number };
  readonly Spec: { readonly Labels?: Readonly<Record<string, string>> } & Record<string, unknown>;
}

/** Label updates tried at most (another writer may update the node between read and write). */
const UPDATE_TRIES = 3;

/**
 * @example
 * const nodes = new SwarmNodes(connectDocker('unix:///var/run/docker.sock'));
 * await nodes.setDrain('worker-2', true); // { name: 'worker-2', drained: true, accepting: false, lobbies: 3, … }
 */
export class SwarmNodes implements ClusterNodes {
  readonly #docker: Dockerode;

  constructor(docker: Dockerode) {
    this.#docker = docker;
  }

  async list(): Promise<readonly ClusterNode[]> {
    try {
      const [nodes, tasks] = await Promise.all([
        this.#docker.listNodes() as Promise<RawNode[]>,
        this.#docker.listTasks({ filters: { label: [LABELS.lobby], 'desired-state': ['running'] } }) as Promise<RawTask[]>,
      ]);
      const running = new Map<string, number>();
      for (const t of tasks) if (t.NodeID !== undefined && t.Status?.State === 'running') running.set(t.NodeID, (running.get(t.NodeID) ?? 0) + 1);
      return nodeFacts(nodes).map((n) => ({ ...n, lobbies: running.get(n.id) ?? 0 })).sort((a, b) => a.name.localeCompare(b.name));
    } catch (error) {
      throw new Error(describeEngineError(error), { cause: error });
    }
  }

  async setDrain(node: string, drained: boolean): Promise<ClusterNode | undefined> {
    const id = (await this.list()).find((n) => n.id === node || n.name === node)?.id;
    if (id === undefined) return undefined;
    for (let tries = 1; ; tries += 1) {
      try {
        const current = (await this.#docker.getNode(id).inspect()) as InspectedNode;
        const labels: Record<string, string> = { ...current.Spec.Labels };
        if (drained) labels[DRAIN_LABEL] = 'true';
        else delete labels[DRAIN_LABEL];
        await this.#docker.getNode(id).update({ _query: { version: current.Version.Index }, _body: { ...current.Spec, Labels: labels } });
        break;
      } catch (error) {
        if (isStatus(error, 404)) return undefined;
        // "update out of sequence": the node changed since it was read; read it again.
        if (tries < UPDATE_TRIES && /out of sequence/i.test(describeEngineError(error))) continue;
        throw new Error(describeEngineError(error), { cause: error });
      }
    }
    return (await this.list()).find((n) => n.id === id);
  }
}
