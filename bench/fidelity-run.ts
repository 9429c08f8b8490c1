/**
 * Fidelity, proven (issue 23 item 4): a real Tavern server process (HTTP, the fake runtime with a
 * lobby ready delay drawn from a known distribution) is driven in real time by a synthetic
 * workload of finds whose players connect and leave after a drawn session; what it recorded is
 * exported (`.../analytics/matchmaker/demand`), a scenario is calibrated from what it observed
 * (`.../demand/observed`, the function behind `tavern sim calibrate`), the export is replayed in
 * the simulator, and the same figures are computed on both sides. The same run with real Docker
 * containers as the lobbies (`runtime` `docker`: their start delay is a real container's, fitted by
 * calibration like any other) is `--runtime docker`'s. Run by `npm run bench -- fidelity`
 * (bench/fidelity.ts): statistical and in real time, it is a measurement, not a test; `npm test`
 * replays one run's recording exactly (test/sim/recording).
 */
import Dockerode from 'dockerode';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { SqliteDemandStore } from '../src/adapters/sqlite/demand-store.js';
import { openDatabase } from '../src/adapters/sqlite/schema.js';
import type { DemandFact } from '../src/io/demand.js';
import { createStream, sample, type NumericDistribution, type Stream } from '../src/core/distribution.js';
import { ValueCounts } from '../src/sim/engine/stats.js';
import { calibrateScenario, lognormalParams, type Observed, type RegionDescription } from '../src/sim/scenario/calibrate.js';
import { parseScenario } from '../src/sim/scenario/parse.js';
import type { RecordedRequest, Scenario } from '../src/sim/scenario/types.js';
import { parseRecordedDemand } from '../src/sim/scenario/recorded.js';
import { CONNECT_DELAY, runScenario } from '../src/sim/world/run.js';
import { facts as demandFacts } from '../src/services/demand.js';
import { nodeGameServer } from '../test/docker/images.js';
import { call, createGame, publicToken, publishVersion, setLimits, spawnTavern, str, uploadBuild, type BenchGame, type BuildUpload } from './http-tavern.js';

/** The workload: its rules are the ones a replay must reproduce. */
export interface Workload {
  /** Real time the finds arrive over. */
  readonly durationMs: number;
  /** Finds per second (a Poisson process). */
  readonly findsPerSecond: number;
  /** The fake runtime's lobby ready delay (`TAVERN_FAKE_READY_DELAY`); under Docker a lobby is ready when its container has started and called ready. */
  readonly readyDelayMs: NumericDistribution;
  /** How long each player stays connected. */
  readonly sessionMs: NumericDistribution;
  /** Players per lobby (`max_players`). */
  readonly maxPlayers: number;
  /** Lobbies the namespace may run (`lobby_count_max`): finds beyond it are refused. */
  readonly lobbyCountMax: number;
  readonly idleLobbies: { readonly min: number; readonly max: number };
  /**
   * Independent namespaces driven at once on the one server, each by its own copy of the workload
   * (seeds `seed`, `seed + 1`, …), each exported, calibrated and replayed on its own; the figures
   * add up over them (see {@link combine}).
   */
  readonly namespaces: number;
  readonly seed: number;
}

/**
 * Three minutes (`--minutes 3`; the bench's default is 10). One player per lobby, so most finds start a lobby and
 * wait for it (the ready delay is what time to seat measures), and more players at once than
 * `lobby_count_max` allows, so some finds are refused.
 *
 * Four namespaces: one server run is one draw of which lobby gets which start delay, and what the
 * replays predict is the mean over such draws (given the server's own delays, a replay decides
 * every find as the server did: bench/RESULTS.md). For one namespace of this workload a draw's
 * lobbies created and refusals spread by 3–5 % (sd), the size of the goal (±5 %), so its
 * comparison failed now and then however good the model; the sums of four independent ones spread
 * half as much, in the same three minutes.
 */
export const TEST_WORKLOAD: Workload = Object.freeze({
  durationMs: 180_000,
  findsPerSecond: 1.5,
  readyDelayMs: Object.freeze({ kind: 'lognormal', median: 1_500, p95: 3_000 }),
  sessionMs: Object.freeze({ kind: 'lognormal', median: 8_000, p95: 20_000 }),
  maxPlayers: 1,
  lobbyCountMax: 16,
  idleLobbies: Object.freeze({ min: 1, max: 2 }),
  namespaces: 4,
  seed: 23,
});

/**
 * The workload of the Docker variant (`--runtime docker`): three minutes again (`--minutes 3`), at
 * a rate the 2-core machine keeps up with while it starts and stops a container every second or so
 * (0.8 finds/s in each of two namespaces, a quarter or more of them refused). No idle lobbies: a
 * container starts in 0.3–1 s here, so an idle pool would seat nearly every find at once and leave
 * the wait for a start (what time to seat measures) to a few percent of the seats, where p95 jumps
 * between 1 ms and a start; without one every seat waits for its container, and an emptied lobby
 * stops. A namespace's 8 lobbies are fewer than its players at once, so some finds are refused.
 *
 * Two namespaces for the reason the fake workload has four: with one, a run's ~36 refusals are one draw
 * whose spread (2–3 % sd) left the ±5 % goal to chance, and CI once saw 38 against 36 (−5.3 %).
 */
export const DOCKER_WORKLOAD: Workload = Object.freeze({
  ...TEST_WORKLOAD,
  namespaces: 2,
  findsPerSecond: 0.8,
  sessionMs: Object.freeze({ kind: 'lognormal', median: 10_000, p95: 25_000 }),
  lobbyCountMax: 8,
  idleLobbies: Object.freeze({ min: 0, max: 0 }),
});

/**
 * Where the server runs its lobbies: `fake` (nothing runs; each is ready after the workload's
 * `readyDelayMs`), or `docker` (`TAVERN_RUNTIME=docker`: each is a container of the node test
 * game server, test/docker/game-server.js, uploaded as an OCI bundle, ready when it has started
 * and called `lobbies/ready`).
 */
export type FidelityRuntime = 'fake' | 'docker';

/**
 * Replays averaged per run. One replay redraws each lobby's start delay (and the sessions of the
 * requests the server refused) from the calibrated distributions, a draw as different from the
 * server's as any other: over 60 seeds of one 180 s recording, one replay's refusals spread with a
 * standard deviation of 4 % and its lobbies created of 3 %, about the goal itself (±5 %). The mean of
 * 20 (a replay takes well under a second) is the model's figure, its own spread under 1 %.
 */
export const REPLAYS = 20;

/** The figures compared. */
export interface Figures {
  readonly lobbiesCreated: number;
  readonly peakLobbies: number;
  readonly seated: number;
  readonly refused: number;
  readonly seatP50Ms: number;
  readonly seatP95Ms: number;
  readonly idleLobbySeconds: number;
}

export type FigureName = keyof Figures;

/** Goal per figure: ±5 % for counts, ±10 % for percentiles. */
export const TOLERANCE: Readonly<Record<FigureName, number>> = Object.freeze({
  lobbiesCreated: 0.05,
  peakLobbies: 0.05,
  seated: 0.05,
  refused: 0.05,
  seatP50Ms: 0.1,
  seatP95Ms: 0.1,
  idleLobbySeconds: 0.05,
});

const LABELS: Readonly<Record<FigureName, string>> = Object.freeze({
  lobbiesCreated: 'lobbies created',
  peakLobbies: 'peak lobbies',
  seated: 'seated',
  refused: 'refused',
  seatP50Ms: 'time to seat p50 (ms)',
  seatP95Ms: 'time to seat p95 (ms)',
  idleLobbySeconds: 'idle lobby-seconds',
});

export interface Row {
  readonly figure: FigureName;
  readonly label: string;
  readonly server: number;
  readonly sim: number;
  /** (sim − server) / server; 0 when both are 0. */
  readonly delta: number;
  readonly tolerance: number;
  readonly within: boolean;
}

export interface FidelityResult {
  readonly workload: Workload;
  readonly server: Figures;
  readonly sim: Figures;
  readonly rows: readonly Row[];
  /** The calibration's report lines. */
  readonly calibration: readonly string[];
  readonly requests: number;
  /** Real time the whole run took (set-up, workload, export, replay). */
  readonly wallMs: number;
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

const draw = (d: NumericDistribution, stream: Stream): number => Math.max(0, Math.round(sample(d, stream)));

/** A seat as the driver held it: from its find's sending to its player's disconnection (or the end). */
interface HeldSeat {
  readonly lobbyId: string;
  readonly from: number;
  to?: number;
}

interface Post {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

const post = async (origin: string, path: string, token: string, body: unknown): Promise<Post> => {
  const res = await fetch(`${origin}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
};

/** The game server's TCP port's label (its `PORT_TCP`, where test/docker/game-server.js listens). */
const GAME_PORT = 'tcp';

/** What a find answered: the seat, and where its lobby's game listens. */
interface Found {
  readonly lobbyId: string;
  readonly playerToken: string;
  readonly ports: Readonly<Record<string, { readonly hostname?: string; readonly port?: number }>>;
}

/** A player's connection to its lobby's game, made once it has connected (`players/connected`). */
interface Session {
  /** The player leaves (`players/disconnected`). */
  leave(): Promise<void>;
}

/**
 * How a seated player reaches its lobby's game, and how the game tells Tavern it connected and
 * left: the lobby's token is the game's, given to its process in its environment.
 */
interface Game {
  /** Connects the player; undefined when the seat went away meanwhile (its lobby stopped). */
  join(found: Found): Promise<Session | undefined>;
  /** Drops the connections still open when the run ends. */
  close(): void;
}

/** The fake runtime runs no game: the driver is the game, with each lobby's token from the file the server writes for it (`TAVERN_FAKE_LOBBY_DIR`). */
const fakeGame = (origin: string, lobbyDir: string): Game => ({
  async join(found) {
    const env = JSON.parse(await readFile(join(lobbyDir, `${found.lobbyId}.json`), 'utf8')) as Record<string, string>;
    const token = str(env['RIVET_TOKEN'], 'the lobby token');
    const ref = { player_token: found.playerToken };
    if ((await post(origin, '/matchmaker/players/connected', token, ref)).status !== 200) return undefined;
    return { leave: async () => void (await post(origin, '/matchmaker/players/disconnected', token, ref)) };
  },
  close: () => undefined,
});

/** A TCP connection to a game server, its lines awaited one pattern at a time. */
const gameSocket = (host: string, port: number): Promise<{ socket: Socket; answer: (line: string, reply: RegExp) => Promise<string> }> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, host);
    let buffered = '';
    let closed = false;
    let waiting: { reply: RegExp; done: (line: string) => void } | undefined;
    const check = (): void => {
      if (waiting === undefined) return;
      const lines = buffered.split('\n');
      const at = lines.slice(0, -1).findIndex((l) => waiting?.reply.test(l));
      if (at === -1) return;
      buffered = lines.slice(at + 1).join('\n');
      const { done } = waiting;
      waiting = undefined;
      done(lines[at] as string);
    };
    socket.on('data', (d) => {
      buffered += d.toString();
      check();
    });
    socket.once('error', reject);
    socket.once('connect', () => {
      // A lobby stopped under its player closes the connection: an answer still awaited is "gone".
      socket.on('close', () => {
        closed = true;
        waiting?.done('');
      });
      socket.on('error', () => undefined);
      resolve({
        socket,
        answer: (line, reply) =>
          new Promise((done) => {
            if (closed) return done('');
            waiting = { reply, done };
            socket.write(`${line}\n`);
            check();
          }),
      });
    });
  });

/**
 * Real containers: the player opens a TCP connection to its lobby's game server (the port find
 * returned) and says `connect <player token>`; the game server calls `players/connected` with its
 * own lobby token and answers (see test/docker/game-server.js); leaving, `disconnect <player token>`.
 */
const dockerGame = (): Game => {
  const open = new Set<Socket>();
  return {
    async join(found) {
      const { hostname = '127.0.0.1', port } = found.ports[GAME_PORT] ?? {};
      if (port === undefined) throw new Error(`find returned no ${GAME_PORT} port: ${JSON.stringify(found.ports)}`);
      const game = await gameSocket(hostname, port).catch(() => undefined);
      if (game === undefined) return undefined;
      open.add(game.socket);
      const drop = (): void => {
        open.delete(game.socket);
        game.socket.destroy();
      };
      if (!(await game.answer(`connect ${found.playerToken}`, /^connect(ed|-failed) /)).startsWith('connected ')) {
        drop();
        return undefined;
      }
      return {
        async leave() {
          await game.answer(`disconnect ${found.playerToken}`, /^disconnect(ed|-failed) /);
          drop();
        },
      };
    },
    close() {
      for (const s of open) s.destroy();
      open.clear();
    },
  };
};

/**
 * The workload's players: a find each (a Poisson process), then, once seated, a connection after a
 * client delay (drawn as the simulator draws one it does not know; the export records each, and the
 * replay reproduces it), a session, a disconnection, all drawn from streams of `seed`. Runs until
 * `durationMs` after `start`; sessions still going then are cut off by `stop`.
 */
async function drive(origin: string, pub: string, game: Game, w: Workload, seed: number, start: number, stop: AbortSignal): Promise<{ seats: HeldSeat[]; requests: number; errors: string[] }> {
  const arrivals = createStream(seed);
  const clients = createStream(seed ^ 0x5eed);
  const seats: HeldSeat[] = [];
  const errors: string[] = [];
  const players: Promise<void>[] = [];
  const player = async (): Promise<void> => {
    const connectMs = draw(CONNECT_DELAY, clients);
    const sessionMs = Math.max(1, draw(w.sessionMs, clients));
    const from = Date.now();
    const found = await post(origin, '/matchmaker/lobbies/find', pub, { game_modes: ['default'], regions: ['local'] });
    if (found.status !== 200) {
      if (found.status >= 500 || found.status === 429) errors.push(`find: ${found.status} ${JSON.stringify(found.body)}`);
      return;
    }
    const lobbyId = str((found.body['lobby'] as Record<string, unknown> | undefined)?.['lobby_id'], 'lobby_id');
    const seat: HeldSeat = { lobbyId, from };
    seats.push(seat);
    const playerToken = str((found.body['player'] as Record<string, unknown> | undefined)?.['token'], 'the player token');
    const ports = (found.body['ports'] ?? {}) as Found['ports'];
    await sleep(connectMs, stop);
    if (stop.aborted) return;
    const session = await game.join({ lobbyId, playerToken, ports });
    if (session === undefined) {
      // Its seat went away meanwhile (the lobby stopped): nothing to disconnect.
      seat.to = Date.now();
      return;
    }
    await sleep(sessionMs, stop);
    if (stop.aborted) return;
    await session.leave();
    seat.to = Date.now();
  };
  let at = start;
  let requests = 0;
  for (;;) {
    at += sample({ kind: 'exponential', mean: 1_000 / w.findsPerSecond }, arrivals);
    if (at >= start + w.durationMs) break;
    await sleep(Math.max(0, at - Date.now()), stop);
    if (stop.aborted) break;
    requests += 1;
    players.push(player().catch((e: unknown) => void errors.push(String(e))));
  }
  await sleep(Math.max(0, start + w.durationMs - Date.now()), stop);
  return { seats, requests, errors };
}

/**
 * The figures from what the server recorded (lobbies, requests) and the seats its clients held. A
 * lobby counts (peak, idle time) from its creation until it was asked to stop, as the simulator's
 * active lobbies do; a container's own stopping time after that is not the matchmaker's.
 */
function serverFigures(facts: readonly DemandFact[], seats: readonly HeldSeat[], from: number, to: number): Figures {
  const waits = new ValueCounts();
  let seated = 0;
  let refused = 0;
  const lobbies = new Map<string, { created: number; stopped: number }>();
  // `stopped` is where the lobby stopped counting: its stopping fact (its stopped one when it has none).
  for (const f of facts) {
    if (f.type === 'request') {
      if (f.outcome === 'ok') {
        seated += f.party;
        waits.add(f.waitMs, f.party);
      } else refused += f.party;
    } else if (f.type === 'lobby') {
      if (f.step === 'created') lobbies.set(f.lobbyId, { created: f.at, stopped: to });
      else if (f.step === 'stopping' || f.step === 'stopped') {
        const l = lobbies.get(f.lobbyId);
        if (l !== undefined) l.stopped = Math.min(l.stopped, f.at);
      }
    }
  }
  // Peak lobbies: created +1, stopped −1, in time order (a stop before a creation at the same ms).
  const steps = [...lobbies.values()].flatMap((l) => [{ at: l.created, d: 1 }, ...(l.stopped < to ? [{ at: l.stopped, d: -1 }] : [])]);
  steps.sort((a, b) => a.at - b.at || a.d - b.d);
  let running = 0;
  let peak = 0;
  for (const s of steps) peak = Math.max(peak, (running += s.d));
  // Idle: a lobby's time alive with no seat held in it.
  const byLobby = new Map<string, HeldSeat[]>();
  for (const s of seats) byLobby.set(s.lobbyId, [...(byLobby.get(s.lobbyId) ?? []), s]);
  let idleMs = 0;
  for (const [id, l] of lobbies) {
    const begin = Math.max(from, l.created);
    const end = Math.min(to, l.stopped);
    if (end <= begin) continue;
    const held = (byLobby.get(id) ?? []).map((s) => ({ a: Math.max(begin, s.from), b: Math.min(end, s.to ?? to) })).filter((s) => s.b > s.a).sort((x, y) => x.a - y.a);
    let busy = 0;
    let cursor = begin;
    for (const s of held) {
      if (s.b <= cursor) continue;
      busy += s.b - Math.max(cursor, s.a);
      cursor = s.b;
    }
    idleMs += end - begin - busy;
  }
  const [p50 = NaN, p95 = NaN] = waits.percentiles([50, 95]);
  return { lobbiesCreated: lobbies.size, peakLobbies: peak, seated, refused, seatP50Ms: p50, seatP95Ms: p95, idleLobbySeconds: Math.round(idleMs / 1_000) };
}

/**
 * The resolution of both sides' clocks (the server's `Date.now()`, the simulator's virtual time):
 * a percentile of 1 or 2 ms (a seat in a lobby already ready: the server's answer time) cannot be
 * told apart more finely, so a time within one tick of the server's is within the goal too.
 */
export const CLOCK_TICK_MS = 1;

/** The figures that are times (percentiles): within a tick counts as within, and several namespaces' are averaged. */
const TIMES: ReadonlySet<FigureName> = new Set(['seatP50Ms', 'seatP95Ms']);

export const rowsOf = (server: Figures, sim: Figures): Row[] =>
  (Object.keys(LABELS) as FigureName[]).map((figure) => {
    const a = server[figure];
    const b = sim[figure];
    const delta = a === 0 ? (b === 0 ? 0 : Infinity) : (b - a) / a;
    const within = Math.abs(delta) <= TOLERANCE[figure] || (TIMES.has(figure) && Math.abs(b - a) <= CLOCK_TICK_MS);
    return { figure, label: LABELS[figure], server: a, sim: b, delta, tolerance: TOLERANCE[figure], within };
  });

/** The side-by-side table. */
export function fidelityTable(rows: readonly Row[]): string {
  const pct = (x: number): string => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %` : '∞');
  const head = ['figure', 'server', 'simulator', 'difference', 'goal', ''];
  const goal = (r: Row): string => `±${Math.round(r.tolerance * 100)} %${TIMES.has(r.figure) ? ` or ${CLOCK_TICK_MS} ms` : ''}`;
  const body = rows.map((r) => [r.label, String(r.server), String(r.sim), pct(r.delta), goal(r), r.within ? 'ok' : 'MISSED']);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ').trimEnd();
  return [line(head), ...body.map(line)].join('\n');
}

/** Waits until the server's Docker runtime answers (`/health`): lobbies start only then. */
async function reachable(origin: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const health = await call(origin, 'GET', '/health', undefined);
    if ((health['runtime'] as { reachable?: boolean } | undefined)?.reachable === true) return;
    if (Date.now() > deadline) throw new Error(`the Docker runtime is not reachable: ${JSON.stringify(health['runtime'])}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Waits until a lobby of the namespace is ready (live analytics). */
async function readyLobby(origin: string, game: BenchGame): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const live = await call(origin, 'GET', `${game.nsPath}/analytics/matchmaker/live`, game.cloud);
    if (((live['lobbies'] ?? []) as { is_ready?: boolean }[]).some((l) => l.is_ready === true)) return;
    if (Date.now() > deadline) throw new Error('no lobby became ready in 120 s (the build loaded into the engine?)');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every container of the server's instance, and the builds' images (`tavern-build:<build>`). */
async function removeRun(docker: Dockerode, instance: string, buildIds: readonly string[]): Promise<void> {
  const left = await docker.listContainers({ all: true, filters: { label: [`tavern.instance=${instance}`] } });
  await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)));
  await Promise.all(buildIds.map((id) => docker.getImage(`tavern-build:${id}`).remove({ force: true }).catch(() => undefined)));
}

/** A namespace of a run, set up: its game, its players' token and the config it publishes (its build's). */
interface Namespace {
  readonly game: BenchGame;
  readonly pub: string;
  readonly config: (idle: Workload['idleLobbies']) => unknown;
}

/** A namespace driven: its window, its version and its players' seats. */
interface Driven extends Namespace {
  readonly start: number;
  readonly versionId: string;
  readonly seats: HeldSeat[];
  readonly requests: number;
  readonly errors: string[];
}

/** The `n`-th namespace's game, build, limits and players' token; under Docker its build warmed up into an image. */
async function setUpNamespace(origin: string, w: Workload, n: number, upload: BuildUpload, runtime: FidelityRuntime, onBuild: (buildId: string) => void): Promise<Namespace> {
  const game = await createGame(origin, `fidelity-${n}`);
  const buildId = await uploadBuild(origin, game, upload);
  onBuild(buildId);
  await setLimits(origin, game, w.lobbyCountMax, 256);
  const pub = await publicToken(origin, game);
  const config = (idle: Workload['idleLobbies']): unknown => ({
    matchmaker: {
      regions: { local: { idle_lobbies: idle } },
      max_players: w.maxPlayers,
      docker: { image_id: buildId, ports: { [GAME_PORT]: { port: 7778, protocol: 'tcp' } } },
      game_modes: { default: {} },
    },
  });
  if (runtime === 'docker') {
    // The build becomes an image in the engine when its first lobby starts (seconds): done before
    // the window, so no start delay in it includes that.
    await publishVersion(origin, game, 'warm-up', config({ min: 1, max: 1 }));
    await readyLobby(origin, game);
  }
  return { game, pub, config };
}

/** The figures of a run from its namespaces': the times ({@link TIMES}) averaged, every other figure added up. */
const combine = (parts: readonly Figures[]): Figures =>
  Object.fromEntries(
    (Object.keys(LABELS) as FigureName[]).map((f) => {
      const sum = parts.reduce((n, p) => n + p[f], 0);
      return [f, TIMES.has(f) ? sum / parts.length : sum];
    }),
  ) as unknown as Figures;

/**
 * The server's lobby start delays (created → ready) against what the replays draw: a lognormal
 * fitted through the median and p95 has the mean it has, and the time a lobby holds its slot, so
 * the refusals, goes with the mean (a heavier tail than the fit's shows here first).
 */
function startDelays(facts: readonly (readonly DemandFact[])[], scenarios: readonly Scenario[]): string {
  const parts = facts.map((all, i) => {
    const created = new Map<string, number>();
    const delays: number[] = [];
    for (const f of all) {
      if (f.type !== 'lobby') continue;
      if (f.step === 'created') created.set(f.lobbyId, f.at);
      else if (f.step === 'ready' && created.has(f.lobbyId)) delays.push(f.at - (created.get(f.lobbyId) as number));
    }
    const d = scenarios[i]?.infrastructure.regions[0]?.lobbyStartDelayMs;
    const { mu, sigma } = d?.kind === 'lognormal' ? lognormalParams(d.median, d.p95) : { mu: NaN, sigma: NaN };
    const fitted = d?.kind === 'constant' ? d.value : Math.exp(mu + sigma ** 2 / 2);
    return { n: delays.length, sum: delays.reduce((a, b) => a + b, 0), max: Math.max(0, ...delays), fitted: fitted * delays.length };
  });
  const n = parts.reduce((a, p) => a + p.n, 0);
  const mean = (x: number): string => (n === 0 ? '-' : `${Math.round(x / n)} ms`);
  return `lobby start delay: server mean ${mean(parts.reduce((a, p) => a + p.sum, 0))} (max ${Math.max(...parts.map((p) => p.max))} ms, ${n} lobbies), the fitted lognormal's mean ${mean(parts.reduce((a, p) => a + p.fitted, 0))}`;
}

/** Adds `n` to `key`'s count. */
const count = (counts: Map<string, number>, key: string, n = 1): void => void counts.set(key, (counts.get(key) ?? 0) + n);

/**
 * @example
 * const result = await runFidelity(TEST_WORKLOAD);
 * console.log(fidelityTable(result.rows));
 *
 * `keep`: a directory to write each namespace's export (`demand.jsonl`, or `demand-<n>.jsonl` for
 * the n-th of several), what calibration read (`observed.json`: the observed endpoint's answer;
 * `version.json`: the namespace's version config) and the calibrated scenario (`scenario.json`) into.
 * `runtime`: where the server runs its lobbies ({@link FidelityRuntime}); under Docker every
 * container and the image the run made are removed at its end.
 */
export async function runFidelity(w: Workload, log: (line: string) => void = () => undefined, keep?: string, runtime: FidelityRuntime = 'fake'): Promise<FidelityResult> {
  const began = Date.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'tavern-fidelity-'));
  const lobbyDir = join(dataDir, 'fake-lobbies');
  const docker = runtime === 'docker' ? new Dockerode() : undefined;
  // The server's containers carry this label: what the clean-up removes.
  const instance = `fidelity-${randomUUID().slice(0, 8)}`;
  const upload: BuildUpload = docker === undefined ? { image: Buffer.from('fidelity image') } : { image: { file: (await nodeGameServer(docker)).ociBundleLz4 }, kind: 'oci_bundle', compression: 'lz4' };
  const tavern = await spawnTavern({
    dataDir,
    // SQLite in the data dir whatever the caller's environment says (CI exports DATABASE_URL): the
    // server's figures are read from that file once it has stopped.
    env: {
      DATABASE_URL: '',
      ...(runtime === 'fake'
        ? { TAVERN_RUNTIME: 'fake', TAVERN_FAKE_READY_DELAY: JSON.stringify(w.readyDelayMs), TAVERN_FAKE_SEED: String(w.seed), TAVERN_FAKE_LOBBY_DIR: lobbyDir }
        : { TAVERN_RUNTIME: 'docker', TAVERN_INSTANCE_ID: instance }),
    },
  });
  const stop = new AbortController();
  // Every player sleeping (to connect, in session) listens for the end of the run.
  setMaxListeners(0, stop.signal);
  const players = runtime === 'fake' ? fakeGame(tavern.origin, lobbyDir) : dockerGame();
  const buildIds: string[] = [];
  const several = w.namespaces > 1;
  try {
    const { origin } = tavern;
    if (runtime === 'docker') await reachable(origin);
    const namespaces: Namespace[] = [];
    for (let i = 0; i < w.namespaces; i++) namespaces.push(await setUpNamespace(origin, w, i + 1, upload, runtime, (id) => buildIds.push(id)));
    log(`workload: ${w.findsPerSecond} finds/s for ${w.durationMs / 1_000} s${several ? ` in each of ${w.namespaces} namespaces` : ''} against ${origin} (${runtime === 'fake' ? 'the fake runtime' : 'Docker containers of the node game server'})`);
    // A namespace's window opens as its version goes live (its idle lobbies start), as a replay's run does.
    const driven: Driven[] = await Promise.all(
      namespaces.map(async (ns, i) => {
        const start = Date.now();
        const versionId = await publishVersion(origin, ns.game, 'fidelity', ns.config(w.idleLobbies));
        return { ...ns, start, versionId, ...(await drive(origin, ns.pub, players, w, w.seed + i, start, stop.signal)) };
      }),
    );
    stop.abort();
    players.close();
    const errors = driven.flatMap((d) => d.errors);
    if (errors.length > 0) throw new Error(`the workload failed: ${errors.slice(0, 3).join('; ')}`);
    // The recorder flushes every second.
    await new Promise((r) => setTimeout(r, 2_000));

    const calibration: string[] = [];
    const recorded: { readonly demand: readonly RecordedRequest[]; readonly scenario: Scenario }[] = [];
    for (const [i, d] of driven.entries()) {
      const end = d.start + w.durationMs;
      const base = `${d.game.nsPath}/analytics/matchmaker/demand`;
      const res = await fetch(`${origin}${base}?start=${d.start}&end=${end}`, { headers: { authorization: `Bearer ${d.game.cloud}` } });
      if (res.status !== 200) throw new Error(`the export answered ${res.status}: ${await res.text()}`);
      const exported = await res.text();
      const demand = parseRecordedDemand(exported);
      if (!demand.ok) throw new Error(`the export does not parse: ${JSON.stringify(demand.error.slice(0, 3))}`);
      const observed = (await call(origin, 'GET', `${base}/observed?start=${d.start}&end=${end}`, d.game.cloud)) as unknown as Observed & { lobby_count_max: number; regions_info: RegionDescription[] };
      const version = (await call(origin, 'GET', `/cloud/games/${d.game.gameId}/versions/${d.versionId}`, d.game.cloud))['version'] as { config: unknown };
      const { scenario, report } = calibrateScenario({ version: version.config, observed, regions: observed.regions_info, lobbyCountMax: observed.lobby_count_max, name: 'fidelity', seed: w.seed + i });
      for (const line of report) calibration.push(`${several ? `namespace ${i + 1}: ` : ''}${line}`);
      if (keep !== undefined) {
        const suffix = several ? `-${i + 1}` : '';
        await mkdir(keep, { recursive: true });
        await writeFile(join(keep, `demand${suffix}.jsonl`), exported);
        // What calibration read (the observed answer and the version), so it can be redone offline (test/sim/recording).
        await writeFile(join(keep, `observed${suffix}.json`), `${JSON.stringify(observed, null, 2)}\n`);
        await writeFile(join(keep, `version${suffix}.json`), `${JSON.stringify(version.config, null, 2)}\n`);
        await writeFile(join(keep, `scenario${suffix}.json`), `${JSON.stringify(scenario, null, 2)}\n`);
        log(`kept: ${join(keep, `demand${suffix}.jsonl`)}, observed${suffix}.json, version${suffix}.json and scenario${suffix}.json (replay: tavern sim ${join(keep, `scenario${suffix}.json`)} --recorded ${join(keep, `demand${suffix}.jsonl`)})`);
      }
      const parsed = parseScenario(scenario, { externalDemand: true });
      if (!parsed.ok) throw new Error(`the calibrated scenario is invalid: ${parsed.error.map((p) => p.path.join('.')).join(', ')}`);
      recorded.push({ demand: demand.value, scenario: parsed.value });
    }
    for (const line of calibration) log(`calibration: ${line}`);

    await tavern.child.stop();
    const db = openDatabase(dataDir);
    const facts: DemandFact[][] = [];
    try {
      const store = new SqliteDemandStore(db);
      for (const d of driven) {
        const read: DemandFact[] = [];
        for await (const f of demandFacts(store, d.game.nsId, { from: d.start, to: d.start + w.durationMs })) read.push(f);
        facts.push(read);
      }
    } finally {
      db.close();
    }
    const server = combine(driven.map((d, i) => serverFigures(facts[i] as DemandFact[], d.seats, d.start, d.start + w.durationMs)));
    log(startDelays(facts, recorded.map((r) => r.scenario)));

    // The replay is a stochastic model (lobby start delays, and the sessions of requests the server
    // refused, are drawn): its figures are the mean of REPLAYS seeds, not one draw (see REPLAYS).
    // Replay r runs namespace i with seed `seed + i + r`; its figures add up over them like the server's.
    const replays: Figures[] = [];
    const rejections = new Map<string, number>();
    for (let r = 0; r < REPLAYS; r++) {
      const parts: Figures[] = [];
      for (const [i, { demand, scenario }] of recorded.entries()) {
        const replay = await runScenario(scenario, { recorded: demand, seed: w.seed + i + r });
        if (replay.violations.length > 0) throw new Error(`the replay broke invariants: ${replay.violations.slice(0, 3).join('; ')}`);
        const m = replay.metrics;
        for (const [code, n] of Object.entries(m.rejections)) count(rejections, code, n / REPLAYS);
        parts.push({
          lobbiesCreated: m.lobbies.created,
          peakLobbies: m.lobbies.peakActive,
          seated: m.served,
          refused: m.rejected,
          // The server answers a find once its seat is ready (a starting lobby's included): the
          // simulator's time to a ready seat, its calibrated answer time included.
          seatP50Ms: m.timeToReadyMs.p50,
          seatP95Ms: m.timeToReadyMs.p95,
          idleLobbySeconds: Math.round(m.idleLobbyHours * 3_600),
        });
      }
      replays.push(combine(parts));
    }
    const all = facts.flat();
    const codes = new Map<string, number>();
    for (const f of all) if (f.type === 'request' && f.outcome !== 'ok') count(codes, f.outcome, f.party);
    const stops = new Map<string, number>();
    for (const f of all) if (f.type === 'lobby' && f.step === 'stopped') count(stops, f.reason ?? '?');
    log(`lobbies stopped: server ${JSON.stringify(Object.fromEntries(stops))}`);
    // How long the runtime took from a lobby's stopping (not counted any more) to its container being gone.
    const stoppingAt = new Map<string, number>();
    for (const f of all) if (f.type === 'lobby' && f.step === 'stopping') stoppingAt.set(f.lobbyId, f.at);
    const stopping = new ValueCounts();
    for (const f of all) {
      const began = f.type === 'lobby' && f.step === 'stopped' ? stoppingAt.get(f.lobbyId) : undefined;
      if (began !== undefined) stopping.add(f.at - began);
    }
    const [stopP50 = NaN, stopP95 = NaN] = stopping.percentiles([50, 95]);
    log(`lobbies gone after they began to stop: median ${stopP50} ms, p95 ${stopP95} ms`);
    log(`refusals: server ${JSON.stringify(Object.fromEntries(codes))}, simulator (mean) ${JSON.stringify(Object.fromEntries([...rejections].map(([code, n]) => [code, Number(n.toFixed(2))])))}`);
    const figures = Object.keys(LABELS) as FigureName[];
    const mean = (f: FigureName): number => replays.reduce((n, r) => n + r[f], 0) / REPLAYS;
    const sd = (f: FigureName): number => Math.sqrt(replays.reduce((n, r) => n + (r[f] - mean(f)) ** 2, 0) / REPLAYS);
    log(`replays: ${REPLAYS} seeds; one replay's spread (sd): ${figures.map((f) => `${LABELS[f]} ${sd(f).toFixed(1)} (${((sd(f) / Math.max(1e-9, mean(f))) * 100).toFixed(1)} %)`).join(', ')}`);
    const sim = Object.fromEntries(figures.map((f) => [f, Math.round(mean(f) * 10) / 10])) as unknown as Figures;
    return { workload: w, server, sim, rows: rowsOf(server, sim), calibration, requests: driven.reduce((n, d) => n + d.requests, 0), wallMs: Date.now() - began };
  } finally {
    stop.abort();
    players.close();
    await tavern.child.stop();
    if (docker !== undefined) await removeRun(docker, instance, buildIds);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
