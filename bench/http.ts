/**
 * `npm run bench -- http [--json] [--clients 1,64] [--rounds 3] [--duration 5000] [--warmup 1000]
 * [--max-players 256] [--idle 2] [--servers tavern,colyseus] [--profile DIR] [--no-pin]`:
 * find+seat requests per second over HTTP against a running Tavern server on SQLite, and
 * Colyseus's HTTP seat reservation under the same load in the same run.
 *
 * - Tavern: `POST /matchmaker/lobbies/find` `{"game_modes":["default"]}` with a public namespace
 *   token, on the real server (`src/server/main.ts` compiled into the bench cache, plain `node`,
 *   child process) with a fresh SQLite data dir and the fake runtime (a new lobby is ready as soon
 *   as it starts), set up over HTTP like the CLI does (`http-tavern.ts`).
 * - Colyseus 0.18: `POST /matchmake/joinOrCreate/lobby` `{}` on a real Colyseus `Server` with its
 *   WebSocket transport (child process, `peers/colyseus/http.ts`, its package installed on first use).
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
 * Rounds: the whole set of runs is repeated `--rounds` times (default 3), Tavern and Colyseus back
 * to back at each client count, so each round's ratio compares the two servers within seconds of
 * each other: on a shared machine the speed of both moves by up to 2× from minute to minute. The
 * table and `--json` give each figure's median over the rounds, and the ratio is the median of the
 * rounds' ratios (each round's is listed too).
 *
 * Target (issue): at 64 concurrent clients Tavern ≥ 3× Colyseus's rate and Tavern p99 ≤ 10 ms.
 * In a closed loop the mean latency is concurrency / rate (Little's law), so p99 ≤ 10 ms at 64
 * clients also needs ≥ 6,400 finds/s. `--json` prints one object with `tavern_rps`,
 * `colyseus_rps`, `tavern_p99_ms` (medians at 64 clients, or the largest `--clients`), `ratio`,
 * `ratios` (per round) and every run.
 * `--profile DIR` runs the Tavern servers with `--cpu-prof` and leaves the profiles in DIR.
 *
 * Tavern runs with its rate limits off (`TAVERN_RATE_LIMITS=off`): the benchmark measures finds.
 * `--servers tavern,tavern-limits` adds Tavern with them on at their defaults, back to back in
 * each round: every find comes from another address, so none is refused but each is counted
 * (the limiter's worst case for memory); the run prints the rate with limits over without
 * (`limits_ratio` in `--json`).
 *
 * Tavern records demand (the default, `TAVERN_DEMAND_RETENTION` unset). `--servers
 * tavern,tavern-no-demand` adds Tavern with recording off (`TAVERN_DEMAND_RETENTION=off`), back to
 * back in each round; the run prints the rate with recording over without (`demand_ratio` in
 * `--json`; the issue's bound: at least 0.97).
 *
 * `--side-by-side` (two Tavern variants, e.g. `--servers tavern,tavern-no-demand --clients 64`):
 * instead of one after the other, each round runs both servers at once on the same CPU, each
 * with its own `--clients` connections from this process, measured in the same seconds: a busy or
 * drifting machine slows both alike, where back-to-back runs swing by ±30 % between rounds on
 * this 2-core machine and hide a difference of a few percent. The kernel shares the core between
 * threads, not processes: a variant whose V8 helper threads (compiler, collector) work more takes
 * more than half of the core, so the ratio of the rates understates its cost. The run also prints
 * the ratio of their CPU per request (all threads, from `/proc`), off over on: the rate each would
 * have on a core of its own (`demand_cpu_ratio`, `limits_cpu_ratio` in `--json`).
 * The pair starts in the given order in odd rounds and swapped in even ones (the one started
 * first is 1–1.5 % slower here); use an odd number of rounds ≥ 9.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { canPin, cpuSeconds, pinSelf, spawnServer, waitHealthy } from './http-child.js';
import { runLoad, type LoadResult, type Shot } from './http-load.js';
import { startTavern } from './http-tavern.js';
import { table } from './measure.js';
import { colyseusHttpMain } from './colyseus.js';

const TARGET_RATIO = 3;
const TARGET_P99_MS = 10;
const MAX_ERROR_SHARE = 0.01;

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
  readonly servers: readonly Run['server'][];
  readonly sideBySide: boolean;
}

const value = (args: readonly string[], name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

/** An integer option in [min, max], or `fallback` when absent. */
const intArg = (raw: string | undefined, name: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number => {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${raw}`);
  return n;
};

const parseSettings = (args: readonly string[]): Settings => {
  const servers = (value(args, '--servers') ?? 'tavern,colyseus').split(',').map((name) => {
    if (name !== 'tavern' && name !== 'tavern-limits' && name !== 'tavern-no-demand' && name !== 'colyseus') {
      throw new RangeError(`--servers lists tavern, tavern-limits, tavern-no-demand and/or colyseus, got ${name}`);
    }
    return name;
  });
  const sideBySide = args.includes('--side-by-side');
  if (sideBySide && (servers.length !== 2 || servers.includes('colyseus') || servers[0] === servers[1])) {
    throw new RangeError(`--side-by-side compares two Tavern variants (e.g. --servers tavern,tavern-no-demand), got ${servers.join(',')}`);
  }
  const clients = (value(args, '--clients') ?? '1,64').split(',').map((c) => intArg(c, '--clients', 1, 1, 4096));
  const profile = value(args, '--profile');
  return {
    json: args.includes('--json'),
    clients,
    rounds: intArg(value(args, '--rounds'), '--rounds', 3, 1, 20),
    durationMs: intArg(value(args, '--duration'), '--duration', 5_000),
    warmupMs: intArg(value(args, '--warmup'), '--warmup', 1_000, 0),
    maxPlayers: intArg(value(args, '--max-players'), '--max-players', 256, 1, 256),
    idleLobbies: intArg(value(args, '--idle'), '--idle', 2, 0, 16),
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

interface Run extends LoadResult {
  readonly server: 'tavern' | 'tavern-limits' | 'tavern-no-demand' | 'colyseus';
}

type TavernVariant = Exclude<Run['server'], 'colyseus'>;

/** The median of some numbers (the mean of the middle two for an even count); NaN for none. */
const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** One server at one client count over the rounds: each figure's median (the max's max), errors summed. */
type Summary = Pick<Run, 'server' | 'concurrency' | 'rps' | 'p50_ms' | 'p90_ms' | 'p99_ms' | 'max_ms' | 'errors' | 'cpu_us_per_request'> & {
  readonly rounds: number;
};

const summarize = (runs: readonly Run[]): Summary => {
  const [first] = runs;
  if (first === undefined) throw new Error('no runs to summarize');
  const cpu = runs.flatMap((r) => (r.cpu_us_per_request === undefined ? [] : [r.cpu_us_per_request]));
  return {
    server: first.server,
    concurrency: first.concurrency,
    rounds: runs.length,
    rps: median(runs.map((r) => r.rps)),
    p50_ms: median(runs.map((r) => r.p50_ms)),
    p90_ms: median(runs.map((r) => r.p90_ms)),
    p99_ms: median(runs.map((r) => r.p99_ms)),
    max_ms: Math.max(...runs.map((r) => r.max_ms)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    ...(cpu.length === 0 ? {} : { cpu_us_per_request: median(cpu) }),
  };
};

/**
 * Tavern, with its rate limits off (`tavern`) or on at their defaults (`tavern-limits`: every find
 * comes from another address, so none is refused, but each is counted), or with demand recording
 * off (`tavern-no-demand`).
 */
const startVariant = (s: Settings, cpu: number | undefined, server: TavernVariant): ReturnType<typeof startTavern> =>
  startTavern({
    maxPlayers: s.maxPlayers,
    idleLobbies: s.idleLobbies,
    rateLimits: server === 'tavern-limits' ? 'on' : 'off',
    ...(server === 'tavern-no-demand' ? { demandRetention: 'off' } : {}),
    ...(cpu === undefined ? {} : { cpu }),
    ...(s.profileDir === undefined ? {} : { profileDir: s.profileDir }),
  });

const loadTavern = async (s: Settings, concurrency: number, tavern: Awaited<ReturnType<typeof startTavern>>, server: TavernVariant): Promise<Run> => {
  const result = await runLoad({
    origin: tavern.origin,
    concurrency,
    warmupMs: s.warmupMs,
    durationMs: s.durationMs,
    shot: shots('/matchmaker/lobbies/find', tavern.publicToken, '{"game_modes":["default"]}'),
    check: expectKeys('tavern find', [['lobby', 'lobby_id'], ['player', 'token']]),
    serverCpu: () => cpuSeconds(tavern.child.pid),
  });
  return { server, ...result };
};

const measureTavern = async (s: Settings, concurrency: number, cpu: number | undefined, server: TavernVariant): Promise<Run> => {
  const tavern = await startVariant(s, cpu, server);
  try {
    return await loadTavern(s, concurrency, tavern, server);
  } finally {
    await tavern.stop();
  }
};

/**
 * The pair in the order a round starts and loads them: swapped every other round. Which one starts
 * first is worth 1–1.5 % to the other on this machine (measured with the same variant in both
 * places), a bias that alternating cancels in the median of the rounds' ratios.
 */
const pairInRound = (pair: readonly [TavernVariant, TavernVariant], round: number): readonly [TavernVariant, TavernVariant] =>
  round % 2 === 0 ? [pair[1], pair[0]] : pair;

/** Two Tavern variants on the same CPU at once, each under its own `concurrency` connections (`--side-by-side`). */
const measurePair = async (s: Settings, concurrency: number, cpu: number | undefined, pair: readonly [TavernVariant, TavernVariant]): Promise<Run[]> => {
  const started: Awaited<ReturnType<typeof startTavern>>[] = [];
  try {
    for (const server of pair) started.push(await startVariant(s, cpu, server));
    return await Promise.all(pair.map((server, i) => loadTavern(s, concurrency, started[i] as Awaited<ReturnType<typeof startTavern>>, server)));
  } finally {
    await Promise.all(started.map((t) => t.stop()));
  }
};

const COLYSEUS_ROOM = 'lobby';

const colyseusPort = (line: string): number | undefined => {
  try {
    const { port } = JSON.parse(line) as { port?: unknown };
    return typeof port === 'number' ? port : undefined;
  } catch {
    return undefined;
  }
};

const measureColyseus = async (s: Settings, concurrency: number, cpu: number | undefined): Promise<Run> => {
  const child = await spawnServer({
    name: 'colyseus',
    args: [colyseusHttpMain(), '--room', COLYSEUS_ROOM, '--max-clients', String(s.maxPlayers)],
    ...(cpu === undefined ? {} : { cpu }),
    portOf: colyseusPort,
  });
  try {
    await waitHealthy(child.origin, '/__healthcheck');
    const result = await runLoad({
      origin: child.origin,
      concurrency,
      warmupMs: s.warmupMs,
      durationMs: s.durationMs,
      shot: shots(`/matchmake/joinOrCreate/${COLYSEUS_ROOM}`, undefined, '{}'),
      check: expectKeys('colyseus joinOrCreate', [['roomId'], ['sessionId']]),
      serverCpu: () => cpuSeconds(child.pid),
    });
    return { server: 'colyseus', ...result };
  } finally {
    await child.stop();
  }
};

const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '-');
const rate = (n: number): string => n.toFixed(0);

export const httpBench = async (args: readonly string[]): Promise<void> => {
  const s = parseSettings(args);
  const log = (line: string): void => {
    if (!s.json) process.stderr.write(`${line}\n`);
  };
  if (s.profileDir !== undefined) mkdirSync(s.profileDir, { recursive: true });
  const pinned = s.pin && canPin() && pinSelf(0);
  const serverCpu = pinned ? 1 : undefined;
  log(pinned ? 'load generator on CPU 0, servers on CPU 1' : 'not pinned to CPUs');

  const runs: (Run & { readonly round: number })[] = [];
  for (let round = 1; round <= s.rounds; round++) {
    for (const c of s.clients) {
      const record = (run: Run): void => {
        runs.push({ ...run, round });
        log(`round ${round}/${s.rounds}, ${run.server} @ ${c}: ${rate(run.rps)} req/s, p99 ${ms(run.p99_ms)} ms, ${run.errors} errors`);
      };
      if (s.sideBySide) (await measurePair(s, c, serverCpu, pairInRound(s.servers as [TavernVariant, TavernVariant], round))).forEach(record);
      else for (const server of s.servers) record(server === 'colyseus' ? await measureColyseus(s, c, serverCpu) : await measureTavern(s, c, serverCpu, server));
    }
  }

  const runsOf = (server: Run['server'], c: number) => runs.filter((r) => r.server === server && r.concurrency === c);
  const at = (server: Run['server'], c: number): Summary | undefined => {
    const of = runsOf(server, c);
    return of.length === 0 ? undefined : summarize(of);
  };
  /** Each round's `ratio` of `server`'s run to `base`'s at `c` clients, in the rounds where both ran and it is defined. */
  const perRound = (c: number, server: Run['server'], base: Run['server'], ratio: (run: Run, other: Run) => number | undefined): number[] =>
    runsOf(server, c).flatMap((t) => {
      const other = runs.find((r) => r.server === base && r.concurrency === c && r.round === t.round);
      const x = other === undefined ? undefined : ratio(t, other);
      return x === undefined ? [] : [x];
    });
  /** Each round's rate of `server` over `base`'s at `c` clients (Tavern / Colyseus by default). */
  const ratiosAt = (c: number, server: Run['server'] = 'tavern', base: Run['server'] = 'colyseus'): number[] =>
    perRound(c, server, base, (t, other) => t.rps / other.rps);
  /** Each round's CPU per request of `base` over `server`'s at `c` clients: the rate ratio on a core of its own each. */
  const cpuRatiosAt = (c: number, server: Run['server'], base: Run['server']): number[] =>
    perRound(c, server, base, (t, other) =>
      other.cpu_us_per_request === undefined || t.cpu_us_per_request === undefined ? undefined : other.cpu_us_per_request / t.cpu_us_per_request);
  const headline = s.clients.includes(64) ? 64 : Math.max(...s.clients);
  /** With limits on over off, when both ran. */
  const limitsRatios = ratiosAt(headline, 'tavern-limits', 'tavern');
  const limitsCpuRatios = cpuRatiosAt(headline, 'tavern-limits', 'tavern');
  /** With demand recording on over off, when both ran. */
  const demandRatios = ratiosAt(headline, 'tavern', 'tavern-no-demand');
  const demandCpuRatios = cpuRatiosAt(headline, 'tavern', 'tavern-no-demand');
  const tavern = at('tavern', headline);
  const colyseus = at('colyseus', headline);
  const ratios = ratiosAt(headline);
  const ratio = median(ratios);
  const targets = {
    ratio_ok: ratio >= TARGET_RATIO,
    p99_ok: tavern !== undefined && tavern.p99_ms <= TARGET_P99_MS,
  };
  const failures = runs.filter((r) => r.requests === 0 || r.errors > MAX_ERROR_SHARE * r.requests);

  if (s.json) {
    process.stdout.write(`${JSON.stringify({
      bench: 'http',
      clients: headline,
      tavern_rps: tavern?.rps ?? null,
      colyseus_rps: colyseus?.rps ?? null,
      tavern_p99_ms: tavern?.p99_ms ?? null,
      tavern_p50_ms: tavern?.p50_ms ?? null,
      colyseus_p50_ms: colyseus?.p50_ms ?? null,
      colyseus_p99_ms: colyseus?.p99_ms ?? null,
      ratio: Number.isFinite(ratio) ? ratio : null,
      ratios,
      ...(limitsRatios.length === 0 ? {} : { limits_ratio: median(limitsRatios), limits_ratios: limitsRatios }),
      ...(limitsCpuRatios.length === 0 ? {} : { limits_cpu_ratio: median(limitsCpuRatios), limits_cpu_ratios: limitsCpuRatios }),
      ...(demandRatios.length === 0 ? {} : { demand_ratio: median(demandRatios), demand_ratios: demandRatios }),
      ...(demandCpuRatios.length === 0 ? {} : { demand_cpu_ratio: median(demandCpuRatios), demand_cpu_ratios: demandCpuRatios }),
      rounds: s.rounds,
      targets: { ratio: TARGET_RATIO, p99_ms: TARGET_P99_MS, ...targets },
      settings: { duration_ms: s.durationMs, warmup_ms: s.warmupMs, max_players: s.maxPlayers, idle_lobbies: s.idleLobbies, pinned, side_by_side: s.sideBySide },
      runs: runs.map(({ errorSample: _sample, ...r }) => r),
    })}\n`);
  } else {
    const summaries = s.clients.flatMap((c) => s.servers.flatMap((server) => at(server, c) ?? []));
    const rows = summaries.map((r) => [
      r.server, String(r.concurrency), rate(r.rps), ms(r.p50_ms), ms(r.p90_ms), ms(r.p99_ms), ms(r.max_ms), String(r.errors),
      r.cpu_us_per_request === undefined ? '-' : r.cpu_us_per_request.toFixed(0),
    ]);
    process.stdout.write(`medians over ${s.rounds} round${s.rounds === 1 ? '' : 's'}\n`);
    process.stdout.write(`${table(['server', 'clients', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'errors', 'server cpu µs/req'], rows)}\n`);
    for (const c of s.clients) {
      const each = ratiosAt(c);
      if (each.length > 0) {
        process.stdout.write(`tavern / colyseus at ${c} client${c === 1 ? '' : 's'}: ${median(each).toFixed(2)}x (rounds: ${each.map((x) => `${x.toFixed(2)}x`).join(', ')})\n`);
      }
    }
    const onOff = (what: string, rates: readonly number[], cpu: readonly number[]): void => {
      if (rates.length === 0) return;
      const listed = (xs: readonly number[]): string => xs.map((x) => `${x.toFixed(3)}x`).join(', ');
      process.stdout.write(`tavern with ${what} on / off at ${headline} clients: ${median(rates).toFixed(3)}x (rounds: ${listed(rates)})\n`);
      if (cpu.length > 0) process.stdout.write(`  CPU per request off / on (the rate on a core of its own): ${median(cpu).toFixed(3)}x (rounds: ${listed(cpu)})\n`);
    };
    onOff('rate limits', limitsRatios, limitsCpuRatios);
    onOff('demand recording', demandRatios, demandCpuRatios);
    process.stdout.write(
      `target at ${headline} clients: >= ${TARGET_RATIO}x colyseus (${Number.isFinite(ratio) ? ratio.toFixed(2) : '-'}x: ${targets.ratio_ok ? 'met' : 'NOT met'}), ` +
        `tavern p99 <= ${TARGET_P99_MS} ms (${ms(tavern?.p99_ms ?? NaN)} ms: ${targets.p99_ok ? 'met' : 'NOT met'})\n`,
    );
  }
  if (failures.length > 0) {
    for (const f of failures) {
      process.stderr.write(`${f.server} @ ${f.concurrency}: ${f.errors} of ${f.requests} requests failed ${JSON.stringify(f.errorKinds)}${f.errorSample === undefined ? '' : `, e.g. ${f.errorSample}`}\n`);
    }
    throw new Error(`more than ${MAX_ERROR_SHARE * 100}% of requests failed in ${failures.length} run(s)`);
  }
};
