/**
 * The concurrency test with real server processes: two `src/server/main.ts` processes on one
 * PostgreSQL schema (`TAVERN_PG_SCHEMA`), set up over HTTP (a game, a build, a version whose mode
 * seats 10 with 10 idle lobbies, a namespace capped at those 10 lobbies), then 1,000 concurrent
 * finds over HTTP, 500 to each process, from 1,000 distinct client addresses, with
 * `prevent_auto_create_lobby`: exactly 100 are seated (200), the 900 others answer
 * `MATCHMAKER_NO_AVAILABLE_LOBBIES`, and the committed rows show no lobby over its 10 seats and no
 * port held twice.
 *
 * Under CI (`process.env.CI`) it fails, never skips, when PostgreSQL is unreachable.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { parseEnv } from '../../src/server/env.js';
import { inconsistencies } from '../contracts/fakes.js';
import { api, field, ok, startServer, type Answer, type Server } from '../server/process.js';
import { eventually } from '../wait.js';
import { DATABASE_URL, dropSchema, freshSchema, postgresProblem } from './postgres-harness.js';

const problem = await postgresProblem();

describe.skipIf(problem !== undefined && process.env['CI'] === undefined)('two server processes on one PostgreSQL schema', () => {
  it('TAVERN_PG_SCHEMA picks the schema', () => {
    expect(parseEnv({ DATABASE_URL: 'postgres://x', TAVERN_PG_SCHEMA: 'tavern_a' }).postgresSchema).toBe('tavern_a');
    expect(parseEnv({ DATABASE_URL: 'postgres://x' }).postgresSchema).toBeUndefined();
  });

  it('1,000 concurrent HTTP finds (500 per process) for 100 seats: exactly 100 seated, 0 overbooked, 0 ports held twice', async () => {
    if (problem !== undefined) throw new Error(`PostgreSQL is unreachable at ${DATABASE_URL}: ${problem}`);
    const schema = freshSchema();
    const dataDir = mkdtempSync(join(tmpdir(), 'tavern-servers-pg-'));
    const admin = `test-admin-${randomUUID()}`;
    const env = (name: string): Record<string, string> => ({
      DATABASE_URL, TAVERN_PG_SCHEMA: schema, TAVERN_RUNTIME: 'fake', TAVERN_ADMIN_TOKEN: admin,
      TAVERN_HOST: '127.0.0.1', TAVERN_PORT: '0', TAVERN_DATA_DIR: join(dataDir, name),
      // Behind a (pretend) proxy: each find comes from its own x-forwarded-for address.
      TAVERN_TRUST_PROXY: 'true', LOG_LEVEL: 'info',
    });
    const servers: Server[] = [];
    try {
      // Both start at once (migrations wait for each other under the schema's advisory lock).
      const started = await Promise.allSettled([startServer('server A', env('a')), startServer('server B', env('b'))]);
      for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
      for (const s of started) if (s.status === 'rejected') throw s.reason;
      const [a, b] = servers as [Server, Server];

      // Set-up over HTTP, alternating between the two processes.
      const gameId = field(ok('create game', await api(a.origin, 'POST', '/cloud/games', { token: admin, body: { name_id: 'load', display_name: 'Load', developer_group_id: randomUUID() } })), 'game_id');
      const build = ok('create build', await api(b.origin, 'POST', `/cloud/games/${gameId}/builds`, { token: admin, body: { display_name: 'Build', image_tag: 'load:1', image_file: { path: 'image.tar', content_length: 3 } } }));
      const presigned = build['image_presigned_request'] as { url: string };
      const put = await fetch(presigned.url, { method: 'PUT', body: 'abc' });
      expect(put.status, await put.clone().text()).toBe(200);
      ok('complete upload', await api(b.origin, 'POST', `/cloud/uploads/${field(build, 'upload_id')}/complete`, { token: admin }));
      const versionId = field(ok('create version', await api(a.origin, 'POST', `/cloud/games/${gameId}/versions`, {
        token: admin,
        body: {
          display_name: 'v1',
          config: {
            matchmaker: {
              regions: { local: { idle_lobbies: { min: 10, max: 10 } } },
              max_players: 10,
              docker: { image_id: field(build, 'build_id'), ports: { default: { port: 7777, protocol: 'udp' }, web: { port: 8080, protocol: 'https' } } },
              game_modes: { default: {} },
            },
          },
        },
      })), 'version_id');
      // The new namespace publishes the version: 10 idle lobbies start (the fake runtime readies them at once).
      const nsId = field(ok('create namespace', await api(b.origin, 'POST', `/cloud/games/${gameId}/namespaces`, { token: admin, body: { display_name: 'Load', name_id: 'load', version_id: versionId } })), 'namespace_id');
      // Capped at those 10 lobbies (no idle replacement while seats fill), and clients may hold many seats.
      ok('mm-config', await api(a.origin, 'POST', `/cloud/games/${gameId}/namespaces/${nsId}/mm-config`, { token: admin, body: { lobby_count_max: 10, max_players: 256 } }));
      const pub = field(ok('public token', await api(b.origin, 'POST', `/cloud/games/${gameId}/namespaces/${nsId}/tokens/public`, { token: admin })), 'token');

      let lobbies: { is_ready: boolean; max_players_normal: number }[] = [];
      await eventually(() => `the 10 idle lobbies to be ready: ${JSON.stringify(lobbies)}`, async () => {
        const live = ok('analytics', await api(b.origin, 'GET', `/cloud/games/${gameId}/namespaces/${nsId}/analytics/matchmaker/live`, { token: admin }));
        lobbies = live['lobbies'] as typeof lobbies;
        return lobbies.length === 10 && lobbies.every((l) => l.is_ready && l.max_players_normal === 10);
      }, { timeoutMs: 30_000, everyMs: 100 });

      // Warm both processes' find path (token check, transaction, JIT) with finds that seat nobody,
      // so the burst is a race between two ready processes rather than one warm and one cold.
      const warm = await Promise.all([a, b].flatMap((s) => Array.from({ length: 40 }, (_, i) =>
        api(s.origin, 'POST', '/matchmaker/lobbies/find', { token: pub, headers: { 'x-forwarded-for': `192.0.2.${i}` }, body: { game_modes: ['warm-up'], prevent_auto_create_lobby: true } }))));
      expect(new Set(warm.map((w) => w.body['code']))).toEqual(new Set(['MATCHMAKER_GAME_MODE_NOT_FOUND']));

      // 1,000 finds at once, interleaved between the processes, each from its own address.
      const finds = await Promise.all(Array.from({ length: 1_000 }, async (_, i) => {
        const server = i % 2 === 0 ? a : b;
        const answer = await api(server.origin, 'POST', '/matchmaker/lobbies/find', {
          token: pub,
          headers: { 'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
          body: { game_modes: ['default'], prevent_auto_create_lobby: true },
        });
        return { server: server.name, ...answer };
      }));

      const seated = finds.filter((f) => f.status === 200);
      const refused = finds.filter((f) => f.status !== 200);
      const split = [a, b].map((s) => `${s.name}: ${seated.filter((f) => f.server === s.name).length} seated`).join(', ');
      process.stdout.write(`two servers on PostgreSQL: ${seated.length} seated, ${refused.length} refused (${split})\n`);
      expect(refused.filter((f) => f.body['code'] !== 'MATCHMAKER_NO_AVAILABLE_LOBBIES').slice(0, 5), 'unexpected answers').toEqual([]);
      expect(refused.every((f) => f.status === 400)).toBe(true);
      expect(seated).toHaveLength(100);
      expect(refused).toHaveLength(900);
      expect(finds.filter((f) => f.server === a.name)).toHaveLength(500);
      // Both processes won seats: the race really was between them.
      for (const s of [a, b]) expect(seated.filter((f) => f.server === s.name).length, split).toBeGreaterThan(0);

      // Each of the 10 lobbies answered exactly 10 times, each seat with its own player token.
      const lobbyOf = (f: Answer): string => field(f.body['lobby'] as Record<string, unknown>, 'lobby_id');
      const perLobby = new Map<string, number>();
      for (const f of seated) perLobby.set(lobbyOf(f), (perLobby.get(lobbyOf(f)) ?? 0) + 1);
      expect([...perLobby.values()]).toEqual(Array.from({ length: 10 }, () => 10));
      expect(new Set(seated.map((f) => field(f.body['player'] as Record<string, unknown>, 'token'))).size).toBe(100);

      // The committed world, hydrated fresh from the rows.
      const stores = await openPostgres(DATABASE_URL, { schema, maxConnections: 2 });
      try {
        const world = await stores.match.snapshot();
        expect(inconsistencies(world)).toEqual([]);
        const lobbies = [...(world.namespaces.get(nsId)?.lobbies.values() ?? [])];
        expect(lobbies).toHaveLength(10);
        expect(new Set(lobbies.map((l) => l.id))).toEqual(new Set(perLobby.keys()));
        expect(lobbies.filter((l) => l.playerCount > l.maxPlayers.normal || l.players.size > 10), 'overbooked lobbies').toEqual([]);
        expect(lobbies.every((l) => l.playerCount === 10 && l.players.size === 10)).toBe(true);
        const allLobbies = [...world.namespaces.values()].flatMap((ns) => [...ns.lobbies.values()]).filter((l) => l.lifecycle.status !== 'stopped');
        const ports = allLobbies.flatMap((l) => l.ports.flatMap((p) => [`${l.region} ${p.transport}:${p.hostPort}`, ...(p.protocol === 'udp' ? [`${l.region} udp:${p.publicPort}`] : [])]));
        expect(ports.length).toBeGreaterThanOrEqual(10);
        expect(ports.filter((p, i) => ports.indexOf(p) !== i), 'ports held twice').toEqual([]);
      } finally {
        await stores.close();
      }

      // Both processes are still healthy.
      for (const s of servers) expect((await api(s.origin, 'GET', '/health')).status, `${s.name}:\n${s.tail()}`).toBe(200);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await dropSchema(schema).catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
