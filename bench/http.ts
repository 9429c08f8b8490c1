/**
 * `npm run bench -- http [--json] [--clients 1,64] [--rounds 3] [--duration 5000] [--warmup 1000]
 * [--max-players 256] [--idle 2] [--servers tavern,bare,colyseus] [--profile DIR] [--no-pin]
 * [--side-by-side]`: find+seat requests per second over HTTP against a running Tavern server on
 * SQLite, against the floor of any such request in Node (a bare node:http server) and against
 * Colyseus's HTTP seat reservation, under the same load in the same run.
 *
 * - `tavern`: `POST /matchmaker/lobbies/find` `{"game_modes":["default"]}` with a public namespace
 *   token, on the real server (`src/server/main.ts` compiled into the bench cache, plain `node`,
 *   child process) with a fresh SQLite data dir and the fake runtime (a new lobby is ready as soon
 *   as it starts), set up over HTTP like the CLI does (`http-tavern.ts`), configured as it ships:
 *   demand recording on, rate limits on at their defaults (every find comes from another address,
 *   so none is refused, but each is counted: the limiter's worst case for memory).
 * - `tavern-no-limits`: the same with its rate limits off (`TAVERN_RATE_LIMITS=off`);
 *   `tavern-no-demand`: with demand recording off (`TAVERN_DEMAND_RETENTION=off`). Either beside
 *   `tavern` prints the rate with the feature on over off (`limits_ratio`, `demand_ratio`; the
 *   issue's bound for recording: at least 0.97).
 * - `bare`: a bare `node:http` server (`peers/bare-http.ts`, child process) that reads the request
 *   and answers the bytes of a Tavern find answer (taken from one find before the rounds): what
 *   the same exchange costs Node alone. The run prints Tavern's rate over bare's (`bare_share`),
 *   their CPU per request (`bare_cpu_share`) and p99s (`bare_p99_ratio`).
 * - `colyseus`: Colyseus 0.18, `POST /matchmake/joinOrCreate/lobby` `{}` on a real Colyseus
 *   `Server` with its WebSocket transport (child process, `peers/colyseus/http.ts`, its package
 *   installed on first use).
 *
 * Seats: one game mode / room type whose lobbies hold `--max-players` (default 256). Seats are
 * held for the whole run (Tavern: a reserved player expires after its 2-minute connect window;
 * Colyseus: `seatReservationTimeout` 120 s), so lobbies fill and each matchmaker creates new ones
 * as it goes (Tavern: `lobby_count_max` raised to 32768, ~6 lobbies per 1,500 finds, and the
 * idle update after the find that takes an idle lobby starts its replacement, so `--idle` lobbies
 * stay ready ahead of the finds; Colyseus: unbounded). Every find comes from its own
 * client address (`x-forwarded-for`, trusted by default), as distinct players would, so Tavern's
 * per-address seat cap never binds (it is raised to 256 too).
 *
 * Load: a fresh server per measured run; `concurrency` closed-loop clients over kept-alive
 * connections (`http-load.ts`), a warm-up, then the measured window: rate of 200 answers, latency
 * percentiles, and the server's CPU time per request (`/proc`, all its threads). On a machine with
 * two or more cores the servers run on CPU 1 and this process (the load generator) on CPU 0
 * (`taskset`), unless `--no-pin`. More than 1% failed requests (non-200 or transport errors) in a
 * run fails the bench.
 *
 * Rounds: the whole set of runs is repeated `--rounds` times (default 3), the servers back to back
 * at each client count, so each round's ratio compares them within seconds of each other: on a
 * shared machine the speed of both moves by up to 2× from minute to minute. The table and
 * `--json` give each figure's median over the rounds, and each ratio is the median of the rounds'
 * ratios (each round's is listed too). Targets at 64 clients (or the largest `--clients`), each
 * printed as met or not and in `--json`'s `targets`: Tavern ≥ 3× Colyseus's rate and p99 ≤ 10 ms
 * (issue 16; in a closed loop the mean latency is concurrency / rate, so p99 ≤ 10 ms at 64 clients
 * also needs ≥ 6,400 finds/s); Tavern ≥ 50 % of bare's rate and p99 ≤ 2× bare's (issue 39).
 *
 * `--profile DIR` runs Tavern and bare with `--cpu-prof`, each run's profile in its own folder
 * `DIR/<server>-c<clients>-r<round>` with a `run.json` (the measured window on the monotonic
 * clock, the requests in it): `npm run bench -- profile DIR/<that folder>` says where the time of
 * the window went, per request.
 *
 * `--side-by-side` (two servers other than Colyseus, e.g. `--servers tavern,tavern-no-demand
 * --clients 64`): instead of one after the other, each round runs both servers at once on the same
 * CPU, each with its own `--clients` connections from this process, measured in the same seconds:
 * a busy or drifting machine slows both alike, where back-to-back runs swing by ±30 % between
 * rounds on this 2-core machine and hide a difference of a few percent. The kernel shares the core
 * between threads, not processes: a server whose V8 helper threads (compiler, collector) work more
 * takes more than half of the core, so the ratio of the rates understates its cost; the ratio of
 * their CPU per request (all threads, from `/proc`) is the rate each would have on a core of its
 * own. Latencies side by side say nothing of either server alone. The pair starts in the given
 * order in odd rounds and swapped in even ones (the one started first is 1–1.5 % slower here);
 * use an odd number of rounds ≥ 9.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canPin, cpuSeconds, pinSelf, SERVER_NODE_FLAGS, spawnServer, waitHealthy, type ServerChild } from './http-child.js';
import { runLoad, type LoadResult, type Shot } from './http-load.js';
import { report, type Run, type Server } from './http-report.js';
import { startTavern } from './http-tavern.js';
import { intArg, value } from './measure.js';
import { colyseusHttpMain } from './colyseus.js';

const MAX_ERROR_SHARE = 0.01;
const SERVERS: readonly Server[] = ['tavern', 'tavern-no-limits', 'tavern-no-demand', 'bare', 'colyseus'];

interface Settings {
  readonly json: boolean;
  readonly clients: readonly number[];
  readonly rounds: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly maxPlayers: number;
  readonly idleLobbies: number;
  readonly profileDir?: string;
  readonly pin: boolean;
  readonly servers: readonly Server[];
  readonly sideBySide: boolean;
}

const parseSettings = (args: readonly string[]): Settings => {
  const servers = (value(args, '--servers') ?? 'tavern,bare,colyseus').split(',').map((name) => {
    const server = SERVERS.find((s) => s === name);
    if (server === undefined) throw new RangeError(`--servers lists ${SERVERS.join(', ')}, got ${name}`);
    return server;
  });
  const sideBySide = args.includes('--side-by-side');
  if (sideBySide && (servers.length !== 2 || servers.includes('colyseus') || servers[0] === servers[1])) {
    throw new RangeError(`--side-by-side compares two servers other than colyseus (e.g. --servers tavern,tavern-no-demand), got ${servers.join(',')}`);
  }
  const clients = (value(args, '--clients') ?? '1,64').split(',').map((c) => intArg(['--clients', c], '--clients', 1, 1, 4096));
  const profile = value(args, '--profile');
  return {
    json: args.includes('--json'),
    clients,
    rounds: intArg(args, '--rounds', 3, 1, 20),
    durationMs: intArg(args, '--duration', 5_000, 1, Number.MAX_SAFE_INTEGER),
    warmupMs: intArg(args, '--warmup', 1_000, 0, Number.MAX_SAFE_INTEGER),
    maxPlayers: intArg(args, '--max-players', 256, 1, 256),
    idleLobbies: intArg(args, '--idle', 2, 0, 16),
    ...(profile === undefined ? {} : { profileDir: resolve(profile) }),
    pin: !args.includes('--no-pin'),
    servers,
    sideBySide,
  };
};

/** A distinct IPv4 address per request (10.0.0.0/8): every find is another player. */
const addressOf = (n: number): string => `10.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

const shots = (path: string, token: string | undefined, body: string): ((n: number) => Shot) => {
  const bytes = Buffer.from(body);
  const base = {
    'content-type': 'application/json',
    'content-length': String(bytes.length),
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
  };
  return (n) => ({ path, headers: { ...base, 'x-forwarded-for': addressOf(n) }, body: bytes });
};

const expectKeys = (what: string, paths: readonly (readonly string[])[]) => (body: string): void => {
  const parsed = JSON.parse(body) as unknown;
  for (const path of paths) {
    let at: unknown = parsed;
    for (const key of path) at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
    if (typeof at !== 'string') throw new Error(`${what}: the answer has no ${path.join('.')}: ${body.slice(0, 300)}`);
  }
};

const FIND = '{"game_modes":["default"]}';
const checkSeat = expectKeys('find', [['lobby', 'lobby_id'], ['player', 'token']]);

/** A server ready for load: what to send it, how to check its first answer, its process. */
interface Target {
  readonly server: Server;
  readonly origin: string;
  readonly pid: number;
  readonly shot: (n: number) => Shot;
  readonly check: (body: string) => void;
  stop(): Promise<void>;
}

/** Where one run's CPU profile goes (`--profile`), or undefined. */
type ProfileOf = (server: Server) => string | undefined;

const startTavernVariant = async (s: Settings, cpu: number | undefined, server: Server, profileDir: string | undefined): Promise<Target> => {
  const tavern = await startTavern({
    maxPlayers: s.maxPlayers,
    idleLobbies: s.idleLobbies,
    rateLimits: server === 'tavern-no-limits' ? 'off' : 'on',
    ...(server === 'tavern-no-demand' ? { demandRetention: 'off' } : {}),
    ...(cpu === undefined ? {} : { cpu }),
    ...(profileDir === undefined ? {} : { profileDir }),
  });
  return { server, origin: tavern.origin, pid: tavern.child.pid, shot: shots('/matchmaker/lobbies/find', tavern.publicToken, FIND), check: checkSeat, stop: () => tavern.stop() };
};

const portLine = (line: string): number | undefined => {
  try {
    const { port } = JSON.parse(line) as { port?: unknown };
    return typeof port === 'number' ? port : undefined;
  } catch {
    return undefined;
  }
};

const fromChild = (server: Server, child: ServerChild, shot: (n: number) => Shot, check: (body: string) => void): Target =>
  ({ server, origin: child.origin, pid: child.pid, shot, check, stop: () => child.stop() });

/** The body of one Tavern find answer (the bare server's canned answer): a server set up as the measured ones, one find. */
const tavernAnswer = async (s: Settings): Promise<string> => {
  const tavern = await startTavernVariant(s, undefined, 'tavern', undefined);
  try {
    const shot = tavern.shot(0);
    const res = await fetch(`${tavern.origin}${shot.path}`, { method: 'POST', headers: shot.headers, body: shot.body });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`tavern: the find for bare's answer answered ${res.status}: ${body.slice(0, 300)}`);
    checkSeat(body);
    return body;
  } finally {
    await tavern.stop();
  }
};

const BARE_MAIN = fileURLToPath(new URL('./peers/bare-http.js', import.meta.url));
const COLYSEUS_ROOM = 'lobby';

const start = async (s: Settings, cpu: number | undefined, server: Server, answer: string | undefined, profileOf: ProfileOf): Promise<Target> => {
  const pinned = cpu === undefined ? {} : { cpu };
  const profileDir = profileOf(server);
  if (server === 'bare') {
    if (answer === undefined) throw new Error('bare needs a Tavern answer');
    const child = await spawnServer({ name: 'bare', args: [...SERVER_NODE_FLAGS, BARE_MAIN, answer], ...pinned, ...(profileDir === undefined ? {} : { profileDir }), portOf: portLine });
    return fromChild(server, child, shots('/matchmaker/lobbies/find', undefined, FIND), checkSeat);
  }
  if (server === 'colyseus') {
    const child = await spawnServer({ name: 'colyseus', args: [...SERVER_NODE_FLAGS, colyseusHttpMain(), '--room', COLYSEUS_ROOM, '--max-clients', String(s.maxPlayers)], ...pinned, portOf: portLine });
    try {
      await waitHealthy(child.origin, '/__healthcheck');
    } catch (error) {
      await child.stop();
      throw error;
    }
    return fromChild(server, child, shots(`/matchmake/joinOrCreate/${COLYSEUS_ROOM}`, undefined, '{}'), expectKeys('colyseus joinOrCreate', [['roomId'], ['sessionId']]));
  }
  return startTavernVariant(s, cpu, server, profileDir);
};

const load = (s: Settings, concurrency: number, target: Target): Promise<LoadResult> =>
  runLoad({
    origin: target.origin, concurrency, warmupMs: s.warmupMs, durationMs: s.durationMs,
    shot: target.shot, check: target.check, serverCpu: () => cpuSeconds(target.pid),
  });

/** The servers started together (one, or the pair side by side), loaded at once, stopped. */
const measure = async (s: Settings, concurrency: number, cpu: number | undefined, servers: readonly Server[], answer: string | undefined, profileOf: ProfileOf): Promise<(LoadResult & { server: Server })[]> => {
  const started: Target[] = [];
  try {
    for (const server of servers) started.push(await start(s, cpu, server, answer, profileOf));
    return await Promise.all(started.map(async (t) => ({ server: t.server, ...(await load(s, concurrency, t)) })));
  } finally {
    await Promise.all(started.map((t) => t.stop()));
  }
};

/**
 * The pair in the order a round starts and loads them: swapped every other round. Which one starts
 * first is worth 1–1.5 % to the other on this machine (measured with the same variant in both
 * places), a bias that alternating cancels in the median of the rounds' ratios.
 */
const pairInRound = (pair: readonly Server[], round: number): readonly Server[] => (round % 2 === 0 ? [...pair].reverse() : pair);

export const httpBench = async (args: readonly string[]): Promise<void> => {
  const s = parseSettings(args);
  const log = (line: string): void => {
    if (!s.json) process.stderr.write(`${line}\n`);
  };
  const pinned = s.pin && canPin() && pinSelf(0);
  const serverCpu = pinned ? 1 : undefined;
  log(pinned ? 'load generator on CPU 0, servers on CPU 1' : 'not pinned to CPUs');
  const answer = s.servers.includes('bare') ? await tavernAnswer(s) : undefined;
  if (answer !== undefined) log(`bare answers ${Buffer.byteLength(answer)} bytes (a Tavern find's answer)`);

  const runs: Run[] = [];
  for (let round = 1; round <= s.rounds; round++) {
    for (const c of s.clients) {
      const profileOf: ProfileOf = (server) => {
        if (s.profileDir === undefined || server === 'colyseus') return undefined;
        const dir = join(s.profileDir, `${server}-c${c}-r${round}`);
        mkdirSync(dir, { recursive: true });
        return dir;
      };
      const record = (run: LoadResult & { server: Server }): void => {
        runs.push({ ...run, round });
        log(`round ${round}/${s.rounds}, ${run.server} @ ${c}: ${run.rps.toFixed(0)} req/s, p99 ${run.p99_ms.toFixed(2)} ms, ${run.errors} errors`);
        const dir = profileOf(run.server);
        if (dir !== undefined) writeFileSync(join(dir, 'run.json'), `${JSON.stringify({ server: run.server, round, concurrency: c, requests: run.requests, window_us: run.window_us })}\n`);
      };
      if (s.sideBySide) (await measure(s, c, serverCpu, pairInRound(s.servers, round), answer, profileOf)).forEach(record);
      else for (const server of s.servers) (await measure(s, c, serverCpu, [server], answer, profileOf)).forEach(record);
    }
  }

  report(runs, {
    json: s.json, clients: s.clients, servers: s.servers, rounds: s.rounds,
    settings: { duration_ms: s.durationMs, warmup_ms: s.warmupMs, max_players: s.maxPlayers, idle_lobbies: s.idleLobbies, pinned, side_by_side: s.sideBySide },
  });
  const failures = runs.filter((r) => r.requests === 0 || r.errors > MAX_ERROR_SHARE * r.requests);
  if (failures.length > 0) {
    for (const f of failures) {
      process.stderr.write(`${f.server} @ ${f.concurrency}: ${f.errors} of ${f.requests} requests failed ${JSON.stringify(f.errorKinds)}${f.errorSample === undefined ? '' : `, e.g. ${f.errorSample}`}\n`);
    }
    throw new Error(`more than ${MAX_ERROR_SHARE * 100}% of requests failed in ${failures.length} run(s)`);
  }
};
