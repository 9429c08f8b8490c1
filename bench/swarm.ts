/**
 * `npm run bench -- swarm [--json] [--rounds 10] [--cycles 1000]`: on a real 3-node Docker Swarm
 * (test/swarm/cluster.ts; root), in one run: a lobby started by Tavern's Swarm runtime → the first
 * answer from its TCP port on its node, against a bare `service create` (the same image, the same
 * host-mode port, nothing else) → the first answer (ratio; goal ≤ 1.3×); then `--cycles` lobby
 * start/stop cycles across the nodes (placed per second, services and host records left over,
 * Tavern's heap before and after). Rounds alternate which goes first.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import Dockerode from 'dockerode';
import { MemoryCatalogStore } from '../src/adapters/memory/catalog.js';
import { SwarmRuntime } from '../src/adapters/swarm/runtime.js';
import type { StartLobby } from '../src/core/effects.js';
import { busyboxGameServer } from '../test/docker/images.js';
import { startCluster, type Cluster } from '../test/swarm/cluster.js';
import { table } from './measure.js';

const answers = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 500 }, () => socket.write('ping\n'));
    socket.once('data', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });

/** Seconds until one of `hosts` answers on `port` (polled every 20 ms, at most 60 s). */
const firstAnswer = async (t0: number, hosts: readonly string[], port: number): Promise<number> => {
  for (;;) {
    for (const h of hosts) if (await answers(h, port)) return (performance.now() - t0) / 1000;
    if (performance.now() - t0 > 60_000) throw new Error(`nothing answered on port ${port} within 60 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const lobbyOf = (port: number): StartLobby => ({
  type: 'start-lobby', lobbyId: randomUUID(), namespaceId: 'bench', versionId: 'v', gameMode: 'default', region: 'local', tier: 'basic-1d16',
  imageId: 'busybox', args: [], env: { PORT_DEFAULT: '7000' }, networkMode: 'bridge',
  ports: [{ label: 'default', protocol: 'tcp', proxy: 'game_guard', transport: 'tcp', publicPort: port, hostPort: port - 6_000, containerPort: 7000 }],
});

const arg = (args: readonly string[], name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};

export async function swarmBench(args: readonly string[]): Promise<void> {
  const rounds = arg(args, '--rounds', 10);
  const cycles = arg(args, '--cycles', 1000);
  const cluster: Cluster = await startCluster({ nodes: 3 });
  try {
    const image = (await cluster.pushImage(`tavern-bench-busybox:${process.pid}`, await busyboxGameServer(new Dockerode()))).pinned;
    const catalog = new MemoryCatalogStore();
    const exits: string[] = [];
    const runtime = new SwarmRuntime({
      docker: cluster.manager.docker, instanceId: `bench-${process.pid}`, hosts: catalog, logs: { write: () => Promise.resolve() },
      images: { ensure: () => Promise.resolve(image) }, apiOrigin: `http://${cluster.layout.hostAddress}:9`, stopGraceMs: 2_000, clock: { now: () => Date.now() },
    });
    runtime.attach({ exited: (_ns, id) => exits.push(id) });
    await runtime.health();
    const hosts = cluster.nodes.map((n) => n.address);
    const tavern: number[] = [];
    const bare: number[] = [];
    let port = 27_000;
    const viaTavern = async (): Promise<void> => {
      const lobby = lobbyOf(++port);
      const t0 = performance.now();
      await runtime.start(lobby);
      tavern.push(await firstAnswer(t0, [runtime.addressOf(lobby.lobbyId) ?? hosts[0] ?? ''], port));
      await runtime.stop({ type: 'stop-lobby', lobbyId: lobby.lobbyId, region: 'local', reason: 'requested', force: false });
    };
    const viaBare = async (): Promise<void> => {
      const p = ++port;
      const t0 = performance.now();
      const service = await cluster.manager.docker.createService({
        Name: `bench-bare-${p}`,
        TaskTemplate: { ContainerSpec: { Image: image, Env: ['PORT_DEFAULT=7000'] }, RestartPolicy: { Condition: 'none' } },
        EndpointSpec: { Ports: [{ Protocol: 'tcp', TargetPort: 7000, PublishedPort: p, PublishMode: 'host' }] },
      });
      bare.push(await firstAnswer(t0, hosts, p));
      await cluster.manager.docker.getService(service.id).remove();
    };
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        await viaTavern();
        await viaBare();
      } else {
        await viaBare();
        await viaTavern();
      }
    }
    const heapBefore = process.memoryUsage().heapUsed;
    const t0 = performance.now();
    for (let c = 0; c < cycles; c++) {
      const lobby = lobbyOf(28_000 + (c % 3_000));
      await runtime.start(lobby);
      await runtime.stop({ type: 'stop-lobby', lobbyId: lobby.lobbyId, region: 'local', reason: 'requested', force: false });
    }
    const placed = cycles / ((performance.now() - t0) / 1000);
    const deadline = performance.now() + 60_000;
    while (runtime.watching().length > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const leftServices = (await cluster.manager.docker.listServices({ filters: { label: [`tavern.instance=bench-${process.pid}`] } })).length;
    const leftHosts = (await catalog.lobbyHosts(`bench-${process.pid}`)).length;
    const heapAfter = process.memoryUsage().heapUsed;
    runtime.close();
    const result = {
      rounds, cycles,
      tavern_first_answer_s: median(tavern), bare_service_first_answer_s: median(bare), ratio: median(tavern) / median(bare),
      cycles_per_s: placed, left_services: leftServices, left_host_records: leftHosts, still_watched: runtime.watching().length,
      heap_before_mb: heapBefore / 2 ** 20, heap_after_mb: heapAfter / 2 ** 20,
    };
    if (args.includes('--json')) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      const rows = Object.entries(result).map(([k, v]) => [k, Number.isInteger(v) ? String(v) : v.toFixed(3)]);
      process.stdout.write(`${table(['figure', 'value'], rows)}\n`);
    }
  } finally {
    await cluster.stop();
  }
}
