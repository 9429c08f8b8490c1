/**
 * TAVERN_BUILD_MAX_EXPANDED_BYTES in a real server process (`TAVERN_RUNTIME=docker`): a build of
 * 4 MB of LZ4 that expands to 1 GiB, uploaded as the Rivet CLI uploads an OCI bundle, is refused
 * at the server's bound when a lobby needs it; the find fails, and the server's log names the
 * bound and the setting. (The lobby's own log line: images-expansion.test.ts.)
 */
import { RivetClient, RivetError } from '@rivet-gg/api';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { api, startServer, type Server } from '../server/process.js';
import { writeBomb } from './bomb.js';
import { describeWithDocker, dockerProblem } from './engine.js';
import { eventually } from '../wait.js';

const problem = await dockerProblem();
const ADMIN = `bomb-admin-${randomUUID()}`;
const LIMIT = 16 * 1024 * 1024;

describeWithDocker('a decompression bomb against a real server', problem, () => {
  let dir: string;
  let server: Server;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tavern-bomb-e2e-'));
    server = await startServer('tavern (bounded builds)', {
      TAVERN_RUNTIME: 'docker', TAVERN_ADMIN_TOKEN: ADMIN, TAVERN_HOST: '127.0.0.1', TAVERN_PORT: '0', TAVERN_DATA_DIR: join(dir, 'data'),
      TAVERN_INSTANCE_ID: `bomb-${randomUUID().slice(0, 8)}`, TAVERN_BUILD_MAX_EXPANDED_BYTES: String(LIMIT), LOG_LEVEL: 'info',
    });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the find that needs the build fails, and the server says why: the bound and TAVERN_BUILD_MAX_EXPANDED_BYTES', async () => {
    const bomb = join(dir, 'oci-bundle.tar.lz4');
    await writeBomb(bomb, { kind: 'oci_bundle', compression: 'lz4', zeroBytes: 2 ** 30 });
    const bytes = await readFile(bomb);
    const admin = new RivetClient({ environment: server.origin, token: ADMIN });
    const { gameId } = await admin.cloud.games.games.createGame({ nameId: `bomb-${randomUUID().slice(0, 8)}`, displayName: 'Bomb', developerGroupId: randomUUID() });
    const cloud = new RivetClient({ environment: server.origin, token: (await admin.cloud.games.tokens.createCloudToken(gameId)).token });
    const nsId = (await cloud.cloud.games.games.getGameById(gameId)).game.namespaces.find((n) => n.nameId === 'prod')?.namespaceId ?? '';
    const build = await cloud.cloud.games.builds.createGameBuild(gameId, {
      displayName: 'bomb', imageTag: `bomb:${randomUUID().slice(0, 8)}`, kind: 'oci_bundle', compression: 'lz4',
      imageFile: { path: 'oci-bundle.tar.lz4', contentType: 'binary/octet-stream', contentLength: bytes.length },
    });
    expect((await fetch(build.imagePresignedRequest?.url ?? '', { method: 'PUT', body: bytes })).status).toBe(200);
    await cloud.cloud.uploads.completeUpload(build.uploadId);
    const config = {
      matchmaker: {
        regions: { local: {} }, max_players: 8,
        docker: { image_id: build.buildId, ports: { default: { port: 7777, protocol: 'udp' } } },
        game_modes: { default: {} },
      },
    };
    const version = await api(server.origin, 'POST', `/cloud/games/${gameId}/versions`, { token: ADMIN, body: { display_name: 'v1', config } });
    expect(version.status).toBe(200);
    await cloud.cloud.games.namespaces.updateGameNamespaceVersion(gameId, nsId, { versionId: version.body['version_id'] as string });
    const player = new RivetClient({ environment: server.origin, token: (await cloud.cloud.games.namespaces.createGameNamespaceTokenPublic(gameId, nsId)).token });

    const failed = await player.matchmaker.lobbies.find({ gameModes: ['default'] }).then(() => undefined, (e: unknown) => e);
    expect(failed).toBeInstanceOf(RivetError);
    expect((failed as RivetError).body).toMatchObject({ code: 'MATCHMAKER_LOBBY_STOPPED' });
    const line = await eventually('the broken build in the server log', () => server.tail().split('\n').find((l) => l.includes(build.buildId) && l.includes('marked broken')));
    expect(line).toContain(`the archive is more than ${LIMIT} bytes (16.8 MB) once decompressed, the most this server takes (TAVERN_BUILD_MAX_EXPANDED_BYTES)`);
  }, 60_000);
});
