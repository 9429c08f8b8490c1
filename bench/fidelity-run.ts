/**
 * Fidelity, proven (issue 23 item 4): a real Tavern server process (HTTP, the fake runtime with a
 * lobby ready delay drawn from a known distribution) is driven in real time by a synthetic
 * workload of finds whose players connect and leave after a drawn session; what it recorded is
 * exported (`.../analytics/matchmaker/demand`), a scenario is calibrated from what it observed
 * (`.../demand/observed`, the function behind `tavern sim calibrate`), the export is replayed in
 * the simulator, and the same figures are computed on both sides. Shared by
 * `test/sim/fidelity.test.ts` and `npm run bench -- fidelity`.
 */
import { setMaxListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDemandStore } from '../src/adapters/sqlite/demand-store.js';
import { openDatabase } from '../src/adapters/sqlite/schema.js';
import type { DemandFact } from '../src/io/demand.js';
import { createStream, sample, type NumericDistribution, type Stream } from '../src/sim/engine/random.js';
import { ValueCounts } from '../src/sim/engine/stats.js';
import { calibrateScenario, type Observed, type RegionDescription } from '../src/sim/scenario/calibrate.js';
import { parseScenario } from '../src/sim/scenario/parse.js';
import { parseRecordedDemand } from '../src/sim/scenario/recorded.js';
import { CONNECT_DELAY, runScenario } from '../src/sim/world/run.js';
import { call, createGame, publicToken, publishVersion, setLimits, spawnTavern, str, uploadBuild, type BenchGame } from './http-tavern.js';

/** The workload: its rules are the ones a replay must reproduce. */
export interface Workload {
  /** Real time the finds arrive over. */
  readonly durationMs: number;
  /** Finds per second (a Poisson process). */
  readonly findsPerSecond: number;
  /** The fake runtime's lobby ready delay (`TAVERN_FAKE_READY_DELAY`). */
  readonly readyDelayMs: NumericDistribution;
  /** How long each player stays connected. */
  readonly sessionMs: NumericDistribution;
  /** Players per lobby (`max_players`). */
  readonly maxPlayers: number;
  /** Lobbies the namespace may run (`lobby_count_max`): finds beyond it are refused. */
  readonly lobbyCountMax: number;
  readonly idleLobbies: { readonly min: number; readonly max: number };
  readonly seed: number;
}

/**
 * Three minutes: what the test runs. One player per lobby, so most finds start a lobby and
 * wait for it (the ready delay is what time to seat measures), and more players at once than
 * `lobby_count_max` allows, so some finds are refused.
 */
export const TEST_WORKLOAD: Workload = Object.freeze({
  durationMs: 180_000,
  findsPerSecond: 1.5,
  readyDelayMs: Object.freeze({ kind: 'lognormal', median: 1_500, p95: 3_000 }),
  sessionMs: Object.freeze({ kind: 'lognormal', median: 8_000, p95: 20_000 }),
  maxPlayers: 1,
  lobbyCountMax: 16,
  idleLobbies: Object.freeze({ min: 1, max: 2 }),
  seed: 23,
});

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

/**
 * The workload's players: a find each (a Poisson process), then, once seated, a connection after a
 * client delay (drawn as the simulator draws one it does not know; the export records each, and the
 * replay reproduces it), a session, a disconnection. Runs until `durationMs` after
 * `start`; sessions still going then are cut off by `stop`.
 */
async function drive(origin: string, pub: string, lobbyDir: string, w: Workload, start: number, stop: AbortSignal): Promise<{ seats: HeldSeat[]; requests: number; errors: string[] }> {
  const arrivals = createStream(w.seed);
  const clients = createStream(w.seed ^ 0x5eed);
  const seats: HeldSeat[] = [];
  const errors: string[] = [];
  const players: Promise<void>[] = [];
  const lobbyToken = async (lobbyId: string): Promise<string> => {
    const env = JSON.parse(await readFile(join(lobbyDir, `${lobbyId}.json`), 'utf8')) as Record<string, string>;
    return str(env['RIVET_TOKEN'], 'the lobby token');
  };
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
    const ref = { player_token: str((found.body['player'] as Record<string, unknown> | undefined)?.['token'], 'the player token') };
    await sleep(connectMs, stop);
    if (stop.aborted) return;
    const token = await lobbyToken(lobbyId);
    const connected = await post(origin, '/matchmaker/players/connected', token, ref);
    if (connected.status !== 200) {
      // Its seat went away meanwhile (the lobby stopped): nothing to disconnect.
      seat.to = Date.now();
      return;
    }
    await sleep(sessionMs, stop);
    if (stop.aborted) return;
    await post(origin, '/matchmaker/players/disconnected', token, ref);
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

/** The figures from what the server recorded (lobbies, requests) and the seats its clients held. */
function serverFigures(facts: readonly DemandFact[], seats: readonly HeldSeat[], from: number, to: number): Figures {
  const waits = new ValueCounts();
  let seated = 0;
  let refused = 0;
  const lobbies = new Map<string, { created: number; stopped: number }>();
  for (const f of facts) {
    if (f.type === 'request') {
      if (f.outcome === 'ok') {
        seated += f.party;
        waits.add(f.waitMs, f.party);
      } else refused += f.party;
    } else if (f.type === 'lobby') {
      if (f.step === 'created') lobbies.set(f.lobbyId, { created: f.at, stopped: to });
      else if (f.step === 'stopped') {
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

export const rowsOf = (server: Figures, sim: Figures): Row[] =>
  (Object.keys(LABELS) as FigureName[]).map((figure) => {
    const a = server[figure];
    const b = sim[figure];
    const delta = a === 0 ? (b === 0 ? 0 : Infinity) : (b - a) / a;
    return { figure, label: LABELS[figure], server: a, sim: b, delta, tolerance: TOLERANCE[figure], within: Math.abs(delta) <= TOLERANCE[figure] };
  });

/** The side-by-side table. */
export function fidelityTable(rows: readonly Row[]): string {
  const pct = (x: number): string => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %` : '∞');
  const head = ['figure', 'server', 'simulator', 'difference', 'goal', ''];
  const body = rows.map((r) => [r.label, String(r.server), String(r.sim), pct(r.delta), `±${Math.round(r.tolerance * 100)} %`, r.within ? 'ok' : 'MISSED']);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ').trimEnd();
  return [line(head), ...body.map(line)].join('\n');
}

/**
 * @example
 * const result = await runFidelity(TEST_WORKLOAD);
 * console.log(fidelityTable(result.rows));
 *
 * `keep`: a directory to write the export (`demand.jsonl`) and the calibrated scenario into.
 */
export async function runFidelity(w: Workload, log: (line: string) => void = () => undefined, keep?: string): Promise<FidelityResult> {
  const began = Date.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'tavern-fidelity-'));
  const lobbyDir = join(dataDir, 'fake-lobbies');
  const tavern = await spawnTavern({
    dataDir,
    // SQLite in the data dir whatever the caller's environment says (CI exports DATABASE_URL): the
    // server's figures are read from that file once it has stopped.
    env: { DATABASE_URL: '', TAVERN_RUNTIME: 'fake', TAVERN_FAKE_READY_DELAY: JSON.stringify(w.readyDelayMs), TAVERN_FAKE_SEED: String(w.seed), TAVERN_FAKE_LOBBY_DIR: lobbyDir },
  });
  const stop = new AbortController();
  // Every player sleeping (to connect, in session) listens for the end of the run.
  setMaxListeners(0, stop.signal);
  try {
    const { origin } = tavern;
    const game: BenchGame = await createGame(origin);
    const buildId = await uploadBuild(origin, game, { image: Buffer.from('fidelity image') });
    await setLimits(origin, game, w.lobbyCountMax, 256);
    const pub = await publicToken(origin, game);
    const config = {
      matchmaker: {
        regions: { local: { idle_lobbies: w.idleLobbies } },
        max_players: w.maxPlayers,
        docker: { image_id: buildId, ports: { default: { port: 7777, protocol: 'udp' } } },
        game_modes: { default: {} },
      },
    };
    // The window opens as the version goes live (its idle lobbies start), as a replay's run does.
    const start = Date.now();
    const versionId = await publishVersion(origin, game, 'fidelity', config);
    log(`workload: ${w.findsPerSecond} finds/s for ${w.durationMs / 1_000} s against ${origin}`);
    const driven = await drive(origin, pub, lobbyDir, w, start, stop.signal);
    const end = start + w.durationMs;
    stop.abort();
    if (driven.errors.length > 0) throw new Error(`the workload failed: ${driven.errors.slice(0, 3).join('; ')}`);
    // The recorder flushes every 250 ms.
    await new Promise((r) => setTimeout(r, 1_000));

    const base = `${game.nsPath}/analytics/matchmaker/demand`;
    const res = await fetch(`${origin}${base}?start=${start}&end=${end}`, { headers: { authorization: `Bearer ${game.cloud}` } });
    if (res.status !== 200) throw new Error(`the export answered ${res.status}: ${await res.text()}`);
    const exported = await res.text();
    const recorded = parseRecordedDemand(exported);
    if (!recorded.ok) throw new Error(`the export does not parse: ${JSON.stringify(recorded.error.slice(0, 3))}`);
    const observed = (await call(origin, 'GET', `${base}/observed?start=${start}&end=${end}`, game.cloud)) as unknown as Observed & { lobby_count_max: number; regions_info: RegionDescription[] };
    const version = (await call(origin, 'GET', `/cloud/games/${game.gameId}/versions/${versionId}`, game.cloud))['version'] as { config: unknown };
    const { scenario, report } = calibrateScenario({ version: version.config, observed, regions: observed.regions_info, lobbyCountMax: observed.lobby_count_max, name: 'fidelity', seed: w.seed });
    for (const line of report) log(`calibration: ${line}`);
    if (keep !== undefined) {
      await mkdir(keep, { recursive: true });
      await writeFile(join(keep, 'demand.jsonl'), exported);
      await writeFile(join(keep, 'scenario.json'), `${JSON.stringify(scenario, null, 2)}\n`);
      log(`kept: ${join(keep, 'demand.jsonl')} and ${join(keep, 'scenario.json')} (replay: tavern sim ${join(keep, 'scenario.json')} --recorded ${join(keep, 'demand.jsonl')})`);
    }

    await tavern.child.stop();
    const db = openDatabase(dataDir);
    const facts: DemandFact[] = [];
    try {
      const store = new SqliteDemandStore(db);
      let after: { at: number; seq: number } | undefined;
      for (;;) {
        const page = await store.readDemand(game.nsId, { from: start, to: end }, after, 5_000);
        facts.push(...page.map((p) => p.fact));
        const last = page.at(-1);
        if (last === undefined || page.length < 5_000) break;
        after = { at: last.fact.at, seq: last.seq };
      }
    } finally {
      db.close();
    }
    const server = serverFigures(facts, driven.seats, start, end);

    const parsed = parseScenario(scenario, { externalDemand: true });
    if (!parsed.ok) throw new Error(`the calibrated scenario is invalid: ${parsed.error.map((p) => p.path.join('.')).join(', ')}`);
    // The replay is a stochastic model (lobby start delays, and the sessions of requests the server
    // refused, are drawn): its figures are the mean of REPLAYS seeds, not one draw (see REPLAYS).
    const replays: Figures[] = [];
    const rejections = new Map<string, number>();
    for (let i = 0; i < REPLAYS; i++) {
      const replay = await runScenario(parsed.value, { recorded: recorded.value, seed: w.seed + i });
      if (replay.violations.length > 0) throw new Error(`the replay broke invariants: ${replay.violations.slice(0, 3).join('; ')}`);
      const m = replay.metrics;
      for (const [code, n] of Object.entries(m.rejections)) rejections.set(code, (rejections.get(code) ?? 0) + n / REPLAYS);
      replays.push({
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
    const codes = new Map<string, number>();
    for (const f of facts) if (f.type === 'request' && f.outcome !== 'ok') codes.set(f.outcome, (codes.get(f.outcome) ?? 0) + f.party);
    const stops = new Map<string, number>();
    for (const f of facts) if (f.type === 'lobby' && f.step === 'stopped') stops.set(f.reason ?? '?', (stops.get(f.reason ?? '?') ?? 0) + 1);
    log(`lobbies stopped: server ${JSON.stringify(Object.fromEntries(stops))}`);
    log(`refusals: server ${JSON.stringify(Object.fromEntries(codes))}, simulator (mean) ${JSON.stringify(Object.fromEntries([...rejections].map(([code, n]) => [code, Number(n.toFixed(2))])))}`);
    const figures = Object.keys(LABELS) as FigureName[];
    const mean = (f: FigureName): number => replays.reduce((n, r) => n + r[f], 0) / REPLAYS;
    const sd = (f: FigureName): number => Math.sqrt(replays.reduce((n, r) => n + (r[f] - mean(f)) ** 2, 0) / REPLAYS);
    log(`replays: ${REPLAYS} seeds; one replay's spread (sd): ${figures.map((f) => `${LABELS[f]} ${sd(f).toFixed(1)} (${((sd(f) / Math.max(1e-9, mean(f))) * 100).toFixed(1)} %)`).join(', ')}`);
    const sim = Object.fromEntries(figures.map((f) => [f, Math.round(mean(f) * 10) / 10])) as unknown as Figures;
    return { workload: w, server, sim, rows: rowsOf(server, sim), calibration: report, requests: driven.requests, wallMs: Date.now() - began };
  } finally {
    stop.abort();
    await tavern.child.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
