/**
 * Lobbies as real Docker containers, end to end: a real server process (`TAVERN_RUNTIME=docker`,
 * SQLite) driven through HTTP with the real `@rivet-gg/api@23.2.0-rc1` client, a game server
 * image built FROM scratch (the host's node and test/docker/game-server.js), uploaded as an LZ4
 * OCI bundle the way the Rivet CLI sends it. Players exchange UDP datagrams and TCP bytes with the
 * container on the ports find returns; the game's own lines show in getLobbyLogs; crashes, kills
 * from outside, a crash at start (and the backoff after it), the idle pool, and a `kill -9` of
 * Tavern with the reconciler adopting the running game afterwards.
 *
 * Under CI the suite fails, never skips, when the engine is missing.
 */
import { RivetClient, RivetError } from '@rivet-gg/api';
import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { api, startServer, type Server } from '../server/process.js';
import { bridgeGateway } from '../../src/adapters/docker/engine.js';
import { describeWithDocker, docker, dockerProblem, removeBuildImages } from './engine.js';
import { nodeGameServer, type GameServerArchives } from './images.js';
import { eventually as poll } from '../wait.js';
import { putFile } from '../put-file.js';

const problem = await dockerProblem();
const ADMIN = `docker-e2e-admin-${randomUUID()}`;
const INSTANCE = `e2e-${randomUUID().slice(0, 8)}`;

interface World {
  server: Server;
  dataDir: string;
  archives: GameServerArchives;
  gameId: string;
  nsId: string;
  buildId: string;
  /** Every build uploaded: their images are removed at the end. */
  builds: string[];
  cloud: RivetClient;
  cloudToken: string;
  publicToken: string;
  player: RivetClient;
}
const w = { builds: [] as string[] } as World;

const serverEnv = (): Record<string, string> => ({
  TAVERN_RUNTIME: 'docker', TAVERN_ADMIN_TOKEN: ADMIN, TAVERN_HOST: '127.0.0.1', TAVERN_PORT: '0', TAVERN_DATA_DIR: w.dataDir,
  TAVERN_INSTANCE_ID: INSTANCE, TAVERN_RECONCILE_MS: '1000', LOG_LEVEL: 'info',
});

const client = (token: string): RivetClient => new RivetClient({ environment: w.server.origin, token });

/** PUT a file (or `length` bytes of it from `offset`) to a presigned URL, streamed. */
/** Polls `check` every 200 ms until it returns a value (not undefined), for at most `ms`; the server's last lines in the failure. */
const eventually = <T>(what: string, check: () => Promise<T | undefined>, ms = 20_000): Promise<T> =>
  poll(() => `${what}\n${w.server.tail()}`, check, { timeoutMs: ms, everyMs: 200 });

const udpRoundTrip = (port: number, message: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no UDP echo from 127.0.0.1:${port}`));
    }, 3_000);
    socket.once('message', (data) => {
      clearTimeout(timer);
      socket.close();
      resolve(data.toString());
    });
    socket.send(message, port, '127.0.0.1');
  });

/** Opens a TCP connection, sends `lines`, and collects what comes back until `until` matches. */
const tcpTalk = (port: number, lines: readonly string[], until: RegExp): Promise<string> =>
  new Promise((resolve, reject) => {
    let got = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(lines.map((l) => `${l}\n`).join('')));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`TCP 127.0.0.1:${port} answered only ${JSON.stringify(got)}`));
    }, 5_000);
    socket.on('data', (d) => {
      got += d.toString();
      if (until.test(got)) {
        clearTimeout(timer);
        socket.end();
        resolve(got);
      }
    });
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });

const portFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });

const lobbyLines = async (lobbyId: string, stream: 'std_out' | 'std_err'): Promise<string[]> =>
  (await w.cloud.cloud.games.matchmaker.getLobbyLogs(w.gameId, lobbyId, { stream })).lines.map((l) => Buffer.from(l, 'base64').toString());
/** The lines Tavern wrote about the lobby (its `tavern` stream, a Tavern extension the Rivet client does not know). */
const tavernLines = async (lobbyId: string): Promise<string[]> => {
  const r = await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}/matchmaker/lobbies/${lobbyId}/logs?stream=tavern`, { token: w.cloudToken });
  return (r.body['lines'] as string[]).map((l) => Buffer.from(l, 'base64').toString());
};

const containerOf = (lobbyId: string) => docker.getContainer(`tavern-${lobbyId}`);
const gone = async (lobbyId: string): Promise<boolean> => containerOf(lobbyId).inspect().then(() => false, () => true);
const live = async (): Promise<string[]> => (await w.cloud.cloud.games.namespaces.analytics.getAnalyticsMatchmakerLive(w.gameId, w.nsId)).lobbies.map((l) => l.lobbyId);

/** Creates and publishes a version whose `default` mode runs the build with these container and mode settings. */
const publish = async (name: string, extra: { env?: Record<string, string>; idle?: { min: number; max: number }; tier?: string } = {}): Promise<string> => {
  const config = {
    matchmaker: {
      regions: { local: { ...(extra.tier === undefined ? {} : { tier: extra.tier }) } },
      max_players: 8,
      ...(extra.idle === undefined ? {} : { idle_lobbies: extra.idle }),
      docker: {
        image_id: w.buildId,
        env: { GAME_UDP_LABEL: 'game-udp', GAME_TCP_LABEL: 'game-tcp', ...extra.env },
        ports: { 'game-udp': { port: 7777, protocol: 'udp' }, 'game-tcp': { port: 7778, protocol: 'tcp' } },
      },
      game_modes: { default: {} },
    },
  };
  const answer = await api(w.server.origin, 'POST', `/cloud/games/${w.gameId}/versions`, { token: ADMIN, body: { display_name: name, config } });
  if (answer.status !== 200) throw new Error(`create version: ${JSON.stringify(answer.body)}`);
  const versionId = answer.body['version_id'] as string;
  await w.cloud.cloud.games.namespaces.updateGameNamespaceVersion(w.gameId, w.nsId, { versionId });
  return versionId;
};

const ports = (found: { ports: Record<string, { port?: number; hostname: string }> }): { udp: number; tcp: number } => {
  const udp = found.ports['game-udp']?.port;
  const tcp = found.ports['game-tcp']?.port;
  if (udp === undefined || tcp === undefined) throw new Error(`no ports in ${JSON.stringify(found.ports)}`);
  return { udp, tcp };
};

describeWithDocker('lobbies as Docker containers, end to end', problem, () => {
  beforeAll(async () => {
    w.archives = await nodeGameServer(docker);
    w.dataDir = mkdtempSync(join(tmpdir(), 'tavern-docker-e2e-'));
    w.server = await startServer('tavern (docker)', serverEnv());
    const admin = client(ADMIN);
    w.gameId = (await admin.cloud.games.games.createGame({ nameId: `dock-${randomUUID().slice(0, 8)}`, displayName: 'Docker E2E', developerGroupId: randomUUID() })).gameId;
    w.cloudToken = (await admin.cloud.games.tokens.createCloudToken(w.gameId)).token;
    w.cloud = client(w.cloudToken);
    const { game } = await w.cloud.cloud.games.games.getGameById(w.gameId);
    w.nsId = game.namespaces.find((n) => n.nameId === 'prod')?.namespaceId ?? '';
    // The build as the Rivet CLI sends it by default: an OCI bundle, LZ4 frames, one PUT.
    const size = statSync(w.archives.ociBundleLz4).size;
    const build = await w.cloud.cloud.games.builds.createGameBuild(w.gameId, {
      displayName: 'node game server', imageTag: `game:${randomUUID().slice(0, 8)}`,
      imageFile: { path: 'oci-bundle.tar.lz4', contentType: 'binary/octet-stream', contentLength: size },
      kind: 'oci_bundle', compression: 'lz4',
    });
    const url = build.imagePresignedRequest?.url;
    if (url === undefined) throw new Error('no presigned request');
    expect(await putFile(url, w.archives.ociBundleLz4)).toBe(200);
    await w.cloud.cloud.uploads.completeUpload(build.uploadId);
    w.buildId = build.buildId;
    w.builds.push(build.buildId);
    w.publicToken = (await w.cloud.cloud.games.namespaces.createGameNamespaceTokenPublic(w.gameId, w.nsId)).token;
    w.player = client(w.publicToken);
  }, 180_000);

  afterAll(async () => {
    await w.server?.stop();
    // Whatever a failed test left behind.
    const left = await docker.listContainers({ all: true, filters: { label: [`tavern.instance=${INSTANCE}`] } });
    for (const c of left) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
    await removeBuildImages(w.builds);
    if (w.dataDir !== undefined) rmSync(w.dataDir, { recursive: true, force: true });
  }, 60_000);

  it('reports the runtime in /health', async () => {
    const health = await api(w.server.origin, 'GET', '/health');
    expect(health.body).toMatchObject({ status: 'ok', runtime: { runtime: 'docker', reachable: true, instance: INSTANCE, userland_proxy: 'off' } });
  });

  it('find starts a hardened container; players reach it by UDP and TCP on the returned ports; its lines show in the logs; close and stop work', async () => {
    await publish('v1');
    const found = await w.player.matchmaker.lobbies.find({ gameModes: ['default'] });
    const lobbyId = found.lobby.lobbyId;
    const { udp, tcp } = ports(found);
    for (const p of [udp, tcp]) expect(p >= 26_000 && p <= 31_999, `port ${p}`).toBe(true);
    expect(found.ports['game-udp']?.hostname).toBe('127.0.0.1');

    expect(await udpRoundTrip(udp, 'ping over udp')).toBe('ping over udp');
    const talk = await tcpTalk(tcp, ['hello over tcp', `connect ${found.player.token}`], /connected \S+/);
    expect(talk).toContain('hello over tcp');
    expect(talk).toMatch(new RegExp(`connected ${found.player.token.replace(/\./g, '\\.')}`));

    const out = await eventually('the game lines in std_out', async () => {
      const lines = await lobbyLines(lobbyId, 'std_out');
      return lines.some((l) => l.includes('player connected')) ? lines : undefined;
    });
    expect(out.some((l) => l.startsWith('game server listening'))).toBe(true);
    expect(out).toContain('lobby ready');
    expect(await lobbyLines(lobbyId, 'std_err')).toContain('game server stderr check');

    // The engine has the container as Tavern asked for it.
    const info = await containerOf(lobbyId).inspect();
    expect(info.HostConfig).toMatchObject({ CapDrop: ['ALL'], SecurityOpt: ['no-new-privileges'], PidsLimit: 256, ReadonlyRootfs: true, Privileged: false });
    expect(Object.keys(info.NetworkSettings.Networks)).toEqual(['tavern-lobbies']);
    expect(info.HostConfig.Memory).toBe(2048 * 1024 * 1024);
    expect(info.HostConfig.MemorySwap).toBe(info.HostConfig.Memory);
    expect(info.HostConfig.PortBindings).toEqual({ '7777/udp': [{ HostIp: '127.0.0.1', HostPort: String(udp) }], '7778/tcp': [{ HostIp: '127.0.0.1', HostPort: String(tcp) }] });
    expect(info.Config.Labels).toMatchObject({ 'tavern.lobby': lobbyId, 'tavern.namespace': w.nsId, 'tavern.instance': INSTANCE });
    expect(info.Config.Env).toEqual(expect.arrayContaining([`RIVET_LOBBY_ID=${lobbyId}`, 'PORT_GAME_UDP=7777', 'PORT_GAME_TCP=7778', 'GAME_UDP_LABEL=game-udp']));
    expect(info.Config.Env.some((e) => e.startsWith('RIVET_TOKEN=lobby.'))).toBe(true);
    // The lobbies' listener at their network's gateway.
    const gateway = await bridgeGateway(docker, 'tavern-lobbies');
    expect(info.Config.Env).toContain(`RIVET_API_ENDPOINT=http://${gateway}:${new URL(w.server.origin).port}`);
    expect(info.Mounts).toEqual([]);

    // The game closes its lobby: the next find gets a new lobby, this one keeps running.
    expect(await tcpTalk(tcp, ['close'], /closed/)).toMatch(/closed/);
    const next = await w.player.matchmaker.lobbies.find({ gameModes: ['default'] });
    expect(next.lobby.lobbyId).not.toBe(lobbyId);
    expect((await containerOf(lobbyId).inspect()).State.Running).toBe(true);

    // Stopping it: SIGTERM, the container and its ports are gone.
    await w.cloud.cloud.games.matchmaker.deleteMatchmakerLobby(w.gameId, lobbyId);
    await eventually('the stopped container to be removed', async () => ((await gone(lobbyId)) ? true : undefined));
    expect(await lobbyLines(lobbyId, 'std_out')).toContain('SIGTERM received, exiting');
    expect(await portFree(tcp)).toBe(true);
    await eventually('the lobby to leave live analytics', async () => ((await live()).includes(lobbyId) ? undefined : true));
  });

  it('a `docker save` archive uploaded in parts (multipart) runs as well', async () => {
    const size = statSync(w.archives.dockerImage).size;
    const build = await w.cloud.cloud.games.builds.createGameBuild(w.gameId, {
      displayName: 'node game server (docker save)', imageTag: `game:${randomUUID().slice(0, 8)}`,
      imageFile: { path: 'image.tar', contentType: 'binary/octet-stream', contentLength: size },
      kind: 'docker_image', compression: 'none', multipartUpload: true,
    });
    const parts = build.imagePresignedRequests ?? [];
    expect(parts.length).toBeGreaterThanOrEqual(1);
    for (const part of parts) expect(await putFile(part.url, w.archives.dockerImage, part.byteOffset, part.contentLength)).toBe(200);
    await w.cloud.cloud.uploads.completeUpload(build.uploadId);
    const ociBuild = w.buildId;
    w.buildId = build.buildId;
    w.builds.push(build.buildId);
    try {
      await publish('v-docker-save');
      const found = await w.player.matchmaker.lobbies.find({ gameModes: ['default'] });
      expect(await udpRoundTrip(ports(found).udp, 'from a docker save build')).toBe('from a docker save build');
      await w.cloud.cloud.games.matchmaker.deleteMatchmakerLobby(w.gameId, found.lobby.lobbyId);
    } finally {
      w.buildId = ociBuild;
    }
  });

  it('a crash after ready stops the lobby as crashed; so does a docker kill from outside', async () => {
    const a = await w.player.matchmaker.lobbies.find({ gameModes: ['default'] });
    await tcpTalk(ports(a).tcp, ['crash 5'], /5/).catch(() => undefined);
    await eventually('the crashed container to be removed', async () => ((await gone(a.lobby.lobbyId)) ? true : undefined));
    await eventually('the exit code in the logs', async () => ((await tavernLines(a.lobby.lobbyId)).includes('the container exited with code 5') ? true : undefined));
    expect(await lobbyLines(a.lobby.lobbyId, 'std_err')).toContain('crashing with exit code 5');
    // It is listed among the recent failures: why, the engine's exit code, and its last lines.
    const failures = await eventually('the crash among the recent failures', async () => {
      const r = await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}/namespaces/${w.nsId}/analytics/matchmaker/stopped?failed=true`, { token: w.cloudToken });
      return (r.body['lobbies'] as Record<string, unknown>[]).find((l) => l['lobby_id'] === a.lobby.lobbyId);
    });
    expect(failures).toMatchObject({ reason: 'crashed', failed: true, exit_code: 5 });
    expect(failures['last_lines']).toEqual(expect.arrayContaining([
      expect.objectContaining({ stream: 'std_err', line: 'crashing with exit code 5' }),
      expect.objectContaining({ stream: 'tavern', line: 'the container exited with code 5' }),
      expect.objectContaining({ stream: 'tavern', line: 'stopping: the game server crashed with code 5' }),
    ]));
    await eventually('the crashed lobby to leave live analytics', async () => ((await live()).includes(a.lobby.lobbyId) ? undefined : true));

    const b = await w.player.matchmaker.lobbies.find({ gameModes: ['default'] });
    const bId = b.lobby.lobbyId;
    await containerOf(bId).kill({ signal: 'SIGKILL' });
    await eventually('the killed container to be removed', async () => ((await gone(bId)) ? true : undefined));
    await eventually('the killed lobby to leave live analytics', async () => ((await live()).includes(bId) ? undefined : true));
    expect(await tavernLines(bId)).toContain('the container exited with code 137');
    expect(await portFree(ports(b).tcp)).toBe(true);

    // A game over its tier's memory (basic-1d16: 128 MiB, no swap) is killed, and its log says why.
    await publish('v-small', { tier: 'basic-1d16' });
    const c = await w.player.matchmaker.lobbies.find({ gameModes: ['default'] });
    expect((await containerOf(c.lobby.lobbyId).inspect()).HostConfig).toMatchObject({ Memory: 128 * 1024 * 1024, MemorySwap: 128 * 1024 * 1024, NanoCpus: 63_000_000 });
    await tcpTalk(ports(c).tcp, ['oom'], /oom/).catch(() => undefined);
    await eventually('the OOM kill in the logs', async () => ((await tavernLines(c.lobby.lobbyId)).some((l) => l.includes('more memory than its tier allows')) ? true : undefined));
    await eventually('the OOM-killed container to be removed', async () => ((await gone(c.lobby.lobbyId)) ? true : undefined));
  });

  it('a game that crashes at start fails its find, and after two in a row Tavern backs off instead of looping', async () => {
    await publish('v-crashes', { env: { GAME_EXIT_AT_START: '3' } });
    let last = '';
    for (let i = 0; i < 2; i++) {
      const failed = await w.player.matchmaker.lobbies.find({ gameModes: ['default'] }).then(() => undefined, (e: unknown) => e);
      expect(failed).toBeInstanceOf(RivetError);
      // The refusal names the lobby (its log says why), the reason and the engine's exit code.
      const body = (failed as RivetError).body as { code: string; message: string; metadata: { lobby_id: string } };
      expect(body).toMatchObject({ code: 'MATCHMAKER_LOBBY_STOPPED', metadata: { reason: 'start-failed', exit_code: 3 } });
      last = body.metadata.lobby_id;
      expect(body.message).toBe(`The lobby ${last} has stopped or is stopping (start-failed).`);
      expect(await lobbyLines(last, 'std_err')).toContain('exiting at start with code 3 (GAME_EXIT_AT_START)');
    }
    const refused = await api(w.server.origin, 'POST', '/matchmaker/lobbies/find', { token: w.publicToken, body: { game_modes: ['default'] } });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: 'MATCHMAKER_LOBBY_START_BACKOFF', metadata: { lobby_id: last } });
    const analytics = await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}/namespaces/${w.nsId}/analytics/matchmaker/live`, { token: ADMIN });
    expect(analytics.body['start_backoff']).toEqual([expect.objectContaining({ game_mode: 'default', failures: 2 })]);
    const left = await docker.listContainers({ all: true, filters: { label: [`tavern.instance=${INSTANCE}`, `tavern.namespace=${w.nsId}`] } });
    expect(left.filter((c) => c.State !== 'running')).toEqual([]);
  });

  it('the idle pool starts and stops real containers', async () => {
    const idle = await publish('v-idle', { idle: { min: 2, max: 2 } });
    const running = async (): Promise<number> => (await docker.listContainers({ filters: { label: [`tavern.instance=${INSTANCE}`, `tavern.version=${idle}`] } })).length;
    await eventually('two idle containers', async () => ((await running()) >= 2 ? true : undefined), 30_000);
    await publish('v-no-idle', { idle: { min: 0, max: 0 } });
    await eventually('the idle containers to stop', async () => ((await running()) === 0 ? true : undefined), 30_000);
  });

  it('after a kill -9 of Tavern the reconciler adopts the running game (same ports, logs go on) and removes orphans', async () => {
    const found = await w.player.matchmaker.lobbies.find({ gameModes: ['default'] });
    const lobbyId = found.lobby.lobbyId;
    const { udp, tcp } = ports(found);
    const image = (await containerOf(lobbyId).inspect()).Config.Image;
    const orphan = await docker.createContainer({ Image: image, Cmd: ['/usr/bin/node', '-e', 'setTimeout(() => {}, 1e9)'], Labels: { 'tavern.lobby': randomUUID(), 'tavern.namespace': w.nsId, 'tavern.version': 'none', 'tavern.instance': INSTANCE } });
    await orphan.start();

    w.server.child.kill('SIGKILL');
    await new Promise((r) => w.server.child.once('exit', r));
    expect((await containerOf(lobbyId).inspect()).State.Running).toBe(true);
    expect(await udpRoundTrip(udp, 'while tavern is down')).toBe('while tavern is down');

    w.server = await startServer('tavern (docker, restarted)', serverEnv());
    w.cloud = client(w.cloudToken);
    w.player = client(w.publicToken);
    await eventually('the orphan to be removed', async () => (await orphan.inspect().then(() => false, () => true)) ? true : undefined);
    expect(await live()).toContain(lobbyId);
    expect(await udpRoundTrip(udp, 'after the restart')).toBe('after the restart');
    await tcpTalk(tcp, ['log written after the restart'], /after the restart/);
    await eventually('a line written after the restart', async () => ((await lobbyLines(lobbyId, 'std_out')).includes('written after the restart') ? true : undefined));
    await w.cloud.cloud.games.matchmaker.deleteMatchmakerLobby(w.gameId, lobbyId);
    await eventually('the adopted container to stop', async () => ((await gone(lobbyId)) ? true : undefined));
  }, 120_000);
});
