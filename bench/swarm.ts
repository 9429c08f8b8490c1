/**
 * `npm run bench -- swarm [--json] [--rounds 10] [--cycles 1000] [--concurrency 8]
 * [--tier basic-1d16]`: on a real 3-node Docker Swarm (test/swarm/cluster.ts; root; each node its
 * own region), in one run:
 *
 * - a lobby started by Tavern's Swarm runtime → the first answer from its TCP port on its node,
 *   against a bare `service create` on the same node (the same image, the same host-mode port, a
 *   region constraint as Tavern's, nothing else), its task looked at every 20 ms until it runs →
 *   the first answer (ratio; goal ≤ 1.3×); against Tavern's own service spec made the same bare
 *   way (what Swarm costs for the hardening, limits and placement, without Tavern's code); and
 *   against the single-host Docker runtime (Tavern's `TAVERN_RUNTIME=docker` adapter on this
 *   machine's dockerd, the same image) → the first answer on 127.0.0.1. Round r runs on node
 *   r mod 3; rounds rotate which goes first; every probe starts once the task runs (see
 *   `firstAnswer`). Tavern's Swarm start is split into its steps (when the host claim, the
 *   service create and the task look that saw it run returned). The lobbies' tier (`--tier`,
 *   default the smallest, as in the runtime benchmark) caps their CPU: at 1/16 of a core the
 *   lobby's own start-up is throttled (≈ 0.1 s more than with no cap, on any runtime);
 * - `--cycles` lobby start/stop cycles going round the three nodes, `--concurrency` at a time:
 *   lobbies placed per second; then, once every lobby's end was reported, the services, host
 *   records, containers on the nodes and their published ports left over (leaks), and Tavern's
 *   live heap before, halfway and after (flat).
 */
import { loadavg } from 'node:os';
import Dockerode from 'dockerode';
import { DEFAULT_HARDENING } from '../src/adapters/docker/lobby-spec.js';
import { DockerRuntime } from '../src/adapters/docker/runtime.js';
import { MemoryCatalogStore } from '../src/adapters/memory/catalog.js';
import { SwarmRuntime } from '../src/adapters/swarm/runtime.js';
import { serviceSpec } from '../src/adapters/swarm/service-spec.js';
import type { RawTask } from '../src/adapters/swarm/swarm-state.js';
import type { StartLobby } from '../src/core/effects.js';
import { busyboxGameServer } from '../test/docker/images.js';
import { startCluster, type Cluster } from '../test/swarm/cluster.js';
import { importImage } from '../test/swarm/registry.js';
import { table } from './measure.js';
import { freePort, removeContainers } from './runtime-docker.js';
import { Calls, firstAnswer, liveHeapMb, timed } from './swarm-probe.js';
import { leftOnNodes, runCycles } from './swarm-cycles.js';

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** Each node its own region, so a round's Tavern lobby and bare service run on the same node, and the cycles go round the three. */
const REGIONS = ['n1', 'n2', 'n3'] as const;
const regionOf = (i: number): string => REGIONS[i % REGIONS.length] as string;

const lobbyOf = (port: number, region: string, tier: string): StartLobby => ({
  type: 'start-lobby', lobbyId: crypto.randomUUID(), namespaceId: 'bench', versionId: 'v', gameMode: 'default', region, tier,
  imageId: 'busybox', args: [], env: { PORT_DEFAULT: '7000' }, networkMode: 'bridge',
  ports: [{ label: 'default', protocol: 'tcp', proxy: 'game_guard', transport: 'tcp', publicPort: port, hostPort: port - 6_000, containerPort: 7000 }],
});

const option = (args: readonly string[], name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const arg = (args: readonly string[], name: string, fallback: number): number => Number(option(args, name) ?? fallback);

/** Which manager calls are timed: the start path's, and the task looks of starts apart from the poll's. */
const startCalls = (method: string, args: readonly unknown[]): string | undefined => {
  if (method === 'listTasks') return (args[0] as { filters?: { service?: unknown } } | undefined)?.filters?.service === undefined ? 'poll' : 'startLook';
  return ['listNodes', 'createService'].includes(method) ? method : undefined;
};

/** The node a bare service's task runs on, once it runs (its tasks looked at every 20 ms, as Tavern's start does). */
const runningOn = async (manager: Dockerode, serviceId: string): Promise<string> => {
  for (const deadline = performance.now() + 60_000; performance.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
    const task = ((await manager.listTasks({ filters: { service: [serviceId] } })) as RawTask[])[0];
    if (task?.Status?.State === 'running' && task.NodeID !== undefined) return task.NodeID;
  }
  throw new Error(`service ${serviceId}'s task did not run within 60 s`);
};

export async function swarmBench(args: readonly string[]): Promise<void> {
  const rounds = arg(args, '--rounds', 10);
  const cycles = arg(args, '--cycles', 1000);
  const concurrency = arg(args, '--concurrency', 8);
  const tier = option(args, '--tier') ?? 'basic-1d16';
  if (cycles > 3_999) throw new Error('--cycles: at most 3,999 (one port each, 28000..31998)');
  const loadBefore = loadavg()[0] ?? NaN;
  const host = new Dockerode();
  const cluster: Cluster = await startCluster({ nodes: 3, regions: Object.fromEntries(REGIONS.map((r, i) => [r, [i + 1]])) });
  const instanceId = `bench-${process.pid}`;
  const dockerInstance = `bench-docker-${process.pid}`;
  const localImage = `tavern-bench-busybox:${process.pid}`;
  try {
    const source = await busyboxGameServer(host);
    const image = (await cluster.pushImage(localImage, source)).pinned;
    await importImage(host, localImage, source);
    const calls = new Calls();
    const manager = timed(cluster.manager.docker, calls, startCalls);
    const catalog = new MemoryCatalogStore();
    let claimedAt = NaN;
    const hosting = {
      instanceId, logs: { write: () => Promise.resolve() }, stopGraceMs: 2_000, clock: { now: () => Date.now() },
      hosts: {
        claimLobbyHost: async (...a: Parameters<MemoryCatalogStore['claimLobbyHost']>) => {
          const claim = await catalog.claimLobbyHost(...a);
          claimedAt = performance.now();
          return claim;
        },
        releaseLobbyHost: (lobbyId: string) => catalog.releaseLobbyHost(lobbyId),
      },
    };
    const apiOrigin = `http://${cluster.layout.hostAddress}:9`;
    const runtime = new SwarmRuntime({ ...hosting, docker: manager, images: { ensure: () => Promise.resolve(image) }, apiOrigin });
    const exits: string[] = [];
    runtime.attach({ exited: (_ns, _id, reason) => exits.push(reason) });
    await runtime.health();
    const docker = new DockerRuntime({
      ...hosting, instanceId: dockerInstance, hosts: new MemoryCatalogStore(), docker: host, images: { ensure: () => Promise.resolve(localImage) },
      apiOrigin: { bridge: 'http://127.0.0.1:9', host: 'http://127.0.0.1:9' },
    });
    await docker.lobbyNetwork();
    const bareRunning: number[] = [];
    const specRunning: number[] = [];
    const steps = { claim: [] as number[], create: [] as number[], running: [] as number[], start: [] as number[], looks: [] as number[] };
    const answered = { swarm: [] as number[], bare: [] as number[], spec: [] as number[], docker: [] as number[] };
    let port = 27_000;
    const viaSwarm = async (region: string): Promise<void> => {
      const lobby = lobbyOf(++port, region, tier);
      const looks = calls.count('startLook');
      const t0 = performance.now();
      await runtime.start(lobby);
      steps.start.push(performance.now() - t0);
      steps.claim.push(claimedAt - t0);
      steps.create.push(calls.since('createService', t0));
      steps.running.push(calls.since('startLook', t0));
      steps.looks.push(calls.count('startLook') - looks);
      answered.swarm.push(await firstAnswer(t0, runtime.addressOf(lobby.lobbyId) ?? '', port));
      await runtime.stop({ type: 'stop-lobby', lobbyId: lobby.lobbyId, region, reason: 'requested', force: false });
    };
    /** A service made straight through the manager → its task runs (looked at every 20 ms) → the first answer on its node; then removed. */
    const viaService = async (spec: Dockerode.ServiceSpec, p: number, running: number[], firsts: number[]): Promise<void> => {
      const t0 = performance.now();
      const service = await cluster.manager.docker.createService(spec);
      const nodeId = await runningOn(cluster.manager.docker, service.id);
      running.push(performance.now() - t0);
      firsts.push(await firstAnswer(t0, cluster.nodes.find((n) => n.id === nodeId)?.address ?? '', p));
      await cluster.manager.docker.getService(service.id).remove();
    };
    const viaBare = async (region: string): Promise<void> => {
      const p = ++port;
      await viaService({
        Name: `bench-bare-${p}`,
        TaskTemplate: { ContainerSpec: { Image: image, Env: ['PORT_DEFAULT=7000'] }, RestartPolicy: { Condition: 'none' }, Placement: { Constraints: [`node.labels.tavern.region == ${region}`] } },
        EndpointSpec: { Ports: [{ Protocol: 'tcp', TargetPort: 7000, PublishedPort: p, PublishMode: 'host' }] },
      }, p, bareRunning, answered.bare);
    };
    /** Tavern's own service spec (hardening, limits, labels, placement), made bare: what Swarm costs for it, without Tavern's code. */
    const viaSpec = async (region: string): Promise<void> => {
      const lobby = lobbyOf(++port, region, tier);
      const spec = serviceSpec({ ...lobby, env: { ...lobby.env, RIVET_API_ENDPOINT: apiOrigin } }, { image, instanceId: `bench-spec-${process.pid}`, hardening: DEFAULT_HARDENING, stopGraceMs: hosting.stopGraceMs });
      await viaService(spec, port, specRunning, answered.spec);
    };
    const viaDocker = async (): Promise<void> => {
      const lobby = lobbyOf(await freePort(26_000, 31_999), 'local', tier);
      const p = lobby.ports[0]?.publicPort ?? 0;
      const t0 = performance.now();
      await docker.start(lobby);
      answered.docker.push(await firstAnswer(t0, '127.0.0.1', p));
      await docker.stop({ type: 'stop-lobby', lobbyId: lobby.lobbyId, region: lobby.region, reason: 'requested', force: true });
    };
    const order = [viaSwarm, viaBare, viaSpec, viaDocker];
    for (let r = 0; r < rounds; r++) for (let i = 0; i < order.length; i++) await (order[(r + i) % order.length] as (region: string) => Promise<void>)(regionOf(r));
    const cycled = await runCycles({ runtime, cycles, concurrency, calls, lobbyOf: (c) => lobbyOf(28_000 + c, regionOf(c), tier), heapMb: liveHeapMb });
    const left = {
      left_services: (await cluster.manager.docker.listServices({ filters: { label: [`tavern.instance=${instanceId}`] } })).length,
      left_host_records: (await catalog.lobbyHosts(instanceId)).length,
      ...(await leftOnNodes(cluster, instanceId)),
    };
    runtime.close();
    const result = {
      rounds, cycles, concurrency, tier, load_1m_before: loadBefore, load_1m_after: loadavg()[0] ?? NaN,
      swarm_first_answer_s: median(answered.swarm), bare_service_first_answer_s: median(answered.bare), ratio_swarm_to_bare: median(answered.swarm) / median(answered.bare),
      spec_service_first_answer_s: median(answered.spec), ratio_swarm_to_spec: median(answered.swarm) / median(answered.spec),
      docker_first_answer_s: median(answered.docker), ratio_swarm_to_docker: median(answered.swarm) / median(answered.docker),
      swarm_claimed_ms: median(steps.claim), swarm_service_created_ms: median(steps.create), swarm_running_seen_ms: median(steps.running), swarm_started_ms: median(steps.start),
      swarm_task_looks_per_start: median(steps.looks), bare_running_seen_ms: median(bareRunning), spec_running_seen_ms: median(specRunning),
      ...cycled,
      exits_reported: exits.length, exits_not_exited: exits.filter((e) => e !== 'exited').length,
      ...left,
    };
    if (args.includes('--json')) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      const rows = Object.entries(result).map(([k, v]) => [k, typeof v === 'string' || Number.isInteger(v) ? String(v) : v.toFixed(3)]);
      process.stdout.write(`${table(['figure', 'value'], rows)}\n`);
    }
  } finally {
    await removeContainers(host, [dockerInstance]).catch(() => 0);
    await host.getImage(localImage).remove().catch(() => undefined);
    await cluster.stop();
  }
}
