/**
 * Builds through a registry, end to end: a real server process (`TAVERN_RUNTIME=docker`,
 * `TAVERN_REGISTRY` on a real docker-registry on 127.0.0.1) takes an uploaded build; the lobby a
 * find starts runs it by the digest the push reported, which the registry serves. Then the
 * registry goes down: the next build cannot be pushed, its lobby fails to start, and the lobby's
 * log says why, naming the registry.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeNeeding } from '../needs.js';
import { freePort } from '../proxy/helpers.js';
import { api, field, ok, startServer, type Server } from '../server/process.js';
import { startRegistry } from '../swarm/registry.js';
import { pidsMentioning, signalAndWait } from '../swarm/system.js';
import { docker, dockerProblem, removeBuildImages, removeRepository } from './engine.js';
import { nodeGameServer, type GameServerArchives } from './images.js';
import { putFile } from '../put-file.js';

const REGISTRY_BIN = '/usr/bin/docker-registry';
const problem = (await dockerProblem()) ?? (existsSync(REGISTRY_BIN) ? undefined : `${REGISTRY_BIN} is missing`);
const ADMIN = `registry-e2e-admin-${randomUUID()}`;
const INSTANCE = `registry-e2e-${randomUUID().slice(0, 8)}`;
const PREFIX = `swarmreg-${randomUUID().slice(0, 8)}`;

/** PUTs a file to a presigned URL, streamed. */
describeNeeding({ what: 'the Docker Engine and docker-registry', start: 'start dockerd and apt-get install docker-registry' }, 'a server pushing builds to a registry (real server, engine and registry)', problem, () => {
  let dir: string;
  let address: string;
  let server: Server;
  let archives: GameServerArchives;
  let gameId: string;
  let nsId: string;
  let publicToken: string;
  const builds: string[] = [];

  /** Uploads the node game server as a new build (an LZ4 OCI bundle, as the Rivet CLI sends it); its id. */
  const upload = async (): Promise<string> => {
    const build = ok('create build', await api(server.origin, 'POST', `/cloud/games/${gameId}/builds`, {
      token: ADMIN,
      body: { display_name: 'node game server', image_tag: `game:${randomUUID().slice(0, 8)}`, kind: 'oci_bundle', compression: 'lz4', image_file: { path: 'oci-bundle.tar.lz4', content_length: statSync(archives.ociBundleLz4).size } },
    }));
    expect(await putFile((build['image_presigned_request'] as { url: string }).url, archives.ociBundleLz4)).toBe(200);
    ok('complete upload', await api(server.origin, 'POST', `/cloud/uploads/${field(build, 'upload_id')}/complete`, { token: ADMIN }));
    const id = field(build, 'build_id');
    builds.push(id);
    return id;
  };

  /** Publishes a version running `buildId` and finds a lobby in it: the find's answer. */
  const findIn = async (buildId: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const config = { matchmaker: { regions: { local: {} }, max_players: 8, docker: { image_id: buildId, env: { GAME_UDP_LABEL: 'game-udp', GAME_TCP_LABEL: 'game-tcp' }, ports: { 'game-udp': { port: 7777, protocol: 'udp' }, 'game-tcp': { port: 7778, protocol: 'tcp' } } }, game_modes: { default: {} } } };
    const versionId = field(ok('create version', await api(server.origin, 'POST', `/cloud/games/${gameId}/versions`, { token: ADMIN, body: { display_name: `v-${buildId.slice(0, 8)}`, config } })), 'version_id');
    ok('publish', await api(server.origin, 'PUT', `/cloud/games/${gameId}/namespaces/${nsId}/version`, { token: ADMIN, body: { version_id: versionId } }));
    return api(server.origin, 'POST', '/matchmaker/lobbies/find', { token: publicToken, body: { game_modes: ['default'] } });
  };

  beforeAll(async () => {
    archives = await nodeGameServer(docker);
    dir = await mkdtemp(join(tmpdir(), 'tavern-swarmreg-e2e-'));
    address = `127.0.0.1:${await freePort()}`;
    await startRegistry(join(dir, 'registry'), address);
    server = await startServer('tavern (docker, registry)', {
      TAVERN_RUNTIME: 'docker', TAVERN_ADMIN_TOKEN: ADMIN, TAVERN_HOST: '127.0.0.1', TAVERN_PORT: '0', TAVERN_DATA_DIR: join(dir, 'data'),
      TAVERN_INSTANCE_ID: INSTANCE, LOG_LEVEL: 'info', TAVERN_REGISTRY: `${address}/${PREFIX}`, TAVERN_REGISTRY_INSECURE: 'true',
    });
    gameId = field(ok('create game', await api(server.origin, 'POST', '/cloud/games', { token: ADMIN, body: { name_id: `reg-${randomUUID().slice(0, 8)}`, display_name: 'Registry', developer_group_id: randomUUID() } })), 'game_id');
    const game = ok('get game', await api(server.origin, 'GET', `/cloud/games/${gameId}`, { token: ADMIN }))['game'] as { namespaces: { namespace_id: string; name_id: string }[] };
    nsId = game.namespaces.find((n) => n.name_id === 'prod')?.namespace_id ?? '';
    publicToken = field(ok('public token', await api(server.origin, 'POST', `/cloud/games/${gameId}/namespaces/${nsId}/tokens/public`, { token: ADMIN })), 'token');
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    const left = await docker.listContainers({ all: true, filters: { label: [`tavern.instance=${INSTANCE}`] } });
    for (const c of left) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
    await signalAndWait(await pidsMentioning(`${dir}/`), 'SIGKILL', 10_000);
    await removeBuildImages(builds);
    await removeRepository(`${address}/${PREFIX}/tavern-build`);
    await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('a lobby of an uploaded build runs the image pushed to the registry, by its digest', async () => {
    const buildId = await upload();
    const found = await findIn(buildId);
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    const lobbyId = (found.body['lobby'] as { lobby_id: string }).lobby_id;
    const container = await docker.getContainer(`tavern-${lobbyId}`).inspect();
    const image = container.Config.Image;
    expect(image).toMatch(new RegExp(`^${address.replaceAll('.', '\\.')}/${PREFIX}/tavern-build@sha256:[0-9a-f]{64}$`));
    expect(container.State.Running).toBe(true);
    const digest = image.slice(image.indexOf('@') + 1);
    const manifest = await fetch(`http://${address}/v2/${PREFIX}/tavern-build/manifests/${buildId}`, { method: 'HEAD', headers: { accept: 'application/vnd.docker.distribution.manifest.v2+json' } });
    expect(manifest.status).toBe(200);
    expect(manifest.headers.get('docker-content-digest')).toBe(digest);
    expect(server.tail()).toContain(`pushed the build's image as ${image}`);
  }, 120_000);

  it('with the registry down, a new build cannot be pushed: its lobby fails to start and its log names the registry', async () => {
    await signalAndWait(await pidsMentioning(`${dir}/`), 'SIGKILL', 10_000);
    const buildId = await upload();
    const found = await findIn(buildId);
    expect(found.status).toBe(400);
    expect(found.body).toMatchObject({ code: 'MATCHMAKER_LOBBY_STOPPED', metadata: { reason: 'start-failed' } });
    const lobbyId = (found.body['metadata'] as { lobby_id: string }).lobby_id;
    const logs = ok('lobby logs', await api(server.origin, 'GET', `/cloud/games/${gameId}/matchmaker/lobbies/${lobbyId}/logs?stream=tavern`, { token: ADMIN }));
    const lines = (logs['lines'] as string[]).map((l) => Buffer.from(l, 'base64').toString());
    expect(lines.some((l) => l.startsWith(`start failed: the build's image could not be pushed to the registry ${address}: `) && /connection refused/.test(l)), lines.join('\n')).toBe(true);
  }, 120_000);
});
