/**
 * `npm start` without TAVERN_RUNTIME: Docker when its socket answers; otherwise the server starts
 * anyway, says once that no lobby can start until Docker is reachable, reports it in /health, and
 * finds that need a new lobby answer the clear 503.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { api, field, ok, startServer } from './process.js';

it('starts without a reachable Docker, says so once, and answers finds that need a lobby with 503 MATCHMAKER_RUNTIME_UNAVAILABLE', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tavern-no-docker-'));
  const admin = `admin-${randomUUID()}`;
  const server = await startServer('tavern without docker', {
    TAVERN_ADMIN_TOKEN: admin, TAVERN_HOST: '127.0.0.1', TAVERN_PORT: '0', TAVERN_DATA_DIR: dataDir,
    DOCKER_HOST: `unix://${join(dataDir, 'no-docker.sock')}`, LOG_LEVEL: 'info',
  });
  try {
    const health = await api(server.origin, 'GET', '/health');
    expect(health.body).toMatchObject({ status: 'ok', runtime: { runtime: 'docker', reachable: false } });
    expect(String((health.body['runtime'] as Record<string, unknown>)['error'])).toMatch(/the Docker engine is unreachable \(ENOENT/);

    const gameId = field(ok('create game', await api(server.origin, 'POST', '/cloud/games', { token: admin, body: { name_id: 'nodock', display_name: 'No Docker', developer_group_id: randomUUID() } })), 'game_id');
    const build = ok('create build', await api(server.origin, 'POST', `/cloud/games/${gameId}/builds`, { token: admin, body: { display_name: 'Build', image_tag: 'nodock:1', image_file: { path: 'image.tar', content_length: 3 } } }));
    expect((await fetch((build['image_presigned_request'] as { url: string }).url, { method: 'PUT', body: 'abc' })).status).toBe(200);
    ok('complete upload', await api(server.origin, 'POST', `/cloud/uploads/${field(build, 'upload_id')}/complete`, { token: admin }));
    const versionId = field(ok('create version', await api(server.origin, 'POST', `/cloud/games/${gameId}/versions`, {
      token: admin,
      body: { display_name: 'v1', config: { matchmaker: { regions: { local: {} }, docker: { image_id: field(build, 'build_id'), ports: { default: { port: 7777, protocol: 'udp' } } }, game_modes: { default: {} } } } },
    })), 'version_id');
    const game = ok('get game', await api(server.origin, 'GET', `/cloud/games/${gameId}`, { token: admin }))['game'] as { namespaces: { namespace_id: string; name_id: string }[] };
    const ns = game.namespaces.find((n) => n.name_id === 'prod')?.namespace_id ?? '';
    ok('publish', await api(server.origin, 'PUT', `/cloud/games/${gameId}/namespaces/${ns}/version`, { token: admin, body: { version_id: versionId } }));
    const token = field(ok('public token', await api(server.origin, 'POST', `/cloud/games/${gameId}/namespaces/${ns}/tokens/public`, { token: admin })), 'token');
    const find = await api(server.origin, 'POST', '/matchmaker/lobbies/find', { token, body: { game_modes: ['default'] } });
    expect(find.status).toBe(503);
    expect(find.body['code']).toBe('MATCHMAKER_RUNTIME_UNAVAILABLE');
    const warnings = server.tail().split('\n').filter((l) => l.includes('Docker is not reachable'));
    expect(warnings).toHaveLength(1);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 90_000);
