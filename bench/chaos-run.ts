/**
 * One chaos run: real Tavern server processes (the fake runtime) on SQLite, on PostgreSQL, or two
 * on one PostgreSQL schema; clients that find, join, connect, disconnect and close over HTTP,
 * recording every request and whether it was answered; and a killer that `kill -9`s a server at
 * random moments and starts it again. After each kill the committed world must be consistent;
 * after the run, the history must agree with the store (`chaos-check.ts`).
 *
 * Lobby tokens: a lobby's game server gets its token from the runtime; with the fake runtime
 * there is none, so this process issues them with the server's own key, through its own
 * connection to the same store (as another Tavern instance would).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createRng, type Rng } from '../src/core/rng.js';
import type { World } from '../src/core/world.js';
import type { CatalogStore } from '../src/io/catalog.js';
import { TokenIssuer } from '../src/services/tokens.js';
import { addViolations, historyViolations, noViolations, worldViolations, type Op, type Outcome, type Sent, type Violations } from './chaos-check.js';
import { spawnServer, type ServerChild } from './http-child.js';
import { listeningPort } from './http-tavern.js';

export type ChaosStore = 'sqlite' | 'postgres' | 'postgres-pair';

export interface ChaosOptions {
  readonly store: ChaosStore;
  /** Kills (each followed by a restart). */
  readonly restarts: number;
  /** Concurrent clients, each one request at a time. */
  readonly clients: number;
  /** `node` arguments that run `src/server/main` (compiled, or through a loader). */
  readonly serverArgs: readonly string[];
  /** PostgreSQL (the two `postgres` stores): a fresh schema is made in it and dropped afterwards. */
  readonly databaseUrl?: string;
  readonly seed: number;
  /** How long the clients run before the first kill (the no-fault rate); 0: none. */
  readonly baselineMs: number;
  /** The time between a restart and the next kill, drawn uniformly from [min, max] ms. */
  readonly pauseMs: readonly [number, number];
  /** A request unanswered after this long counts as unknown. */
  readonly requestTimeoutMs: number;
  readonly log?: (line: string) => void;
}

export interface ChaosReport {
  readonly store: ChaosStore;
  readonly restarts: number;
  readonly clients: number;
  readonly seed: number;
  readonly requests: number;
  readonly outcomes: Readonly<Record<Exclude<Outcome, 'pending'>, number>>;
  /** Seats acknowledged (find and join answered 200). */
  readonly seats: number;
  /** Error codes of the refused and failed answers, with their counts. */
  readonly codes: Readonly<Record<string, number>>;
  readonly violations: Violations;
  /** From a kill to the restarted server listening: median and slowest. */
  readonly restartMs: { readonly median: number; readonly max: number };
  readonly wallMs: number;
  /** Acknowledged requests per second before the first kill, and during the kills (undefined without a baseline). */
  readonly baselineAckedPerS?: number;
  readonly chaosAckedPerS: number;
}

const ADMIN = `chaos-admin-${randomUUID()}`;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : (sorted[sorted.length >> 1] as number);
};

/** The stores of this process (another instance on the same database): lobby tokens and snapshots. */
interface Side {
  readonly catalog: CatalogStore;
  snapshot(): Promise<World>;
  close(): Promise<void>;
}

/** Where the servers keep their data, and this process's own connection to it. */
interface Storage {
  readonly env: Readonly<Record<string, string>>;
  open(): Promise<Side>;
  dispose(): Promise<void>;
}

async function storageFor(options: ChaosOptions): Promise<Storage> {
  if (options.store === 'sqlite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'tavern-chaos-'));
    const { openSqlite } = await import('../src/adapters/sqlite/index.js');
    return {
      env: { TAVERN_DATA_DIR: dataDir },
      open: () => {
        const s = openSqlite(dataDir, { checkpoints: 'inline' });
        return Promise.resolve({ catalog: s.catalog, snapshot: () => s.match.snapshot(), close: s.close });
      },
      dispose: () => Promise.resolve(rmSync(dataDir, { recursive: true, force: true })),
    };
  }
  const url = options.databaseUrl;
  if (url === undefined) throw new Error(`the ${options.store} chaos run needs a database URL`);
  const schema = `tavern_chaos_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'tavern-chaos-'));
  const { openPostgres } = await import('../src/adapters/postgres/index.js');
  return {
    env: { DATABASE_URL: url, TAVERN_PG_SCHEMA: schema, TAVERN_DATA_DIR: dataDir },
    open: async () => {
      const s = await openPostgres(url, { schema, maxConnections: 3 });
      return { catalog: s.catalog, snapshot: () => s.match.snapshot(), close: s.close };
    },
    dispose: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      const client = new pg.Client(url);
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A server process: its environment, the live child (none while it is down), and where it last listened. */
interface Instance {
  readonly name: string;
  readonly env: Readonly<Record<string, string>>;
  child?: ServerChild;
  origin?: string;
}

const start = async (options: ChaosOptions, instance: Instance): Promise<void> => {
  instance.child = await spawnServer({ name: instance.name, args: options.serverArgs, env: instance.env, isolated: true, portOf: listeningPort, timeoutMs: 60_000 });
  instance.origin = instance.child.origin;
};

type Json = Record<string, unknown>;

/** An answer: 200 and its body, another status (and the error code), or no answer at all. */
type Answer = { readonly outcome: 'acked'; readonly body: Json } | { readonly outcome: 'refused' | 'unsent' | 'unknown'; readonly status?: number; readonly code?: string };

const send = async (origin: string, method: string, path: string, token: string, body: unknown, headers: Record<string, string>, timeoutMs: number): Promise<Answer> => {
  let res: Response;
  try {
    res = await fetch(`${origin}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
      ...(method === 'GET' ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const code = (error as { cause?: { code?: unknown } }).cause?.code;
    return { outcome: code === 'ECONNREFUSED' ? 'unsent' : 'unknown' };
  }
  let text: string;
  try {
    text = await res.text();
  } catch {
    return { outcome: 'unknown', status: res.status };
  }
  if (res.status === 200) return { outcome: 'acked', body: (text === '' ? {} : JSON.parse(text)) as Json };
  let code: unknown;
  try {
    code = (JSON.parse(text) as Json)['code'];
  } catch {
    code = undefined;
  }
  return { outcome: res.status >= 500 ? 'unknown' : 'refused', status: res.status, code: typeof code === 'string' ? code : `HTTP ${res.status}` };
};

const must = async (what: string, answer: Promise<Answer>): Promise<Json> => {
  const a = await answer;
  if (a.outcome !== 'acked') throw new Error(`chaos set-up: ${what} answered ${a.outcome} ${a.status ?? ''}`);
  return a.body;
};

const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string') throw new Error(`chaos: expected ${what}, got ${JSON.stringify(v)}`);
  return v;
};

/** A game whose prod namespace runs one mode of 4 seats with 1–2 idle lobbies; its namespace id and public token. */
async function setUp(origin: string, timeoutMs: number): Promise<{ readonly namespaceId: string; readonly publicToken: string }> {
  const call = (method: string, path: string, body: unknown = {}) => must(`${method} ${path}`, send(origin, method, path, ADMIN, body, {}, timeoutMs));
  const gameId = str((await call('POST', '/cloud/games', { name_id: 'chaos', display_name: 'Chaos', developer_group_id: randomUUID() }))['game_id'], 'game_id');
  const game = await call('GET', `/cloud/games/${gameId}`);
  const namespaces = (game['game'] as { namespaces?: { name_id: string; namespace_id: string }[] } | undefined)?.namespaces ?? [];
  const namespaceId = str(namespaces.find((n) => n.name_id === 'prod')?.namespace_id, 'the prod namespace');
  const build = await call('POST', `/cloud/games/${gameId}/builds`, { display_name: 'Chaos', image_tag: 'chaos:1', image_file: { path: 'image.tar', content_length: 3 } });
  const put = await fetch(str((build['image_presigned_request'] as Json | undefined)?.['url'], 'a presigned URL'), { method: 'PUT', body: 'abc' });
  await put.arrayBuffer();
  await call('POST', `/cloud/uploads/${str(build['upload_id'], 'upload_id')}/complete`);
  const config = {
    matchmaker: {
      regions: { local: { idle_lobbies: { min: 1, max: 2 } } },
      max_players: 4,
      // No reserved seat expires during a run; a lobby orphaned by a kill before it was ready goes within seconds.
      player_connect_timeout: 3_600_000,
      lobby_ready_timeout: 3_000,
      docker: { image_id: str(build['build_id'], 'build_id'), ports: { default: { port: 7777, protocol: 'udp' } } },
      game_modes: { default: {} },
    },
  };
  const versionId = str((await call('POST', `/cloud/games/${gameId}/versions`, { display_name: 'chaos', config }))['version_id'], 'version_id');
  const ns = `/cloud/games/${gameId}/namespaces/${namespaceId}`;
  await call('POST', `${ns}/mm-config`, { lobby_count_max: 10_000, max_players: 256 });
  await call('PUT', `${ns}/version`, { version_id: versionId });
  return { namespaceId, publicToken: str((await call('POST', `${ns}/tokens/public`))['token'], 'a public token') };
}

/** The player id a player token names (its `player_id` claim). */
const playerOf = (token: string): string => {
  const [, , payload = ''] = token.split('.');
  return str((JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Json)['player_id'], 'player_id');
};

/** Operation weights: mostly seats, then connects and disconnects, a few closes. */
const OPS: readonly (readonly [Op, number])[] = [['find', 40], ['join', 15], ['connect', 22], ['disconnect', 15], ['close', 8]];
const pickOp = (rng: Rng): Op => {
  let r = rng.int(100);
  for (const [op, weight] of OPS) {
    if (r < weight) return op;
    r -= weight;
  }
  return 'find';
};

interface Seat {
  readonly playerId: string;
  readonly lobbyId: string;
  readonly token: string;
}

/**
 * Runs one chaos run and judges it.
 *
 * @example
 * const report = await runChaos({ store: 'sqlite', restarts: 20, clients: 4, serverArgs: [main], seed: 1, baselineMs: 0, pauseMs: [50, 300], requestTimeoutMs: 10_000 });
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const began = performance.now();
  const rng = createRng(options.seed);
  const log = options.log ?? (() => undefined);
  const storage = await storageFor(options);
  const base = { ...storage.env, TAVERN_HOST: '127.0.0.1', TAVERN_PORT: '0', TAVERN_RUNTIME: 'fake', TAVERN_ADMIN_TOKEN: ADMIN, TAVERN_TRUST_PROXY: 'true', TAVERN_RATE_LIMITS: 'off', LOG_LEVEL: 'info' };
  const count = options.store === 'postgres-pair' ? 2 : 1;
  const instances: Instance[] = Array.from({ length: count }, (_, i) => ({
    name: `tavern-${i}`,
    // SQLite servers share the data dir (its blobs too); PostgreSQL ones each have their own blob dir.
    env: { ...base, ...(options.store === 'sqlite' ? {} : { TAVERN_DATA_DIR: join(storage.env['TAVERN_DATA_DIR'] ?? tmpdir(), `blobs-${i}`) }) },
  }));
  let side: Side | undefined;
  try {
    await Promise.all(instances.map((instance) => start(options, instance)));
    side = await storage.open();
    const { namespaceId, publicToken } = await setUp(instances[0]?.child?.origin ?? '', options.requestTimeoutMs);
    const tokens = new TokenIssuer({ catalog: side.catalog, clock: { now: () => Date.now() }, random: { uuid: () => randomUUID(), u32: () => rng.u32() } });
    const lobbyTokens = new Map<string, Promise<string>>();
    const lobbyToken = (lobbyId: string): Promise<string> => {
      let token = lobbyTokens.get(lobbyId);
      if (token === undefined) lobbyTokens.set(lobbyId, (token = tokens.issue({ kind: 'lobby', namespaceId, lobbyId })));
      return token;
    };

    const history: Sent[] = [];
    const seats: Seat[] = [];
    let addresses = 0;
    let stopping = false;
    let acked = 0;
    const codes: Record<string, number> = {};
    const any = <T>(xs: readonly T[]): T | undefined => xs[rng.int(xs.length)];
    /** A live server; while none is, the last address of one (its connection is refused: the request is unsent). */
    const target = (): string => (any(instances.filter((i) => i.child !== undefined)) ?? instances[0])?.origin ?? '';

    const perform = async (op: Op): Promise<void> => {
      const seat = any(seats);
      if ((op === 'join' || op === 'connect' || op === 'disconnect' || op === 'close') && seat === undefined) op = 'find';
      const sent: Sent = { op, outcome: 'pending' };
      let answer: Answer;
      if (op === 'find' || op === 'join') {
        const n = addresses++;
        const ip = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
        const lobbyId = op === 'join' ? seat?.lobbyId : undefined;
        Object.assign(sent, { ip, ...(lobbyId === undefined ? {} : { lobbyId }) });
        history.push(sent);
        answer = await send(target(), 'POST', `/matchmaker/lobbies/${op}`, publicToken, op === 'find' ? { game_modes: ['default'] } : { lobby_id: lobbyId }, { 'x-forwarded-for': ip }, options.requestTimeoutMs);
        if (answer.outcome === 'acked') {
          const token = str((answer.body['player'] as Json | undefined)?.['token'], 'a player token');
          const made = { playerId: playerOf(token), lobbyId: str((answer.body['lobby'] as Json | undefined)?.['lobby_id'], 'lobby_id'), token };
          sent.seat = { playerId: made.playerId, lobbyId: made.lobbyId };
          seats.push(made);
        }
      } else {
        const { playerId, lobbyId, token } = seat as Seat;
        Object.assign(sent, { lobbyId, ...(op === 'close' ? {} : { playerId }) });
        history.push(sent);
        const bearer = await lobbyToken(lobbyId);
        answer = op === 'close'
          ? await send(target(), 'PUT', '/matchmaker/lobbies/closed', bearer, { is_closed: true }, {}, options.requestTimeoutMs)
          : await send(target(), 'POST', `/matchmaker/players/${op === 'connect' ? 'connected' : 'disconnected'}`, bearer, { player_token: token }, {}, options.requestTimeoutMs);
        if (op === 'disconnect' && answer.outcome === 'acked') seats.splice(seats.indexOf(seat as Seat), 1);
      }
      sent.outcome = answer.outcome;
      if (answer.outcome === 'acked') acked++;
      else if (answer.code !== undefined) codes[answer.code] = (codes[answer.code] ?? 0) + 1;
      // A server that is down refuses connections at once, a dying one drops them: do not spin on it.
      if (answer.outcome === 'unsent' || answer.outcome === 'unknown') await sleep(50);
    };

    const clients = Array.from({ length: options.clients }, async () => {
      while (!stopping) await perform(pickOp(rng));
    });

    let baselineAckedPerS: number | undefined;
    if (options.baselineMs > 0) {
      await sleep(options.baselineMs);
      baselineAckedPerS = acked / (options.baselineMs / 1000);
    }
    const chaosBegan = performance.now();
    const ackedBefore = acked;
    const violations = noViolations();
    const restartMs: number[] = [];
    for (let r = 1; r <= options.restarts; r++) {
      const [min, max] = options.pauseMs;
      await sleep(min + rng.int(max - min + 1));
      const victim = instances[rng.int(instances.length)] as Instance;
      const child = victim.child;
      if (child === undefined) continue;
      const killed = performance.now();
      process.kill(child.pid, 'SIGKILL');
      await child.exited;
      delete victim.child;
      // Whatever the kill cut short, what is committed holds together.
      addViolations(violations, worldViolations(await side.snapshot(), namespaceId));
      await start(options, victim);
      restartMs.push(performance.now() - killed);
      if (r % 10 === 0 || r === options.restarts) log(`${options.store}: ${r}/${options.restarts} restarts, ${history.length} requests, ${acked} acknowledged`);
    }
    const chaosSeconds = (performance.now() - chaosBegan) / 1000;
    const chaosAcked = acked - ackedBefore;
    stopping = true;
    await Promise.all(clients);

    // The final judgement, on a fresh connection (as a restarted instance would read it).
    const fresh = await storage.open();
    try {
      addViolations(violations, historyViolations(await fresh.snapshot(), namespaceId, history));
    } finally {
      await fresh.close();
    }
    const outcomes = { acked: 0, refused: 0, unsent: 0, unknown: 0 };
    for (const s of history) if (s.outcome !== 'pending') outcomes[s.outcome]++;
    return {
      store: options.store,
      restarts: options.restarts,
      clients: options.clients,
      seed: options.seed,
      requests: history.length,
      outcomes,
      seats: history.filter((s) => s.seat !== undefined).length,
      codes,
      violations,
      restartMs: { median: median(restartMs), max: Math.max(0, ...restartMs) },
      wallMs: performance.now() - began,
      ...(baselineAckedPerS === undefined ? {} : { baselineAckedPerS }),
      chaosAckedPerS: chaosAcked / chaosSeconds,
    };
  } finally {
    await Promise.all(instances.map((i) => i.child?.stop(2_000) ?? Promise.resolve()));
    await side?.close();
    await storage.dispose();
  }
}
