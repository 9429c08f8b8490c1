/**
 * The Tavern side of the `http` benchmark: the real server (`src/server/main.ts`, compiled into the
 * bench cache and run by plain `node`) on 127.0.0.1 with a fresh SQLite data dir and the fake
 * runtime, and the developer setup done over HTTP the way the CLI does it: a game, a completed
 * build, a version, that version deployed to the `prod` namespace, its matchmaker limits raised,
 * and a public namespace token for the players.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnServer, waitHealthy, type ServerChild } from './http-child.js';

export const TAVERN_ADMIN = 'bench-admin-token';
/** The namespace limits: the most `mm-config` accepts. */
export const LOBBY_COUNT_MAX = 32_768;
export const MAX_PLAYERS_PER_CLIENT = 256;

export interface TavernServer {
  readonly child: ServerChild;
  readonly origin: string;
  /** The players' public namespace token. */
  readonly publicToken: string;
  readonly dataDir: string;
  stop(): Promise<void>;
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
}

/** `src/server/main.js` next to this file in the compiled bench tree. */
const MAIN = fileURLToPath(new URL('../src/server/main.js', import.meta.url));

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

type Json = Record<string, unknown>;

const call = async (origin: string, method: string, path: string, token: string | undefined, body?: unknown): Promise<Json> => {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`tavern setup: ${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
  return (text === '' ? {} : JSON.parse(text)) as Json;
};

const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string') throw new Error(`tavern setup: expected ${what}, got ${JSON.stringify(v)}`);
  return v;
};

/** Game, build, version, deployment, limits, public token: returns the public token. */
async function setUp(origin: string, opts: TavernOptions): Promise<string> {
  const game = await call(origin, 'POST', '/cloud/games', TAVERN_ADMIN, { name_id: 'bench', display_name: 'Bench', developer_group_id: randomUUID() });
  const gameId = str(game['game_id'], 'game_id');
  const cloud = str((await call(origin, 'POST', `/cloud/games/${gameId}/tokens/cloud`, TAVERN_ADMIN))['token'], 'a cloud token');
  const got = await call(origin, 'GET', `/cloud/games/${gameId}`, cloud);
  const namespaces = (got['game'] as { namespaces?: { name_id: string; namespace_id: string }[] } | undefined)?.namespaces ?? [];
  const nsId = namespaces.find((n) => n.name_id === 'prod')?.namespace_id;
  if (nsId === undefined) throw new Error('tavern setup: the game has no prod namespace');

  const image = Buffer.from('bench image');
  const build = await call(origin, 'POST', `/cloud/games/${gameId}/builds`, cloud, {
    display_name: 'Bench build', image_tag: 'bench:1', image_file: { path: 'image.tar', content_length: image.length },
  });
  const url = str((build['image_presigned_request'] as Json | undefined)?.['url'], 'a presigned URL');
  const put = await fetch(url, { method: 'PUT', body: image });
  await put.arrayBuffer();
  if (put.status !== 200) throw new Error(`tavern setup: the presigned PUT answered ${put.status}`);
  await call(origin, 'POST', `/cloud/uploads/${str(build['upload_id'], 'upload_id')}/complete`, cloud);

  const config = {
    matchmaker: {
      regions: { local: { idle_lobbies: { min: opts.idleLobbies, max: opts.idleLobbies * 2 } } },
      max_players: opts.maxPlayers,
      docker: { image_id: str(build['build_id'], 'build_id'), ports: { default: { port: 7777, protocol: 'udp' } } },
      game_modes: { default: {} },
    },
  };
  const version = await call(origin, 'POST', `/cloud/games/${gameId}/versions`, cloud, { display_name: 'bench', config });
  const versionId = str(version['version_id'], 'version_id');
  const ns = `/cloud/games/${gameId}/namespaces/${nsId}`;
  await call(origin, 'POST', `${ns}/mm-config`, cloud, { lobby_count_max: LOBBY_COUNT_MAX, max_players: MAX_PLAYERS_PER_CLIENT });
  await call(origin, 'PUT', `${ns}/version`, cloud, { version_id: versionId });
  return str((await call(origin, 'POST', `${ns}/tokens/public`, cloud))['token'], 'a public token');
}

/**
 * @example
 * const tavern = await startTavern({ maxPlayers: 256, idleLobbies: 2 });
 * try { ... } finally { await tavern.stop(); }
 */
export async function startTavern(opts: TavernOptions): Promise<TavernServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tavern-bench-http-'));
  let child: ServerChild | undefined;
  const stop = async (): Promise<void> => {
    await child?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    child = await spawnServer({
      name: 'tavern',
      args: [MAIN],
      env: {
        TAVERN_HOST: '127.0.0.1',
        TAVERN_PORT: '0',
        TAVERN_DATA_DIR: dataDir,
        TAVERN_RUNTIME: 'fake',
        TAVERN_ADMIN_TOKEN: TAVERN_ADMIN,
        TAVERN_TRUST_PROXY: 'true',
        // The benchmark measures finds, not the limiter: every find would count (each from its own address).
        TAVERN_RATE_LIMITS: opts.rateLimits ?? 'off',
        // Info: the `tavern listening` line says the port; nothing is logged per request at this level.
        LOG_LEVEL: 'info',
      },
      ...(opts.cpu === undefined ? {} : { cpu: opts.cpu }),
      ...(opts.profileDir === undefined ? {} : { profileDir: opts.profileDir }),
      portOf: listeningPort,
    });
    await waitHealthy(child.origin, '/health');
    const publicToken = await setUp(child.origin, opts);
    return { child, origin: child.origin, publicToken, dataDir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
