/**
 * Tenants cannot reach the control plane, on a real engine and a real server process
 * (`TAVERN_RUNTIME=docker`, SQLite): from INSIDE a lobby's container (a `docker exec` of the image's
 * own node, as the container's forced user) Tavern's public API port on the host loopback, the
 * database (5432) and the engine's TCP ports at the host's addresses on the lobby network and on
 * the default bridge do not answer, the Docker socket is absent, another lobby's container does
 * not answer on its own address (inter-container communication off), and `RIVET_API_ENDPOINT`
 * answers the lobby endpoints and nothing else (404 for the cloud, admin, dashboard, health and
 * metrics); with the API on every address, its public listener refuses the lobbies' subnet and
 * the lobbies' endpoint is a listener of its own. Host networking: accepted at publish with `TAVERN_DOCKER_ALLOW_HOST_NETWORK=true`,
 * refused with it off, and a version published before is never started, saying why in its log.
 *
 * Under CI the suite fails, never skips, when the engine is missing.
 */
import { RivetClient } from '@rivet-gg/api';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LOBBY_NETWORK } from '../../src/adapters/docker/lobby-network.js';
import { HOST_NETWORK_REFUSED } from '../../src/core/config/host-network.js';
import { api, startServer, type Server } from '../server/process.js';
import { describeWithDocker, docker, dockerProblem, removeBuildImages } from './engine.js';
import { nodeGameServer } from './images.js';
import { probe } from './probe.js';
import { bridgeGateway } from './run.js';
import { putFile } from '../put-file.js';

const problem = await dockerProblem();
const ADMIN = `isolation-admin-${randomUUID()}`;
const INSTANCE = `isolation-${randomUUID().slice(0, 8)}`;
const USER = '65534:65534';

const w = {} as { server: Server; dataDir: string; gameId: string; nsId: string; buildId: string; cloudToken: string; publicToken: string };

const serverEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  TAVERN_RUNTIME: 'docker', TAVERN_ADMIN_TOKEN: ADMIN, TAVERN_HOST: '127.0.0.1', TAVERN_PORT: '0', TAVERN_DATA_DIR: w.dataDir,
  TAVERN_INSTANCE_ID: INSTANCE, TAVERN_DOCKER_USER: USER, LOG_LEVEL: 'info', ...extra,
});

const hostVersion = (): unknown => ({
  matchmaker: {
    regions: { local: {} }, max_players: 1,
    docker: { image_id: w.buildId, network_mode: 'host', ports: { 'game-tcp': { port: 27_950, protocol: 'tcp' } } },
    game_modes: { default: {} },
  },
});
const bridgeVersion = (): unknown => ({
  matchmaker: {
    regions: { local: {} }, max_players: 1,
    docker: { image_id: w.buildId, env: { GAME_UDP_LABEL: 'game-udp', GAME_TCP_LABEL: 'game-tcp' }, ports: { 'game-udp': { port: 7777, protocol: 'udp' }, 'game-tcp': { port: 7778, protocol: 'tcp' } } },
    game_modes: { default: {} },
  },
});

/** Publishes a version (answer as it came) and, when it was accepted, makes it the namespace's. */
const publish = async (name: string, config: unknown) => {
  const answer = await api(w.server.origin, 'POST', `/cloud/games/${w.gameId}/versions`, { token: ADMIN, body: { display_name: name, config } });
  if (answer.status === 200) {
    const set = await api(w.server.origin, 'PUT', `/cloud/games/${w.gameId}/namespaces/${w.nsId}/version`, { token: ADMIN, body: { version_id: answer.body['version_id'] } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
  }
  return answer;
};

const find = () => api(w.server.origin, 'POST', '/matchmaker/lobbies/find', { token: w.publicToken, body: { game_modes: ['default'] } });

/** A TCP exchange with a lobby's published port from the host: the line comes back. */
const tcpEcho = (port: number, line: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${line}\n`));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no echo from 127.0.0.1:${port}`));
    }, 5_000);
    socket.once('data', (d) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(d.toString().trim());
    });
    socket.once('error', reject);
  });

describeWithDocker('a tenant\'s lobby cannot reach the control plane', problem, () => {
  beforeAll(async () => {
    const archives = await nodeGameServer(docker);
    w.dataDir = mkdtempSync(join(tmpdir(), 'tavern-docker-isolation-'));
    w.server = await startServer('tavern (docker, host network allowed)', serverEnv({ TAVERN_DOCKER_ALLOW_HOST_NETWORK: 'true' }));
    const admin = new RivetClient({ environment: w.server.origin, token: ADMIN });
    w.gameId = (await admin.cloud.games.games.createGame({ nameId: `iso-${randomUUID().slice(0, 8)}`, displayName: 'Isolation', developerGroupId: randomUUID() })).gameId;
    w.cloudToken = (await admin.cloud.games.tokens.createCloudToken(w.gameId)).token;
    const cloud = new RivetClient({ environment: w.server.origin, token: w.cloudToken });
    w.nsId = (await cloud.cloud.games.games.getGameById(w.gameId)).game.namespaces.find((n) => n.nameId === 'prod')?.namespaceId ?? '';
    const build = await cloud.cloud.games.builds.createGameBuild(w.gameId, {
      displayName: 'node game server', imageTag: `game:${randomUUID().slice(0, 8)}`,
      imageFile: { path: 'image.tar', contentType: 'binary/octet-stream', contentLength: statSync(archives.dockerImage).size }, kind: 'docker_image', compression: 'none',
    });
    expect(await putFile(build.imagePresignedRequest?.url ?? '', archives.dockerImage)).toBe(200);
    await cloud.cloud.uploads.completeUpload(build.uploadId);
    w.buildId = build.buildId;
    w.publicToken = (await cloud.cloud.games.namespaces.createGameNamespaceTokenPublic(w.gameId, w.nsId)).token;
  }, 180_000);

  afterAll(async () => {
    await w.server?.stop();
    const left = await docker.listContainers({ all: true, filters: { label: [`tavern.instance=${INSTANCE}`] } });
    for (const c of left) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
    if (w.buildId !== undefined) await removeBuildImages([w.buildId]);
    if (w.dataDir !== undefined) rmSync(w.dataDir, { recursive: true, force: true });
  }, 60_000);

  it('host networking: accepted with the setting on; with it off refused at publish, and a version published before is never started', async () => {
    expect((await publish('host-allowed', hostVersion())).status).toBe(200);
    await w.server.stop();
    w.server = await startServer('tavern (docker)', serverEnv());

    const refused = await publish('host-refused', hostVersion());
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR', metadata: { errors: [{ path: ['config', 'matchmaker', 'network-mode', 'host-not-allowed'], message: HOST_NETWORK_REFUSED }] } });
    expect(String(refused.body['message'])).toContain('TAVERN_DOCKER_ALLOW_HOST_NETWORK=true');

    // The namespace still runs the version published while it was allowed: its lobby never starts.
    const failed = await find();
    expect([failed.status, failed.body['code']]).toEqual([400, 'MATCHMAKER_LOBBY_STOPPED']);
    expect(await docker.listContainers({ all: true, filters: { label: [`tavern.instance=${INSTANCE}`] } })).toEqual([]);
    // The refusal names the lobby; its log says why, in Tavern's own stream.
    const lobbyId = String((failed.body['metadata'] as { lobby_id?: unknown } | undefined)?.lobby_id);
    const logs = await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}/matchmaker/lobbies/${lobbyId}/logs?stream=tavern`, { token: ADMIN });
    const lines = (logs.body['lines'] as string[]).map((l) => Buffer.from(l, 'base64').toString());
    expect(lines).toContain(`start failed: ${HOST_NETWORK_REFUSED}`);
  }, 120_000);

  it('from inside a lobby: no control plane, no other lobby, and RIVET_API_ENDPOINT answers the lobby endpoints only', async () => {
    expect((await publish('bridge', bridgeVersion())).status).toBe(200);
    const a = await find();
    const b = await find();
    expect([a.status, b.status]).toEqual([200, 200]);
    const lobbyOf = (found: typeof a) => docker.getContainer(`tavern-${String((found.body['lobby'] as { lobby_id: string }).lobby_id)}`);
    const [infoA, infoB] = await Promise.all([lobbyOf(a).inspect(), lobbyOf(b).inspect()]);
    expect(infoA.Id).not.toBe(infoB.Id);

    const network = (await docker.getNetwork(LOBBY_NETWORK).inspect()) as { Id: string; Options: Record<string, string>; IPAM: { Config: { Gateway: string }[] } };
    const gateway = network.IPAM.Config[0]?.Gateway ?? '';
    // Lobby B listens: the host reaches its published TCP port; lobby A reaches its own address.
    const ports = b.body['ports'] as Record<string, { port: number }>;
    expect(await tcpEcho(ports['game-tcp']?.port ?? 0, 'from the host')).toBe('from the host');
    const addressOf = (info: typeof infoA): string => Object.values(info.NetworkSettings.Networks)[0]?.IPAddress ?? '';
    const apiPort = Number(new URL(w.server.origin).port);
    const defaultBridge = await bridgeGateway(docker);
    const hosts = [gateway, defaultBridge];
    const seen = await probe(docker, lobbyOf(a), {
      tcp: [
        { host: addressOf(infoA), port: 7778 },
        { host: addressOf(infoB), port: 7778 },
        { host: '127.0.0.1', port: apiPort },
        { host: '127.0.0.1', port: 5432 },
        ...hosts.flatMap((host) => [5432, 2375, 2376].map((port) => ({ host, port }))),
      ],
      http: [
        { method: 'POST', path: '/matchmaker/lobbies/ready', token: 'lobby', body: {} },
        { method: 'GET', path: '/matchmaker/lobbies/list', token: w.publicToken },
        { method: 'GET', path: '/cloud/games', token: ADMIN },
        { method: 'POST', path: '/cloud/games', token: ADMIN, body: { name_id: 'taken-over', display_name: 'Taken over', developer_group_id: randomUUID() } },
        { method: 'GET', path: `/cloud/games/${w.gameId}/namespaces/${w.nsId}/analytics/matchmaker/live`, token: w.cloudToken },
        { method: 'GET', path: '/cloud/bootstrap' },
        { method: 'GET', path: '/metrics', token: ADMIN },
        { method: 'GET', path: '/health' },
        { method: 'GET', path: '/dashboard' },
      ],
      files: ['/var/run/docker.sock', '/run/docker.sock'],
    });
    const notFound = { status: 404, code: 'API_NOT_FOUND' };
    // One comparison, so that a failure shows everything a lobby could reach.
    expect(seen).toEqual({
      tcp: {
        [`${addressOf(infoA)}:7778`]: 'open', // its own game port: the probe connects where something listens
        [`${addressOf(infoB)}:7778`]: 'timeout', // the other lobby's, dropped (ICC off)
        [`127.0.0.1:${apiPort}`]: 'refused', // Tavern's public API on the host's loopback
        '127.0.0.1:5432': 'refused',
        ...Object.fromEntries(hosts.flatMap((host) => [5432, 2375, 2376].map((port) => [`${host}:${port}`, 'refused']))),
      },
      http: {
        'POST /matchmaker/lobbies/ready': { status: 200 },
        'GET /matchmaker/lobbies/list': { status: 200 },
        'GET /cloud/games': notFound,
        'POST /cloud/games': notFound,
        [`GET /cloud/games/${w.gameId}/namespaces/${w.nsId}/analytics/matchmaker/live`]: notFound,
        'GET /cloud/bootstrap': notFound,
        'GET /metrics': notFound,
        'GET /health': notFound,
        'GET /dashboard': notFound,
      },
      files: { '/var/run/docker.sock': false, '/run/docker.sock': false },
    });
    // Both on Tavern's network, ICC off, as the forced user; the API endpoint is that network's gateway.
    expect(network.Options['com.docker.network.bridge.enable_icc']).toBe('false');
    for (const info of [infoA, infoB]) {
      expect(Object.keys(info.NetworkSettings.Networks)).toEqual([LOBBY_NETWORK]);
      expect(info.HostConfig.NetworkMode).toBe(network.Id);
      expect(info.Config.User).toBe(USER);
      expect(info.Config.Env).toContain(`RIVET_API_ENDPOINT=http://${gateway}:${new URL(w.server.origin).port}`);
    }
    const top = (await lobbyOf(a).top({ ps_args: '-o pid,uid,args' })) as { Processes: string[][] };
    expect(top.Processes.map((p) => p[1])).toEqual(top.Processes.map(() => '65534'));

    // The same calls on the public listener, from the host: the API is all there, and the lobby created no game.
    expect((await api(w.server.origin, 'GET', '/health')).status).toBe(200);
    const games = await api(w.server.origin, 'GET', '/cloud/games', { token: ADMIN });
    expect(games.status).toBe(200);
    expect((games.body['games'] as { name_id: string }[]).map((g) => g.name_id)).not.toContain('taken-over');
  }, 120_000);

  it('with the API on every address (TAVERN_HOST=0.0.0.0), its listener refuses the lobbies, which get a listener of their own', async () => {
    await w.server.stop();
    w.server = await startServer('tavern (docker, every address)', serverEnv({ TAVERN_HOST: '0.0.0.0' }));
    const found = await find();
    expect(found.status, `${JSON.stringify(found.body)}\n${w.server.tail()}`).toBe(200);
    const lobby = docker.getContainer(`tavern-${String((found.body['lobby'] as { lobby_id: string }).lobby_id)}`);
    const network = (await docker.getNetwork(LOBBY_NETWORK).inspect()) as { IPAM: { Config: { Gateway: string }[] } };
    const gateway = network.IPAM.Config[0]?.Gateway ?? '';
    const apiPort = new URL(w.server.origin).port;
    const endpoint = ((await lobby.inspect()).Config.Env.find((e) => e.startsWith('RIVET_API_ENDPOINT=')) ?? '').slice('RIVET_API_ENDPOINT='.length);
    expect(endpoint).toMatch(new RegExp(`^http://${gateway.replaceAll('.', '\\.')}:\\d+$`));
    expect(new URL(endpoint).port).not.toBe(apiPort);
    const publicApi = `http://${gateway}:${apiPort}`;
    const seen = await probe(docker, lobby, {
      http: [
        { method: 'GET', path: '/health', origin: publicApi },
        { method: 'GET', path: '/cloud/games', token: ADMIN, origin: publicApi },
        { method: 'POST', path: '/matchmaker/lobbies/ready', token: 'lobby', body: {} },
        { method: 'GET', path: '/health' },
      ],
    });
    expect(seen.http[`GET ${publicApi}/health`]).toHaveProperty('error');
    expect(seen.http[`GET ${publicApi}/cloud/games`]).toHaveProperty('error');
    expect(seen.http['POST /matchmaker/lobbies/ready']).toEqual({ status: 200 });
    expect(seen.http['GET /health']).toEqual({ status: 404, code: 'API_NOT_FOUND' });
    // From the host, the public listener answers as ever.
    expect((await api(`http://127.0.0.1:${apiPort}`, 'GET', '/health')).status).toBe(200);
  }, 120_000);
});
