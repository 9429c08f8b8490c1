/**
 * What the Swarm runtime's tests share: the game servers pushed to the cluster's registry (by the
 * build id a lobby names), a lobby of a region, a log sink that keeps lines, and a lobby's
 * container found on the node that runs it. Test helpers.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import type Dockerode from 'dockerode';
import type { StartLobby } from '../../src/core/effects.js';
import type { LogLine, LogStream } from '../../src/io/catalog.js';
import { docker as hostDocker } from '../docker/engine.js';
import { busyboxGameServer, nodeGameServer } from '../docker/images.js';
import { serviceTasks } from './api.js';
import type { Cluster, ClusterNode } from './cluster.js';

/** The build id of the busybox game server (TCP echo on $PORT_DEFAULT), and of the node one (UDP and TCP echo). */
export const BUSYBOX = 'busybox';
export const NODE = 'node';

/**
 * Pushes the game servers to the cluster's registry; each build id's pinned reference (`ref@digest`).
 *
 * @example
 * const images = await pushGameServers(cluster, { node: true }); // Map { 'busybox' => '10.77.0.1:5000/tavern-busybox:…@sha256:…', … }
 */
export const pushGameServers = async (cluster: Cluster, options: { readonly node?: boolean } = {}): Promise<Map<string, string>> => {
  const images = new Map<string, string>();
  const busybox = await busyboxGameServer(hostDocker);
  images.set(BUSYBOX, (await cluster.pushImage(`tavern-busybox:${busybox.key}`, busybox)).pinned);
  if (options.node === true) {
    const node = await nodeGameServer(hostDocker);
    images.set(NODE, (await cluster.pushImage(`tavern-node:${node.key}`, node)).pinned);
  }
  return images;
};

/**
 * A lobby of `region` running the busybox game server, its TCP port published on a proxied port.
 *
 * @example
 * await runtime.start(lobbyOf('lnd'));
 */
export const lobbyOf = (region: string, over: Partial<StartLobby> = {}, publicPort = 26_000 + Math.floor(Math.random() * 6_000)): StartLobby => ({
  type: 'start-lobby', lobbyId: randomUUID(), namespaceId: 'ns', versionId: 'v', gameMode: 'default', region, tier: 'basic-1d16',
  imageId: BUSYBOX, args: [], env: { PORT_DEFAULT: '7000' }, networkMode: 'bridge',
  ports: [{ label: 'default', protocol: 'tcp', proxy: 'game_guard', transport: 'tcp', publicPort, hostPort: 20_000 + Math.floor(Math.random() * 6_000), containerPort: 7000 }],
  ...over,
});

/** A log sink that keeps every line. */
export class Lines {
  readonly lines: { lobbyId: string; stream: LogStream; line: string }[] = [];
  write(lobbyId: string, stream: LogStream, lines: readonly LogLine[]): Promise<void> {
    for (const l of lines) this.lines.push({ lobbyId, stream, line: l.line });
    return Promise.resolve();
  }
  of(lobbyId: string, stream?: LogStream): string[] {
    return this.lines.filter((l) => l.lobbyId === lobbyId && (stream === undefined || l.stream === stream)).map((l) => l.line);
  }
}

/** A lobby's container: the node and its engine, the container id, and whether its task runs. */
export interface TaskContainer {
  readonly node: ClusterNode;
  readonly engine: Dockerode;
  readonly id: string;
  readonly running: boolean;
}

/**
 * The container of lobby `lobbyId`'s task, on its node, or undefined (no service, or no container yet).
 *
 * @example
 * const c = await taskContainer(cluster, lobby.lobbyId); await c?.engine.getContainer(c.id).kill();
 */
export const taskContainer = async (cluster: Cluster, lobbyId: string): Promise<TaskContainer | undefined> => {
  const tasks = await serviceTasks(cluster.manager.docker, `tavern-${lobbyId}`).catch(() => []);
  const task = tasks.find((t) => t.Status.State === 'running') ?? tasks[0];
  const node = cluster.nodes.find((n) => n.id === task?.NodeID);
  const id = (task?.Status as { ContainerStatus?: { ContainerID?: string } } | undefined)?.ContainerStatus?.ContainerID;
  if (task === undefined || node === undefined || id === undefined) return undefined;
  return { node, engine: node.docker, id, running: task.Status.State === 'running' };
};

/**
 * What the TCP server at `host:port` answers first to `text`, or undefined while nothing answers
 * (each try bounded by a 1 s timeout): for polling with a deadline.
 *
 * @example
 * await eventually('the echo', () => tcpAsk(node.address, port, 'hello\n')); // 'hello\n'
 */
export const tcpAsk = (host: string, port: number, text: string): Promise<string | undefined> =>
  new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 1_000 }, () => socket.write(text));
    socket.once('data', (d) => {
      socket.destroy();
      resolve(d.toString());
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', () => resolve(undefined));
  });
