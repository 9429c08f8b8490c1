/**
 * Tavern for the benchmarks: the real server (`src/server/main.ts`, compiled into the bench cache
 * and run by plain `node`) on 127.0.0.1 with a fresh SQLite data dir, and the developer setup done
 * over HTTP the way the CLI does it: a game, completed builds, versions deployed to the `prod`
 * namespace, its matchmaker limits raised, and a public namespace token for the players. The
 * `http` benchmark's setup ({@link startTavern}) uses the fake runtime.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS, spawnServer, waitHealthy, type ServerChild } from './http-child.js';

export const TAVERN_ADMIN = 'bench-admin-token';
/** The namespace limits: the most `mm-config` accepts. */
export const LOBBY_COUNT_MAX = 32_768;
export const MAX_PLAYERS_PER_CLIENT = 256;

export interface TavernServer extends TavernProcess {
  /** The players' public namespace token. */
  readonly publicToken: string;
}

export interface TavernOptions {
  /** `max_players` of the game mode (at most 256). */
  readonly maxPlayers: number;
  /** Idle lobbies kept ready in the region (`idle_lobbies.min`; max is twice that). */
  readonly idleLobbies: number;
  readonly cpu?: number;
  readonly profileDir?: string;
  /** `TAVERN_RATE_LIMITS` (default `off`). */
  readonly rateLimits?: string;
  /** `TAVERN_DEMAND_RETENTION` (default the server's: recording on, kept 7 days); `off` records nothing. */
  readonly demandRetention?: string;
  /** Run the server under this command (`wrapper... node main.js`), with this long to start (ms). */
  readonly wrapper?: { readonly command: readonly string[]; readonly startMs: number };
}

/** `src/server/main.js` next to this file in the compiled bench tree; `main.ts` through tsx when this file runs as TypeScript (a test). */
const MAIN = import.meta.url.endsWith('.ts')
  ? [...SERVER_NODE_FLAGS, '--import', 'tsx', fileURLToPath(new URL('../src/server/main.ts', import.meta.url))]
  : [...SERVER_NODE_FLAGS, fileURLToPath(new URL('../src/server/main.js', import.meta.url))];

/** The port of pino's `tavern listening` line (its `publicOrigin`). */
export const listeningPort = (line: string): number | undefined => {
  if (!line.includes('tavern listening')) return undefined;
  try {
    const { publicOrigin } = JSON.parse(line) as { publicOrigin?: string };
    return publicOrigin === undefined ? undefined : Number(new URL(publicOrigin).port);
  } catch {
    return undefined;
  }
};

export type Json = Record<string, unknown>;

/** One JSON call to Tavern's API; fails unless it answers 200. */
export const call = async (origin: string, method: string, path: string, token: string | undefined, body?: unknown): Promise<Json> => {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`tavern: ${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
  return (text === '' ? {} : JSON.parse(text)) as Json;
};

export const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string') throw new Error(`tavern: expected ${what}, got ${JSON.stringify(v)}`);
  return v;
};

/** A game made with the admin token, a cloud token for it, and its `prod` namespace. */
export interface BenchGame {
  readonly gameId: string;
  readonly cloud: string;
  readonly nsId: string;
  /** `/cloud/games/<game>/namespaces/<ns>` */
  readonly nsPath: string;
}

/** A game (`nameId`, unique on the server; default `bench`) made with the admin token, its cloud token and its `prod` namespace. */
export async function createGame(origin: string, nameId = 'bench', displayName = 'Bench'): Promise<BenchGame> {
  const game = await call(origin, 'POST', '/cloud/games', TAVERN_ADMIN, { name_id: nameId, display_name: displayName, developer_group_id: randomUUID() });
  const gameId = str(game['game_id'], 'game_id');
  const cloud = str((await call(origin, 'POST', `/cloud/games/${gameId}/tokens/cloud`, TAVERN_ADMIN))['token'], 'a cloud token');
  const got = await call(origin, 'GET', `/cloud/games/${gameId}`, cloud);
  const namespaces = (got['game'] as { namespaces?: { name_id: string; namespace_id: string }[] } | undefined)?.namespaces ?? [];
  const nsId = namespaces.find((n) => n.name_id === 'prod')?.namespace_id;
  if (nsId === undefined) throw new Error('tavern setup: the game has no prod namespace');
  return { gameId, cloud, nsId, nsPath: `/cloud/games/${gameId}/namespaces/${nsId}` };
}

/** What a build uploads: bytes, or a file streamed from disk, of a kind and compression. */
export interface BuildUpload {
  readonly image: Buffer | { readonly file: string };
  /** The build's display name (default `Bench build`). */
  readonly displayName?: string;
  readonly kind?: 'docker_image' | 'oci_bundle';
  readonly compression?: 'none' | 'lz4';
}

/** createGameBuild, one PUT to its presigned URL, completion: returns the build id. */
export async function uploadBuild(origin: string, game: BenchGame, upload: BuildUpload): Promise<string> {
  const { image } = upload;
  const size = Buffer.isBuffer(image) ? image.length : statSync(image.file).size;
  const build = await call(origin, 'POST', `/cloud/games/${game.gameId}/builds`, game.cloud, {
    display_name: upload.displayName ?? 'Bench build', image_tag: `bench:${randomUUID().slice(0, 8)}`, image_file: { path: 'image.tar', content_length: size },
    ...(upload.kind === undefined ? {} : { kind: upload.kind }),
    ...(upload.compression === undefined ? {} : { compression: upload.compression }),
  });
  const url = str((build['image_presigned_request'] as Json | undefined)?.['url'], 'a presigned URL');
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { 'content-length': String(size) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    if (Buffer.isBuffer(image)) req.end(image);
    else createReadStream(image.file).on('error', reject).pipe(req);
  });
  if (status !== 200) throw new Error(`tavern setup: the presigned PUT answered ${status}`);
  await call(origin, 'POST', `/cloud/uploads/${str(build['upload_id'], 'upload_id')}/complete`, game.cloud);
  return str(build['build_id'], 'build_id');
}

/** A site of `files` (path → bytes) uploaded and completed, in a version deployed to the namespace. */
export async function deploySite(api: string, game: BenchGame, files: ReadonlyMap<string, Buffer>): Promise<void> {
  const site = await call(api, 'POST', `/cloud/games/${game.gameId}/cdn/sites`, game.cloud, {
    display_name: 'Bench site', files: [...files].map(([path, body]) => ({ path, content_length: body.length })),
  });
  for (const p of site['presigned_requests'] as { path: string; url: string }[]) {
    const res = await fetch(p.url, { method: 'PUT', body: files.get(p.path) ?? Buffer.alloc(0) });
    if (res.status !== 200) throw new Error(`site PUT answered ${res.status}`);
  }
  await call(api, 'POST', `/cloud/uploads/${str(site['upload_id'], 'upload_id')}/complete`, game.cloud);
  const version = await call(api, 'POST', `/cloud/games/${game.gameId}/versions`, game.cloud, { display_name: 'site', config: { cdn: { site_id: str(site['site_id'], 'site_id') } } });
  await call(api, 'PUT', `${game.nsPath}/version`, game.cloud, { version_id: str(version['version_id'], 'version_id') });
}

/** A version made from `config` and deployed to the namespace: returns its id. */
export async function publishVersion(origin: string, game: BenchGame, displayName: string, config: unknown): Promise<string> {
  const version = await call(origin, 'POST', `/cloud/games/${game.gameId}/versions`, game.cloud, { display_name: displayName, config });
  const versionId = str(version['version_id'], 'version_id');
  await call(origin, 'PUT', `${game.nsPath}/version`, game.cloud, { version_id: versionId });
  return versionId;
}

/** Raise the namespace's matchmaker limits (`mm-config`). */
export const setLimits = async (origin: string, game: BenchGame, lobbyCountMax: number, maxPlayersPerClient: number): Promise<void> => {
  await call(origin, 'POST', `${game.nsPath}/mm-config`, game.cloud, { lobby_count_max: lobbyCountMax, max_players: maxPlayersPerClient });
};

/** A public namespace token, for the players. */
export const publicToken = async (origin: string, game: BenchGame): Promise<string> =>
  str((await call(origin, 'POST', `${game.nsPath}/tokens/public`, game.cloud))['token'], 'a public token');

/** Game, build, version, deployment, limits, public token: returns the public token. */
async function setUp(origin: string, opts: TavernOptions): Promise<string> {
  const game = await createGame(origin);
  const buildId = await uploadBuild(origin, game, { image: Buffer.from('bench image') });
  const config = {
    matchmaker: {
      regions: { local: { idle_lobbies: { min: opts.idleLobbies, max: opts.idleLobbies * 2 } } },
      max_players: opts.maxPlayers,
      docker: { image_id: buildId, ports: { default: { port: 7777, protocol: 'udp' } } },
      game_modes: { default: {} },
    },
  };
  await setLimits(origin, game, LOBBY_COUNT_MAX, MAX_PLAYERS_PER_CLIENT);
  await publishVersion(origin, game, 'bench', config);
  return publicToken(origin, game);
}

/** A Tavern server process on 127.0.0.1 with a fresh data dir (removed by `stop`). */
export interface TavernProcess {
  readonly child: ServerChild;
  readonly origin: string;
  readonly dataDir: string;
  stop(): Promise<void>;
}

export interface SpawnTavernOptions {
  /** Added to (and overriding) the defaults: loopback, any port, a fresh data dir, the admin token, info logs. */
  readonly env: Readonly<Record<string, string>>;
  readonly cpu?: number;
  readonly profileDir?: string;
  /** SIGTERM grace before SIGKILL when stopping (ms). */
  readonly stopGraceMs?: number;
  /** Run on this data dir (a restart), which `stop` leaves in place; default a fresh one that `stop` removes. */
  readonly dataDir?: string;
  /** `TAVERN_RATE_LIMITS`; default `off`. */
  readonly rateLimits?: string;
  readonly wrapper?: TavernOptions['wrapper'];
}

/**
 * @example
 * const tavern = await spawnTavern({ env: { TAVERN_RUNTIME: 'fake' } });
 * try { ... } finally { await tavern.stop(); }
 */
export async function spawnTavern(opts: SpawnTavernOptions): Promise<TavernProcess> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'tavern-bench-'));
  let child: ServerChild | undefined;
  const stop = async (): Promise<void> => {
    await child?.stop(opts.stopGraceMs);
    if (opts.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    child = await spawnServer({
      name: 'tavern',
      args: MAIN,
      env: {
        TAVERN_HOST: '127.0.0.1',
        TAVERN_PORT: '0',
        TAVERN_DATA_DIR: dataDir,
        TAVERN_ADMIN_TOKEN: TAVERN_ADMIN,
        TAVERN_TRUST_PROXY: 'true',
        // The benchmark measures finds, not the limiter: every find would count (each from its own address).
        TAVERN_RATE_LIMITS: opts.rateLimits ?? 'off',
        // Info: the `tavern listening` line says the port; nothing is logged per request at this level.
        LOG_LEVEL: 'info',
        // Under a wrapper such as valgrind the server runs some 50× slower: its timeouts must not cut the clients.
        ...(opts.wrapper === undefined ? {} : { TAVERN_HEADERS_TIMEOUT_MS: '600000', TAVERN_KEEP_ALIVE_TIMEOUT_MS: '600000' }),
        ...opts.env,
      },
      ...(opts.cpu === undefined ? {} : { cpu: opts.cpu }),
      ...(opts.profileDir === undefined ? {} : { profileDir: opts.profileDir }),
      ...(opts.wrapper === undefined ? {} : { wrapper: opts.wrapper.command, timeoutMs: opts.wrapper.startMs }),
      portOf: listeningPort,
    });
    await waitHealthy(child.origin, '/health', opts.wrapper?.startMs);
    return { child, origin: child.origin, dataDir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * @example
 * const tavern = await startTavern({ maxPlayers: 256, idleLobbies: 2 });
 * try { ... } finally { await tavern.stop(); }
 */
export async function startTavern(opts: TavernOptions): Promise<TavernServer> {
  const tavern = await spawnTavern({
    env: { TAVERN_RUNTIME: 'fake', TAVERN_TRUST_PROXY: 'true', ...(opts.demandRetention === undefined ? {} : { TAVERN_DEMAND_RETENTION: opts.demandRetention }) },
    ...(opts.rateLimits === undefined ? {} : { rateLimits: opts.rateLimits }),
    ...(opts.cpu === undefined ? {} : { cpu: opts.cpu }),
    ...(opts.profileDir === undefined ? {} : { profileDir: opts.profileDir }),
    ...(opts.wrapper === undefined ? {} : { wrapper: opts.wrapper }),
  });
  try {
    return { ...tavern, publicToken: await setUp(tavern.origin, opts) };
  } catch (error) {
    await tavern.stop();
    throw error;
  }
}
