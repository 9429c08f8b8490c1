/**
 * `npm run bench -- runtime [--json] [--parts cold,data,scale] [--lobbies 20] [--rounds 30]
 * [--slice 100] [--clients 1,16] [--nice -10] [--no-nice] [--pin] [--idle 200]
 * [--scale-bare 20] [--scale-timeout 420000]`:
 * lobbies as real Docker containers, on the engine at `DOCKER_HOST` (default the local socket),
 * through a real Tavern server process (compiled, `TAVERN_RUNTIME=docker`, SQLite in a temporary
 * data dir, its own `TAVERN_INSTANCE_ID`), each figure next to a baseline measured in the same run.
 *
 * - **cold** (a): a find that must create a lobby of the node game server image (it binds UDP and
 *   TCP echoes, then calls `lobbies/ready`), timed until the client's first UDP echo on the
 *   returned port; versus the same image started bare through the Engine API (dockerode
 *   create + start, the very create body Tavern sends: same hardening, limits and 127.0.0.1
 *   port binding) and the same wait for the first echo. `--lobbies` of each, alternating, each
 *   stopped (and gone) before the next; one unmeasured warm-up each first (it loads the build).
 *   Goal: Tavern ≤ 1.2× bare, median and p95.
 * - **data** (b): UDP and TCP round trips per second of 100-byte messages, `--clients` sockets
 *   each with one message in flight, through the proxied port find returned (127.0.0.1), straight
 *   to the container's bridge address, and to the same game server program run as a host process
 *   (no container). Sockets to the three stay open; after a warm-up, `--rounds` windows of
 *   `--slice` ms each per path (3 s by default), the three interleaved in short windows (on a
 *   shared machine the speed moves within seconds); ratios to the container's address per round
 *   (median). The load generator is a separate process; as root it
 *   runs at `--nice` (default -10, `--no-nice` leaves it be) so it keeps up on a busy machine;
 *   `--pin` puts it on CPU 0 and both echo servers on CPU 1 (`taskset`). Each run reports its CPU
 *   use and the echo server's, so a saturated generator or server shows. The engine's
 *   userland-proxy mode is printed (its dockerd's flags, and whether a `docker-proxy` serves the
 *   port).
 *   Goal: ≥ 0.9 of direct with `--userland-proxy=false`.
 * - **scale** (c): on a restarted Tavern (same data dir), a version keeping `--idle` idle lobbies
 *   of the busybox game server (tier basic-1d16; at most 16 per game mode, so spread over
 *   ⌈idle/16⌉ modes) is published; the time until live analytics shows them all `is_ready` gives
 *   lobbies started per minute; Tavern's RSS (VmRSS, median of 5 samples) with none and with all
 *   of them running; then a version with none, and the time until every container is gone. The
 *   baseline: `--scale-bare` (default 20) of the same containers created and started one after
 *   another through the Engine API until each TCP echo answers, against the time Tavern took to
 *   have that many ready.
 *
 * Everything the bench starts is removed at the end, also on failure or Ctrl-C: the containers of
 * both instance labels, the loaded build images, the server, the host echo, the data dir.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type Dockerode from 'dockerode';
import { connectDocker, detectUserlandProxy, type UserlandProxy } from '../src/adapters/docker/engine.js';
import { DEFAULT_LOBBY_NETWORK, ensureLobbyNetwork } from '../src/adapters/docker/lobby-network.js';
import { percentiles } from '../src/sim/engine/stats.js';
import { busyboxGameServer, GAME_SERVER_JS, nodeGameServer } from '../test/docker/images.js';
import { canPin, cpuSeconds, pinProcess, spawnServer, type ServerChild } from './http-child.js';
import { call, createGame, LOBBY_COUNT_MAX, MAX_PLAYERS_PER_CLIENT, publicToken, publishVersion, setLimits, spawnTavern, str, uploadBuild, type BenchGame, type Json, type TavernProcess } from './http-tavern.js';
import { fmtRate, intArg, table, value } from './measure.js';
import { bareSpec, containerAddress, containerPid, containersOf, dockerProxyServes, freePort, idleSplit, removeContainers, residentBytes, waitGone } from './runtime-docker.js';
import type { LoadPlan, PlannedRun, Protocol } from './runtime-load.js';
import { firstTcpEcho, firstUdpEcho } from './runtime-probe.js';

const COLD_GOAL = 1.2;
const DATA_GOAL = 0.9;
const MESSAGE_BYTES = 100;
const PORT_MIN = 26_000;
const PORT_MAX = 31_999;
const UDP_LABEL = 'game-udp';
const TCP_LABEL = 'game-tcp';
const UDP_PORT = 7777;
const TCP_PORT = 7778;
const COLD_TIER = 'basic-1d1';
const SCALE_TIER = 'basic-1d16';
const LOAD_JS = fileURLToPath(new URL('./runtime-load.js', import.meta.url));

type Part = 'cold' | 'data' | 'scale';
const PARTS: readonly Part[] = ['cold', 'data', 'scale'];

interface Settings {
  readonly json: boolean;
  readonly parts: ReadonlySet<Part>;
  readonly lobbies: number;
  readonly rounds: number;
  readonly sliceMs: number;
  readonly clients: readonly number[];
  readonly idle: number;
  readonly scaleTimeoutMs: number;
  /** Containers of the scale part's bare baseline (0: none). */
  readonly scaleBare: number;
  readonly pin: boolean;
  /** The nice value of the data part's load generator (undefined: left as it is). */
  readonly nice?: number;
}

const parseSettings = (args: readonly string[]): Settings => {
  const parts = (value(args, '--parts') ?? PARTS.join(',')).split(',').map((p) => {
    if (!(PARTS as readonly string[]).includes(p)) throw new RangeError(`--parts lists ${PARTS.join(', ')}; got ${p}`);
    return p as Part;
  });
  const clients = (value(args, '--clients') ?? '1,16').split(',').map((c) => {
    const n = Number(c);
    if (!Number.isInteger(n) || n < 1 || n > 256) throw new RangeError(`--clients lists integers in [1, 256], got ${c}`);
    return n;
  });
  const idle = intArg(args, '--idle', 200, 1, 512);
  idleSplit(idle);
  return {
    json: args.includes('--json'),
    parts: new Set(parts),
    lobbies: intArg(args, '--lobbies', 20, 1, 1000),
    rounds: intArg(args, '--rounds', 30, 1, 200),
    sliceMs: intArg(args, '--slice', 100, 20, 60_000),
    clients,
    idle,
    scaleTimeoutMs: intArg(args, '--scale-timeout', 420_000, 1000, 3_600_000),
    scaleBare: Math.min(idle, intArg(args, '--scale-bare', 20, 0, 512)),
    pin: args.includes('--pin'),
    ...(args.includes('--no-nice') ? {} : { nice: intArg(args, '--nice', -10, -20, 19) }),
  };
};

/** Tasks run in reverse order of registration, once, also on SIGINT/SIGTERM. */
class Cleanup {
  readonly #tasks: { what: string; run: () => Promise<unknown> }[] = [];
  readonly #warn: (line: string) => void;

  constructor(warn: (line: string) => void) {
    this.#warn = warn;
  }

  add(what: string, run: () => Promise<unknown>): void {
    this.#tasks.push({ what, run });
  }

  async run(): Promise<void> {
    for (const task of this.#tasks.splice(0).reverse()) {
      await task.run().catch((e: unknown) => this.#warn(`cleanup: ${task.what} failed: ${e instanceof Error ? e.message : String(e)}`));
    }
  }
}

/** Everything a part needs. */
interface World {
  readonly s: Settings;
  readonly docker: Dockerode;
  readonly tavern: TavernProcess;
  readonly instance: string;
  readonly bareInstance: string;
  readonly game: BenchGame;
  readonly player: string;
  readonly log: (line: string) => void;
}

interface Found {
  readonly lobbyId: string;
  readonly host: string;
  readonly udp: number;
  readonly tcp: number;
}

const portOf = (body: Json, label: string): { hostname: string; port: number } => {
  const p = (body['ports'] as Record<string, { hostname?: unknown; port?: unknown }> | undefined)?.[label];
  if (typeof p?.port !== 'number' || typeof p.hostname !== 'string') throw new Error(`find: no ${label} port in ${JSON.stringify(body['ports'])}`);
  return { hostname: p.hostname, port: p.port };
};

const find = async (w: World): Promise<Found> => {
  const body = await call(w.tavern.origin, 'POST', '/matchmaker/lobbies/find', w.player, { game_modes: ['default'] });
  const udp = portOf(body, UDP_LABEL);
  return { lobbyId: str((body['lobby'] as Json | undefined)?.['lobby_id'], 'lobby.lobby_id'), host: udp.hostname, udp: udp.port, tcp: portOf(body, TCP_LABEL).port };
};

interface LiveLobby {
  readonly lobby_id: string;
  readonly is_ready: boolean;
}

const liveLobbies = async (w: World): Promise<LiveLobby[]> =>
  ((await call(w.tavern.origin, 'GET', `${w.game.nsPath}/analytics/matchmaker/live`, w.game.cloud))['lobbies'] as LiveLobby[] | undefined) ?? [];

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it returns true, for at most `timeoutMs`. */
const until = async (what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<void> => {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
};

/** Stops a lobby through the cloud API and waits until its container is gone and it left live analytics. */
const stopLobby = async (w: World, lobbyId: string): Promise<void> => {
  await call(w.tavern.origin, 'DELETE', `/cloud/games/${w.game.gameId}/matchmaker/lobbies/${lobbyId}`, w.game.cloud);
  await waitGone(w.docker, `tavern-${lobbyId}`);
  await until(`lobby ${lobbyId} to leave live analytics`, async () => !(await liveLobbies(w)).some((l) => l.lobby_id === lobbyId), 30_000);
};

const nodeVersion = (buildId: string): unknown => ({
  matchmaker: {
    regions: { local: { tier: COLD_TIER } },
    max_players: 8,
    docker: {
      image_id: buildId,
      env: { GAME_UDP_LABEL: UDP_LABEL, GAME_TCP_LABEL: TCP_LABEL },
      ports: { [UDP_LABEL]: { port: UDP_PORT, protocol: 'udp' }, [TCP_LABEL]: { port: TCP_PORT, protocol: 'tcp' } },
    },
    game_modes: { default: {} },
  },
});

interface Spread {
  readonly n: number;
  readonly median_ms: number;
  readonly p95_ms: number;
  readonly min_ms: number;
  readonly max_ms: number;
}

const spread = (values: readonly number[]): Spread => {
  const [median = NaN, p95 = NaN] = percentiles(values, [50, 95]);
  return { n: values.length, median_ms: median, p95_ms: p95, min_ms: Math.min(...values), max_ms: Math.max(...values) };
};

const median = (values: readonly number[]): number => percentiles(values, [50])[0] ?? NaN;

interface ColdResult {
  readonly lobbies: number;
  /** The unmeasured first find: it also loaded the build into the engine. */
  readonly first_find_ms: number;
  readonly tavern: Spread;
  /** Of Tavern's: until find answered (the lobby ready); the rest is the client's first echo. */
  readonly tavern_find: Spread;
  readonly bare: Spread;
  readonly ratio_median: number;
  readonly ratio_p95: number;
  readonly goal: number;
  readonly met: boolean;
}

/** One cold start through Tavern: find → first echo; then the lobby is stopped. */
const tavernCold = async (w: World): Promise<{ total: number; find: number; image: string; lobbyId: string }> => {
  const t0 = performance.now();
  const found = await find(w);
  const answered = performance.now();
  const echoed = await firstUdpEcho(found.host, found.udp);
  const image = (await w.docker.getContainer(`tavern-${found.lobbyId}`).inspect()).Config.Image;
  await stopLobby(w, found.lobbyId);
  return { total: echoed - t0, find: answered - t0, image, lobbyId: found.lobbyId };
};

/** One bare cold start: create + start → first echo on the published port; then removed. */
const bareCold = async (w: World, image: string): Promise<number> => {
  const [udp, tcp] = [await freePort(PORT_MIN, PORT_MAX), await freePort(PORT_MIN, PORT_MAX)];
  const spec = bareSpec({
    image, instanceId: w.bareInstance, tier: COLD_TIER,
    // The same game server; it has no Tavern to call, so it skips lobbies/ready (after binding its echoes).
    env: { GAME_UDP_LABEL: UDP_LABEL, GAME_TCP_LABEL: TCP_LABEL, GAME_READY: '0' },
    ports: [{ label: UDP_LABEL, transport: 'udp', containerPort: UDP_PORT, publicPort: udp }, { label: TCP_LABEL, transport: 'tcp', containerPort: TCP_PORT, publicPort: tcp }],
  });
  const t0 = performance.now();
  const container = await w.docker.createContainer(spec);
  try {
    await container.start();
    return (await firstUdpEcho('127.0.0.1', udp)) - t0;
  } finally {
    await container.remove({ force: true, v: true });
    await waitGone(w.docker, container.id);
  }
};

const coldStarts = async (w: World): Promise<ColdResult> => {
  w.log(`cold: warm-up (the first find loads the build into the engine)`);
  const first = await tavernCold(w);
  await bareCold(w, first.image);
  const tavern: number[] = [];
  const finds: number[] = [];
  const bare: number[] = [];
  const seen = new Set<string>([first.lobbyId]);
  for (let i = 0; i < w.s.lobbies; i++) {
    // Alternate which goes first, so a drift in the machine's speed touches both alike.
    const runTavern = async (): Promise<void> => {
      const t = await tavernCold(w);
      if (seen.has(t.lobbyId)) throw new Error(`find returned lobby ${t.lobbyId} again: not a cold start`);
      seen.add(t.lobbyId);
      tavern.push(t.total);
      finds.push(t.find);
    };
    const runBare = async (): Promise<void> => {
      bare.push(await bareCold(w, first.image));
    };
    for (const run of i % 2 === 0 ? [runTavern, runBare] : [runBare, runTavern]) await run();
    w.log(`cold ${i + 1}/${w.s.lobbies}: tavern ${tavern.at(-1)?.toFixed(0)} ms (find ${finds.at(-1)?.toFixed(0)} ms), bare ${bare.at(-1)?.toFixed(0)} ms`);
  }
  const t = spread(tavern);
  const b = spread(bare);
  const ratioMedian = t.median_ms / b.median_ms;
  const ratioP95 = t.p95_ms / b.p95_ms;
  return {
    lobbies: w.s.lobbies, first_find_ms: first.find, tavern: t, tavern_find: spread(finds), bare: b,
    ratio_median: ratioMedian, ratio_p95: ratioP95, goal: COLD_GOAL, met: ratioMedian <= COLD_GOAL && ratioP95 <= COLD_GOAL,
  };
};

type PathName = 'tavern' | 'container' | 'host';

interface DataCell {
  readonly protocol: Protocol;
  readonly clients: number;
  /** Median round trips per second over the rounds. */
  readonly tavern_rps: number;
  readonly container_rps: number;
  readonly host_rps: number;
  /** Medians of the rounds' ratios to the container's own address. */
  readonly tavern_ratio: number;
  readonly host_ratio: number;
  /** The quartiles of the rounds' tavern / container ratios: how much one round's ratio strays. */
  readonly tavern_ratio_q25: number;
  readonly tavern_ratio_q75: number;
  readonly lost: number;
  /** The load generator's highest CPU share in these runs (1 = a whole core). */
  readonly loadgen_cpu_max: number;
  /** The echo server's median CPU share in these runs (the game server in the container, or the host process; clock ticks, coarse over short windows). */
  readonly server_cpu_median: number | null;
}

interface DataResult {
  readonly userland_proxy: UserlandProxy;
  /** What Tavern's /health says of its engine. */
  readonly tavern_health_userland_proxy: string | null;
  /** Whether a docker-proxy process serves the lobby's UDP and TCP ports. */
  readonly docker_proxy_seen: boolean;
  /** The load generator on CPU 0 and the echo servers on CPU 1. */
  readonly loadgen_pinned: boolean;
  /** The nice value the load generator ran at (null: not changed). */
  readonly loadgen_nice: number | null;
  readonly rounds: number;
  readonly slice_ms: number;
  readonly message_bytes: number;
  readonly cells: readonly DataCell[];
  readonly goal: number;
  readonly met: boolean;
}

/** The node game server as a plain host process (no container), echoing on two free ports. */
const hostEcho = async (): Promise<{ child: ServerChild; udp: number; tcp: number }> => {
  const [udp, tcp] = [await freePort(PORT_MIN, PORT_MAX), await freePort(PORT_MIN, PORT_MAX)];
  const child = await spawnServer({
    name: 'host echo',
    args: [GAME_SERVER_JS],
    env: { GAME_UDP_LABEL: UDP_LABEL, GAME_TCP_LABEL: TCP_LABEL, PORT_GAME_UDP: String(udp), PORT_GAME_TCP: String(tcp), GAME_READY: '0' },
    portOf: (line) => (line.startsWith('game server listening') ? tcp : undefined),
  });
  return { child, udp, tcp };
};

const runLoadProcess = async (plan: LoadPlan, pin: boolean, nice: number | undefined): Promise<PlannedRun[]> => {
  const node = [process.execPath, LOAD_JS, JSON.stringify(plan)];
  const pinned = pin ? ['taskset', '-c', '0', ...node] : node;
  const [command = '', ...args] = nice === undefined ? pinned : ['nice', '-n', String(nice), ...pinned];
  const cells = plan.targets.length * plan.protocols.length * plan.clients.length * plan.rounds;
  const { stdout } = await promisify(execFile)(command, args, { timeout: cells * (plan.sliceMs + plan.warmupMs + 2_000) + 30_000, maxBuffer: 16 * 2 ** 20 });
  return JSON.parse(stdout) as PlannedRun[];
};

const dataPlane = async (w: World, cleanup: Cleanup): Promise<DataResult> => {
  const found = await find(w);
  const address = await containerAddress(w.docker, `tavern-${found.lobbyId}`);
  const pid = await containerPid(w.docker, `tavern-${found.lobbyId}`);
  const host = await hostEcho();
  cleanup.add('stopping the host echo', () => host.child.stop());
  const userland = await detectUserlandProxy(process.env['DOCKER_HOST']);
  const health = await call(w.tavern.origin, 'GET', '/health', undefined);
  const said = (health['runtime'] as Json | undefined)?.['userland_proxy'];
  const proxySeen = (await dockerProxyServes(found.udp)) && (await dockerProxyServes(found.tcp));
  // With --pin: the generator on CPU 0, the echo servers (the container's and the host's) on CPU 1.
  // Off by default: on a machine whose two cores are busy with other work, pinned processes wait
  // for their one core and every rate fell about 4x (bench/RESULTS.md).
  const pinned = w.s.pin && canPin() && pinProcess(pid, 1) && pinProcess(host.child.pid, 1);
  w.log(`data: engine userland-proxy ${userland} (Tavern's /health: ${String(said)}), docker-proxy serving the lobby's ports: ${proxySeen ? 'yes' : 'no'}; container at ${address}`);
  const plan: LoadPlan = {
    targets: [
      { name: 'tavern', host: found.host, udpPort: found.udp, tcpPort: found.tcp, pid },
      { name: 'container', host: address, udpPort: UDP_PORT, tcpPort: TCP_PORT, pid },
      { name: 'host', host: '127.0.0.1', udpPort: host.udp, tcpPort: host.tcp, pid: host.child.pid },
    ],
    protocols: ['udp', 'tcp'],
    clients: w.s.clients,
    rounds: w.s.rounds,
    warmupMs: 200,
    sliceMs: w.s.sliceMs,
    size: MESSAGE_BYTES,
  };
  // The instrument gets a raised priority (as root), so it keeps up on a busy machine; the echo
  // servers compete for the cores as they would.
  const nice = w.s.nice !== undefined && process.getuid?.() === 0 ? w.s.nice : undefined;
  const runs = await runLoadProcess(plan, pinned, nice);
  await host.child.stop();
  await stopLobby(w, found.lobbyId);
  const cells = plan.protocols.flatMap((protocol) => plan.clients.map((clients): DataCell => {
    const of = runs.filter((r) => r.protocol === protocol && r.clients === clients);
    const rate = (path: PathName): number => median(of.filter((r) => r.target === path).map((r) => r.perSecond));
    const ratios = (path: PathName): number[] => Array.from({ length: plan.rounds }, (_, i) => {
      const inRound = of.filter((r) => r.round === i + 1);
      return (inRound.find((r) => r.target === path)?.perSecond ?? NaN) / (inRound.find((r) => r.target === 'container')?.perSecond ?? NaN);
    });
    const [q25 = NaN, q50 = NaN, q75 = NaN] = percentiles(ratios('tavern'), [25, 50, 75]);
    return {
      protocol, clients, tavern_rps: rate('tavern'), container_rps: rate('container'), host_rps: rate('host'),
      tavern_ratio: q50, host_ratio: median(ratios('host')), tavern_ratio_q25: q25, tavern_ratio_q75: q75,
      lost: of.reduce((n, r) => n + r.lost, 0), loadgen_cpu_max: Math.max(...of.map((r) => r.cpuShare)),
      server_cpu_median: of.some((r) => r.serverCpuShare !== undefined) ? median(of.flatMap((r) => (r.serverCpuShare === undefined ? [] : [r.serverCpuShare]))) : null,
    };
  }));
  return {
    userland_proxy: userland, tavern_health_userland_proxy: typeof said === 'string' ? said : null, docker_proxy_seen: proxySeen,
    loadgen_pinned: pinned, loadgen_nice: nice ?? null, rounds: plan.rounds, slice_ms: plan.sliceMs, message_bytes: MESSAGE_BYTES,
    cells, goal: DATA_GOAL, met: cells.every((c) => c.tavern_ratio >= DATA_GOAL),
  };
};

interface ScaleResult {
  readonly lobbies: number;
  readonly game_modes: number;
  readonly tier: string;
  readonly complete: boolean;
  /** Ready when the timeout struck (or all). */
  readonly ready: number;
  readonly first_ready_s: number;
  readonly half_ready_s: number;
  readonly all_ready_s: number;
  /** When the version's PUT answered (the idle update's starts run after it, in the server's background). */
  readonly publish_answered_s: number;
  readonly started_per_minute: number;
  readonly containers_running: number;
  readonly tavern_cpu_s: number | null;
  readonly rss_none_bytes: number;
  readonly rss_all_bytes: number;
  readonly rss_per_lobby_bytes: number;
  readonly stop_all_s: number;
  readonly rss_after_bytes: number;
  /** The baseline: the first `containers` of them created and started one after another straight through the Engine API. */
  readonly bare: { readonly containers: number; readonly all_ready_s: number; readonly started_per_minute: number } | null;
  /** When Tavern had as many ready as the baseline started. */
  readonly tavern_first_n_ready_s: number | null;
  /** Tavern's rate over its first `bare.containers` lobbies / the bare engine's rate. */
  readonly ratio: number | null;
}

/** The median of a few VmRSS samples `everyMs` apart. */
const rss = async (pid: number, samples = 5, everyMs = 300): Promise<number> => {
  const values: number[] = [];
  for (let i = 0; i < samples; i++) {
    if (i > 0) await sleep(everyMs);
    values.push(await residentBytes(pid));
  }
  return median(values);
};

/**
 * The bare baseline of the scale part: `count` busybox containers with the lobbies' create body,
 * created and started one after another (as Tavern's idle update does), until every one's TCP
 * echo answers on its published port; then removed.
 */
const bareScale = async (w: World, image: string, count: number): Promise<{ containers: number; all_ready_s: number; started_per_minute: number }> => {
  const t0 = performance.now();
  const echoes: Promise<number>[] = [];
  for (let i = 0; i < count; i++) {
    const port = await freePort(PORT_MIN, PORT_MAX);
    const container = await w.docker.createContainer(bareSpec({
      image, instanceId: w.bareInstance, tier: SCALE_TIER, env: {},
      ports: [{ label: 'default', transport: 'tcp', containerPort: 7777, publicPort: port }],
    }));
    await container.start();
    echoes.push(firstTcpEcho('127.0.0.1', port, { timeoutMs: 120_000 }));
  }
  const allReady = (Math.max(...(await Promise.all(echoes))) - t0) / 1000;
  await removeContainers(w.docker, [w.bareInstance]);
  return { containers: count, all_ready_s: allReady, started_per_minute: (count / allReady) * 60 };
};

const scale = async (w: World, busyboxBuild: string): Promise<ScaleResult> => {
  const split = idleSplit(w.s.idle);
  const version = (counts: readonly number[]): unknown => ({
    matchmaker: {
      regions: { local: { tier: SCALE_TIER } },
      max_players: 8,
      docker: { image_id: busyboxBuild, ports: { default: { port: 7777, protocol: 'tcp' } } },
      game_modes: Object.fromEntries(split.map((_, i) => [`m${String(i + 1).padStart(2, '0')}`, { idle_lobbies: { min: counts[i] ?? 0, max: counts[i] ?? 0 } }])),
    },
  });
  const pid = w.tavern.child.pid;
  await sleep(2_000);
  const rssNone = await rss(pid);
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  let answered = NaN;
  const publishing = publishVersion(w.tavern.origin, w.game, 'scale-up', version(split)).then(() => {
    answered = (performance.now() - t0) / 1000;
  });
  let failed: unknown;
  publishing.catch((e: unknown) => {
    failed = e;
  });
  let first = NaN;
  let half = NaN;
  let firstN = NaN;
  let ready = 0;
  let lastLog = t0;
  while (ready < w.s.idle && performance.now() < t0 + w.s.scaleTimeoutMs && failed === undefined) {
    await sleep(250);
    ready = (await liveLobbies(w)).filter((l) => l.is_ready).length;
    const at = (performance.now() - t0) / 1000;
    if (ready > 0 && Number.isNaN(first)) first = at;
    if (ready >= w.s.idle / 2 && Number.isNaN(half)) half = at;
    if (w.s.scaleBare > 0 && ready >= w.s.scaleBare && Number.isNaN(firstN)) firstN = at;
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      w.log(`scale: ${ready}/${w.s.idle} ready after ${at.toFixed(0)} s`);
    }
  }
  const allReady = (performance.now() - t0) / 1000;
  const cpu1 = cpuSeconds(pid);
  await publishing;
  const complete = ready >= w.s.idle;
  await sleep(2_000);
  const rssAll = await rss(pid);
  const running = (await containersOf(w.docker, w.instance, true)).length;
  w.log(`scale: ${ready} ready in ${allReady.toFixed(1)} s (the version's PUT answered after ${answered.toFixed(1)} s), ${running} containers running; publishing a version with none`);
  const s0 = performance.now();
  await publishVersion(w.tavern.origin, w.game, 'scale-down', version(split.map(() => 0)));
  await until('every idle container to stop', async () => (await containersOf(w.docker, w.instance)).length === 0, 180_000, 250);
  const stopAll = (performance.now() - s0) / 1000;
  await until('no lobby left in live analytics', async () => (await liveLobbies(w)).length === 0, 60_000, 250);
  const rssAfter = await rss(pid);
  let bare: ScaleResult['bare'] = null;
  if (w.s.scaleBare > 0) {
    w.log(`scale: bare baseline, ${w.s.scaleBare} containers`);
    bare = await bareScale(w, `tavern-build:${busyboxBuild}`, w.s.scaleBare);
  }
  const perMinute = (ready / allReady) * 60;
  const firstNPerMinute = (w.s.scaleBare / firstN) * 60;
  return {
    lobbies: w.s.idle, game_modes: split.length, tier: SCALE_TIER, complete, ready,
    first_ready_s: first, half_ready_s: half, all_ready_s: allReady, publish_answered_s: answered, started_per_minute: perMinute,
    containers_running: running, tavern_cpu_s: cpu0 === undefined || cpu1 === undefined ? null : cpu1 - cpu0,
    rss_none_bytes: rssNone, rss_all_bytes: rssAll, rss_per_lobby_bytes: (rssAll - rssNone) / Math.max(1, ready),
    stop_all_s: stopAll, rss_after_bytes: rssAfter,
    bare, tavern_first_n_ready_s: bare === null ? null : firstN, ratio: bare === null || Number.isNaN(firstN) ? null : firstNPerMinute / bare.started_per_minute,
  };
};

const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(0) : '-');
const x = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}x` : '-');
const mib = (n: number): string => `${(n / 2 ** 20).toFixed(1)} MiB`;
const pct = (share: number): string => `${(share * 100).toFixed(0)}%`;
const verdict = (met: boolean): string => (met ? 'met' : 'NOT met');

const printCold = (c: ColdResult): string => [
  `(a) cold start: find that creates a lobby -> first UDP echo on the returned port, vs the same image created+started bare (${c.lobbies} each, alternating)`,
  table(['path', 'median ms', 'p95 ms', 'min ms', 'max ms'], [
    ['tavern find + first echo', ms(c.tavern.median_ms), ms(c.tavern.p95_ms), ms(c.tavern.min_ms), ms(c.tavern.max_ms)],
    ['  of which find answered', ms(c.tavern_find.median_ms), ms(c.tavern_find.p95_ms), ms(c.tavern_find.min_ms), ms(c.tavern_find.max_ms)],
    ['bare create+start + first echo', ms(c.bare.median_ms), ms(c.bare.p95_ms), ms(c.bare.min_ms), ms(c.bare.max_ms)],
  ]),
  `tavern / bare: median ${x(c.ratio_median)}, p95 ${x(c.ratio_p95)} (goal <= ${c.goal}x: ${verdict(c.met)}); first find, loading the build: ${ms(c.first_find_ms)} ms`,
].join('\n');

const printData = (d: DataResult): string => [
  `(b) data plane: ${d.message_bytes}-byte round trips/s, medians of ${d.rounds} rounds x ${d.slice_ms} ms; engine userland-proxy: ${d.userland_proxy} ` +
    `(docker-proxy on the lobby's ports: ${d.docker_proxy_seen ? 'yes' : 'no'}; Tavern /health: ${d.tavern_health_userland_proxy ?? '-'}); ${d.loadgen_pinned ? 'load generator on CPU 0, echo servers on CPU 1' : 'not pinned to CPUs'}; ` +
    `load generator at ${d.loadgen_nice === null ? 'normal priority' : `nice ${d.loadgen_nice}`}`,
  table(['proto', 'clients', 'tavern port', 'container addr', 'host process', 'tavern/container', '(rounds q25-q75)', 'host/container', 'lost', 'loadgen cpu', 'echo cpu'],
    d.cells.map((c) => [
      c.protocol, String(c.clients), fmtRate(c.tavern_rps), fmtRate(c.container_rps), fmtRate(c.host_rps),
      x(c.tavern_ratio), `${c.tavern_ratio_q25.toFixed(2)}-${c.tavern_ratio_q75.toFixed(2)}`, x(c.host_ratio), String(c.lost), pct(c.loadgen_cpu_max), c.server_cpu_median === null ? '-' : pct(c.server_cpu_median),
    ])),
  `tavern port / container address >= ${d.goal} in every row: ${verdict(d.met)}; ` +
    `cpu: share of one core, the load generator's in its busiest window, the echo server's median over its windows${d.cells.some((c) => c.loadgen_cpu_max >= 0.9) ? ' - the load generator was saturated in some runs' : ''}`,
].join('\n');

const printScale = (c: ScaleResult): string => [
  `(c) scale: a version keeping ${c.lobbies} idle lobbies of the busybox game server (${c.tier}, ${c.game_modes} game modes) published; Tavern restarted before it`,
  table(['metric', 'value'], [
    ['ready (live analytics is_ready)', `${c.ready}/${c.lobbies}${c.complete ? '' : ' (TIMED OUT)'}`],
    ['first / half / all ready', `${c.first_ready_s.toFixed(1)} s / ${c.half_ready_s.toFixed(1)} s / ${c.all_ready_s.toFixed(1)} s`],
    ["the version's PUT answered", `${c.publish_answered_s.toFixed(1)} s`],
    ['lobbies started per minute', c.started_per_minute.toFixed(0)],
    ...(c.bare === null ? [] : [
      [`bare engine, ${c.bare.containers} containers`, `${c.bare.all_ready_s.toFixed(1)} s: ${c.bare.started_per_minute.toFixed(0)} per minute`],
      [`tavern, its first ${c.bare.containers}`, `${(c.tavern_first_n_ready_s ?? NaN).toFixed(1)} s: ${x(c.ratio ?? NaN)} the bare rate`],
    ]),
    ['containers running', String(c.containers_running)],
    ['tavern CPU while starting', c.tavern_cpu_s === null ? '-' : `${c.tavern_cpu_s.toFixed(1)} s (${((c.tavern_cpu_s * 1000) / Math.max(1, c.ready)).toFixed(0)} ms per lobby)`],
    ['tavern RSS, no lobby', mib(c.rss_none_bytes)],
    [`tavern RSS, ${c.ready} lobbies`, `${mib(c.rss_all_bytes)} (${(c.rss_all_bytes / c.rss_none_bytes).toFixed(2)}x; ${(c.rss_per_lobby_bytes / 1024).toFixed(0)} KiB per lobby)`],
    ['all stopped after', `${c.stop_all_s.toFixed(1)} s`],
    ['tavern RSS after', mib(c.rss_after_bytes)],
  ]),
].join('\n');

type Timed<T> = T & { readonly seconds: number };

const timed = async <T>(part: () => Promise<T>): Promise<Timed<T>> => {
  const t0 = performance.now();
  const result = await part();
  return { ...result, seconds: (performance.now() - t0) / 1000 };
};

export const runtimeBench = async (args: readonly string[]): Promise<void> => {
  const s = parseSettings(args);
  const log = (line: string): void => {
    if (!s.json) process.stderr.write(`${line}\n`);
  };
  const began = performance.now();
  const cleanup = new Cleanup((line) => process.stderr.write(`${line}\n`));
  const interrupted = (signal: NodeJS.Signals): void => {
    process.stderr.write(`${signal}: cleaning up\n`);
    void cleanup.run().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);

  const dockerHost = process.env['DOCKER_HOST'];
  const docker = connectDocker(dockerHost);
  const version = (await docker.version().catch((e: unknown) => {
    throw new Error(`the Docker Engine at ${dockerHost ?? 'unix:///var/run/docker.sock'} does not answer: ${e instanceof Error ? e.message : String(e)}`);
  })) as { Version?: string };
  const engine = { docker_host: dockerHost ?? 'unix:///var/run/docker.sock', version: version.Version ?? null, userland_proxy: await detectUserlandProxy(dockerHost) };
  log(`engine ${engine.version ?? '?'} at ${engine.docker_host}, userland-proxy ${engine.userland_proxy}`);

  const result: { cold?: Timed<ColdResult>; data?: Timed<DataResult>; scale?: Timed<ScaleResult> } = {};
  let setupSeconds = NaN;
  try {
    const instance = `rtbench-${randomUUID().slice(0, 8)}`;
    const bareInstance = `${instance}-bare`;
    const t0 = performance.now();
    const node = await nodeGameServer(docker);
    const busybox = s.parts.has('scale') ? await busyboxGameServer(docker) : undefined;
    // Run in reverse: the server stops, then the containers it or the bare runs left go, then the
    // loaded build images, then its data dir.
    const dataDir = mkdtempSync(join(tmpdir(), 'tavern-bench-runtime-'));
    cleanup.add('removing the data dir', () => rm(dataDir, { recursive: true, force: true }));
    const images: string[] = [];
    cleanup.add('removing the loaded build images', async () => {
      for (const ref of images) {
        await docker.getImage(ref).remove({ force: true }).catch((e: unknown) => {
          // Never loaded (no lobby of that build started): nothing to remove.
          if ((e as { statusCode?: number }).statusCode !== 404) throw e;
        });
      }
    });
    cleanup.add('removing the containers', () => removeContainers(docker, [instance, bareInstance]));
    const start = async (): Promise<TavernProcess> => {
      const tavern = await spawnTavern({ env: { TAVERN_RUNTIME: 'docker', TAVERN_INSTANCE_ID: instance }, dataDir, stopGraceMs: 30_000 });
      await until('Tavern to reach the engine', async () => ((await call(tavern.origin, 'GET', '/health', undefined))['runtime'] as Json | undefined)?.['reachable'] === true, 20_000, 100);
      return tavern;
    };
    let tavern = await start();
    cleanup.add('stopping tavern', () => tavern.stop());
    // The bare baseline's containers join the lobbies' network too (Tavern made it, or it was there).
    await ensureLobbyNetwork(docker, DEFAULT_LOBBY_NETWORK);
    const game = await createGame(tavern.origin);
    await setLimits(tavern.origin, game, LOBBY_COUNT_MAX, MAX_PLAYERS_PER_CLIENT);
    const nodeBuild = await uploadBuild(tavern.origin, game, { image: { file: node.ociBundleLz4 }, kind: 'oci_bundle', compression: 'lz4' });
    images.push(`tavern-build:${nodeBuild}`);
    const busyboxBuild = busybox === undefined ? undefined : await uploadBuild(tavern.origin, game, { image: { file: busybox.dockerImage }, kind: 'docker_image', compression: 'none' });
    if (busyboxBuild !== undefined) images.push(`tavern-build:${busyboxBuild}`);
    const w: World = { s, docker, tavern, instance, bareInstance, log, game, player: await publicToken(tavern.origin, game) };
    await publishVersion(tavern.origin, game, 'node', nodeVersion(nodeBuild));
    setupSeconds = (performance.now() - t0) / 1000;
    log(`setup (images, server, game, builds) took ${setupSeconds.toFixed(1)} s; instance ${instance}`);

    if (s.parts.has('cold')) {
      result.cold = await timed(() => coldStarts(w));
      if (!s.json) process.stdout.write(`${printCold(result.cold)}\n(took ${result.cold.seconds.toFixed(0)} s)\n\n`);
    }
    if (s.parts.has('data')) {
      result.data = await timed(() => dataPlane(w, cleanup));
      if (!s.json) process.stdout.write(`${printData(result.data)}\n(took ${result.data.seconds.toFixed(0)} s)\n\n`);
    }
    if (busyboxBuild !== undefined) {
      // A fresh server on the same data dir: its RSS with no lobby is not what the other parts left in its heap.
      await tavern.stop();
      tavern = await start();
      result.scale = await timed(() => scale({ ...w, tavern }, busyboxBuild));
      if (!s.json) process.stdout.write(`${printScale(result.scale)}\n(took ${result.scale.seconds.toFixed(0)} s)\n\n`);
    }
  } finally {
    await cleanup.run();
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
  const seconds = (performance.now() - began) / 1000;
  if (s.json) {
    process.stdout.write(`${JSON.stringify({ bench: 'runtime', engine, ...result, setup_s: setupSeconds, seconds })}\n`);
  } else {
    process.stdout.write(`runtime bench took ${seconds.toFixed(0)} s (setup ${setupSeconds.toFixed(0)} s)\n`);
  }
  if (result.scale !== undefined && !result.scale.complete) {
    throw new Error(`only ${result.scale.ready} of ${result.scale.lobbies} idle lobbies were ready after ${s.scaleTimeoutMs} ms`);
  }
};
