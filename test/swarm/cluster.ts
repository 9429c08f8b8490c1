/**
 * A real Docker Swarm of several nodes on this one machine, for the Swarm runtime's tests: each
 * node a network namespace with a dockerd of its own (daemon.ts), all on a private bridge
 * (network.ts), node 1 the manager, every node labelled with its region and public address, and
 * an image registry on the host's bridge address (registry.ts). `stop()` removes all of it, and
 * starting removes what a killed run left (teardown.ts, slot.ts). Root only; see swarmProblem.
 */
import { join } from 'node:path';
import type Dockerode from 'dockerode';
import { eventually } from '../wait.js';
import { swarmNode, swarmNodes } from './api.js';
import { engineOf, socketOf, startDaemon, stopDaemon, type DaemonSpec } from './daemon.js';
import { createNetwork, layout, MAX_NODES, setLink, type Layout } from './network.js';
import { pushImage, startRegistry, type ImageSource, type PushedImage } from './registry.js';
import { takeSlot } from './slot.js';
import { teardown } from './teardown.js';

/** The node label naming a node's region (Tavern's region id). */
export const REGION_LABEL = 'tavern.region';
/** The node label giving the address players reach a node's host-mode ports at. */
export const ADDRESS_LABEL = 'tavern.public-address';

/** @example { nodes: 3, regions: { lnd: [1, 2], fra: [3] } } */
export interface ClusterOptions {
  /** How many nodes (1 to 9); node 1 is the manager, the others workers. */
  readonly nodes: number;
  /** Each region's nodes (numbers from 1); every node in exactly one. Default: all in `local`. */
  readonly regions?: Readonly<Record<string, readonly number[]>>;
}

/** One node of the cluster. */
export interface ClusterNode {
  /** 1 to the number of nodes. */
  readonly number: number;
  /** Its name and hostname (`tvswarm0-n1`). */
  readonly name: string;
  /** Its address on the cluster's network, where its host-mode ports answer. */
  readonly address: string;
  /** Its Engine API socket. */
  readonly socket: string;
  readonly docker: Dockerode;
  readonly region: string;
  /** Its Swarm node id. */
  readonly id: string;
}

/** A running cluster. */
export interface Cluster {
  readonly layout: Layout;
  readonly nodes: readonly ClusterNode[];
  readonly manager: ClusterNode;
  /** The registry's `host:port` (plain HTTP), which every node trusts. */
  readonly registry: string;
  /** How long each step took (ms): slot, network, engines, swarm init, swarm join, nodes ready, labels; then teardown. */
  readonly timings: Readonly<Record<string, number>>;
  /** Node `n` (from 1). */
  node(n: number): ClusterNode;
  /** Pushes an image built from `image`'s files to the registry (through the manager's engine). */
  pushImage(name: string, image: ImageSource): Promise<PushedImage>;
  /** Stops node `n`'s dockerd (SIGKILL: a crash, its containers keep running) and waits until it has exited. */
  stopNode(n: number, signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts node `n`'s dockerd again (same state; stopped first with SIGTERM if it runs) and waits until it answers. */
  startNode(n: number): Promise<void>;
  /** Cuts (`down`) or restores (`up`) node `n`'s only network link. */
  setLink(n: number, state: 'up' | 'down'): Promise<void>;
  /** Removes everything; idempotent, and safe after any failure. */
  stop(): Promise<void>;
}

/** The region of each node (index 0: node 1), or a thrown error naming what is wrong. */
const regionsOf = (options: ClusterOptions): string[] => {
  const { nodes } = options;
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > MAX_NODES) throw new Error(`nodes must be an integer from 1 to ${MAX_NODES}, not ${nodes}`);
  const regions = options.regions ?? { local: Array.from({ length: nodes }, (_, i) => i + 1) };
  const of: (string | undefined)[] = Array.from({ length: nodes }, () => undefined);
  for (const [region, members] of Object.entries(regions)) {
    for (const n of members) {
      if (!Number.isInteger(n) || n < 1 || n > nodes) throw new Error(`regions.${region}: node ${n} is not one of 1..${nodes}`);
      if (of[n - 1] !== undefined) throw new Error(`regions.${region}: node ${n} is already in ${of[n - 1]}`);
      of[n - 1] = region;
    }
  }
  const missing = of.flatMap((r, i) => (r === undefined ? [i + 1] : []));
  if (missing.length > 0) throw new Error(`regions: nodes ${missing.join(', ')} are in no region`);
  return of as string[];
};

/** Resolves with `work`'s result, or with undefined once `ms` have passed (a bound on a best-effort step). */
const bounded = async <T>(ms: number, work: Promise<T>): Promise<T | undefined> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([work.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
};

/** Waits for every one of `works` to settle (so none is still starting something), then rejects with the first failure. */
const allSettled = async (works: readonly Promise<unknown>[]): Promise<void> => {
  const failed = (await Promise.allSettled(works)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
};

/**
 * Builds and starts a cluster of `options.nodes` nodes, node 1 the manager, each labelled
 * `tavern.region` and `tavern.public-address`, and the registry. On any failure everything built
 * so far is removed before the error is thrown.
 *
 * @example
 * const cluster = await startCluster({ nodes: 3, regions: { lnd: [1, 2], fra: [3] } });
 * try { … } finally { await cluster.stop(); }
 */
export const startCluster = async (options: ClusterOptions): Promise<Cluster> => {
  const regions = regionsOf(options);
  const timings: Record<string, number> = {};
  const step = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const value = await work();
    timings[name] = Math.round(performance.now() - t);
    return value;
  };
  const slot = await step('slot', () => takeSlot((index) => teardown(layout(index))));
  const l = layout(slot.index);
  const specs: DaemonSpec[] = regions.map((_, i) => ({ name: l.node(i + 1), dir: join(l.dir, l.node(i + 1)), registry: l.registry }));
  const engines = specs.map(engineOf);
  const pids = new Map<number, number>();
  const specOf = (n: number): DaemonSpec => {
    const spec = specs[n - 1];
    if (spec === undefined) throw new Error(`there is no node ${n} (nodes 1..${specs.length})`);
    return spec;
  };

  /** Best effort, each step bounded: services removed, every node leaves the swarm, every dockerd stopped. */
  const wind = async (): Promise<void> => {
    const manager = engines[0] as Dockerode;
    const services = ((await bounded(10_000, manager.listServices())) ?? []) as unknown as { ID: string }[];
    await bounded(15_000, Promise.all(services.map((s) => manager.getService(s.ID).remove())));
    await bounded(15_000, Promise.all(engines.slice(1).map((e) => e.swarmLeave({ force: true }))));
    await bounded(15_000, manager.swarmLeave({ force: true }));
    await Promise.all([...pids].map(([n, pid]) => stopDaemon(specOf(n), pid, 'SIGTERM', 20_000).catch(() => undefined)));
  };
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= step('teardown', async () => {
      try {
        await wind();
      } finally {
        try {
          await teardown(l);
        } finally {
          await slot.release();
        }
      }
    }));

  try {
    await step('network', () => createNetwork(l, specs.length));
    await step('engines', () => allSettled([
      startRegistry(join(l.dir, 'registry'), l.registry),
      ...specs.map(async (spec, i) => pids.set(i + 1, await startDaemon(spec))),
    ]));
    const manager = engines[0] as Dockerode;
    const managerAddress = `${l.address(1)}:2377`;
    await step('swarm init', () => manager.swarmInit({ ListenAddr: managerAddress, AdvertiseAddr: l.address(1) }));
    const { JoinTokens } = (await manager.swarmInspect()) as { JoinTokens: { Worker: string } };
    await step('swarm join', () => allSettled(engines.slice(1).map((engine, i) =>
      engine.swarmJoin({ ListenAddr: `${l.address(i + 2)}:2377`, AdvertiseAddr: l.address(i + 2), RemoteAddrs: [managerAddress], JoinToken: JoinTokens.Worker }))));
    const ids = await step('nodes ready', () => eventually('every node to be Ready in the manager', async () => {
      const nodes = await swarmNodes(manager);
      const ready = specs.map((spec) => nodes.find((n) => n.Description.Hostname === spec.name && n.Status.State === 'ready')?.ID);
      return ready.every((id) => id !== undefined) ? ready : undefined;
    }, { timeoutMs: 60_000 }));
    await step('labels', () => Promise.all(ids.map(async (id, i) => {
      const node = await swarmNode(manager, id);
      const Labels = { ...node.Spec.Labels, [REGION_LABEL]: regions[i] as string, [ADDRESS_LABEL]: l.address(i + 1) };
      await manager.getNode(id).update({ _query: { version: node.Version.Index }, _body: { ...node.Spec, Labels } });
    })));
    const nodes = specs.map((spec, i): ClusterNode => ({
      number: i + 1, name: spec.name, address: l.address(i + 1), socket: socketOf(spec), docker: engines[i] as Dockerode, region: regions[i] as string, id: ids[i] as string,
    }));
    const node = (n: number): ClusterNode => {
      specOf(n);
      return nodes[n - 1] as ClusterNode;
    };
    return {
      layout: l, nodes, manager: node(1), registry: l.registry, timings, node, stop,
      pushImage: (name, image) => pushImage(manager, l.registry, name, image),
      async stopNode(n, signal = 'SIGTERM') {
        const pid = pids.get(n);
        if (pid !== undefined) await stopDaemon(specOf(n), pid, signal);
      },
      async startNode(n) {
        const pid = pids.get(n);
        if (pid !== undefined) await stopDaemon(specOf(n), pid, 'SIGTERM');
        pids.set(n, await startDaemon(specOf(n)));
      },
      setLink: (n, state) => setLink(l, node(n).number, state),
    };
  } catch (e) {
    await stop();
    throw e;
  }
};
