/**
 * The game proxy end to end with real lobbies: a server process (Docker runtime, HAProxy on a free
 * port), a build whose game server answers HTTP and WebSocket on its `http` port; a player's find
 * returns `<lobby>-web.lobby.local.<job domain>:<proxy port>`; the client reaches the container
 * there (Host header to 127.0.0.1), holds a WebSocket; its `tcp_tls` port answers over TLS with the
 * wildcard certificate (a CA of the test) on the proxied port find returns; once the lobby is
 * stopped its hostname is 404 and its TLS port refuses connections.
 */
import { RivetClient } from '@rivet-gg/api';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { docker, dockerProblem, removeBuildImages } from '../docker/engine.js';
import { nodeImage } from '../docker/images.js';
import { describeNeeding } from '../needs.js';
import { eventually } from '../wait.js';
import { api, startServer, type Server } from '../server/process.js';
import { makeCa, writeLeaf } from './certs.js';
import { echo, freePort, get, HAPROXY, haproxyProblem, openWebSocket } from './helpers.js';
import { putFile } from '../put-file.js';

const ADMIN = `proxy-docker-admin-${randomUUID()}`;
const INSTANCE = `proxy-${randomUUID().slice(0, 8)}`;
const DOMAIN = 'example.test';

const problem = (await dockerProblem()) ?? haproxyProblem();

describeNeeding({ what: 'the Docker Engine and HAProxy', start: 'start dockerd and install haproxy' }, 'game proxy with lobbies on Docker', problem, () => {
  let server: Server;
  let dataDir: string;
  let proxyPort: number;
  let player: RivetClient;
  let gameId: string;
  let buildId: string | undefined;
  let ca: Buffer;

  /** A TLS connection to the proxied port with SNI `servername`, trusting the test's CA only: what it answers to `text`. */
  const askTls = (port: number, servername: string, text: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket: TLSSocket = tlsConnect({ host: '127.0.0.1', port, servername, ca }, () => socket.write(text));
      let got = '';
      socket.on('data', (c: Buffer) => {
        got += c.toString();
        if (got.endsWith(text)) socket.end();
      });
      socket.on('close', () => resolve(got));
      socket.on('error', reject);
    });

  beforeAll(async () => {
    const image = await nodeImage(docker, 'node-http', fileURLToPath(new URL('./lobby-server.js', import.meta.url)));
    dataDir = mkdtempSync(join(tmpdir(), 'tavern-proxy-docker-'));
    makeCa(dataDir, 'ca');
    writeLeaf(dataDir, 'ca', '0x3003');
    ca = readFileSync(join(dataDir, 'ca.crt'));
    proxyPort = await freePort();
    server = await startServer('tavern (docker, proxy)', {
      TAVERN_RUNTIME: 'docker', TAVERN_ADMIN_TOKEN: ADMIN, TAVERN_HOST: '127.0.0.1', TAVERN_PORT: '0', TAVERN_DATA_DIR: dataDir, TAVERN_INSTANCE_ID: INSTANCE,
      TAVERN_PROXY: 'haproxy', TAVERN_HAPROXY_BIN: HAPROXY, TAVERN_JOB_DOMAIN: DOMAIN, TAVERN_PROXY_HTTP_PORT: String(proxyPort),
      TAVERN_PROXY_HTTPS_PORT: String(await freePort()), TAVERN_PROXY_TLS_CERT: join(dataDir, 'lobby.crt'), TAVERN_PROXY_TLS_KEY: join(dataDir, 'lobby.key'),
    });
    const admin = new RivetClient({ environment: server.origin, token: ADMIN });
    gameId = (await admin.cloud.games.games.createGame({ nameId: `proxy-${randomUUID().slice(0, 8)}`, displayName: 'Proxy E2E', developerGroupId: randomUUID() })).gameId;
    const cloud = new RivetClient({ environment: server.origin, token: (await admin.cloud.games.tokens.createCloudToken(gameId)).token });
    const nsId = (await cloud.cloud.games.games.getGameById(gameId)).game.namespaces.find((n) => n.nameId === 'prod')?.namespaceId ?? '';
    const build = await cloud.cloud.games.builds.createGameBuild(gameId, {
      displayName: 'http game server', imageTag: `game:${randomUUID().slice(0, 8)}`,
      imageFile: { path: 'image.tar', contentType: 'binary/octet-stream', contentLength: statSync(image.dockerImage).size }, kind: 'docker_image', compression: 'none',
    });
    buildId = build.buildId;
    expect(await putFile(build.imagePresignedRequest?.url ?? '', image.dockerImage)).toBe(200);
    await cloud.cloud.uploads.completeUpload(build.uploadId);
    const config = {
      matchmaker: {
        regions: { local: {} }, max_players: 8,
        docker: { image_id: build.buildId, ports: { web: { port: 8080, protocol: 'http' }, raw: { port: 9000, protocol: 'tcp_tls' } } },
        game_modes: { default: {} },
      },
    };
    const version = await api(server.origin, 'POST', `/cloud/games/${gameId}/versions`, { token: ADMIN, body: { display_name: 'v1', config } });
    expect(version.status, JSON.stringify(version.body)).toBe(200);
    await cloud.cloud.games.namespaces.updateGameNamespaceVersion(gameId, nsId, { versionId: version.body['version_id'] as string });
    player = new RivetClient({ environment: server.origin, token: (await cloud.cloud.games.namespaces.createGameNamespaceTokenPublic(gameId, nsId)).token });
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    const left = await docker.listContainers({ all: true, filters: { label: [`tavern.instance=${INSTANCE}`] } });
    for (const c of left) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
    if (buildId !== undefined) await removeBuildImages([buildId]);
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('find → the container answers HTTP, a WebSocket and TLS (tcp_tls) at the returned hostname:port; a stopped lobby is 404 and refuses TLS', async () => {
    const found = await player.matchmaker.lobbies.find({ gameModes: ['default'] });
    const lobbyId = found.lobby.lobbyId;
    const web = found.ports['web'];
    expect(web).toMatchObject({ hostname: `${lobbyId}-web.lobby.local.${DOMAIN}`, port: proxyPort, isTls: false });
    const answer = await get(proxyPort, web!.host!, '/hello');
    expect(answer.status, answer.body).toBe(200);
    expect(answer.body).toMatch(new RegExp(`^lobby ${lobbyId} GET /hello host=${web!.host!.replace(/\./g, '\\.')} xff=127\\.0\\.0\\.1`));
    expect((await get(proxyPort, `lobby.${DOMAIN}`, `/local/${lobbyId}-web/path-form`)).body).toMatch(new RegExp(`^lobby ${lobbyId} GET /path-form `));
    const { socket } = await openWebSocket(proxyPort, web!.hostname);
    expect(await echo(socket, 'over the proxy')).toBe('over the proxy');
    socket.destroy();

    const raw = found.ports['raw'];
    expect(raw).toMatchObject({ hostname: `${lobbyId}-raw.lobby.local.${DOMAIN}`, isTls: true });
    expect(raw!.port).toBeGreaterThanOrEqual(26000);
    expect(raw!.port).toBeLessThanOrEqual(31999);
    expect(await askTls(raw!.port!, raw!.hostname, 'over tls')).toBe(`lobby ${lobbyId}:over tls`);

    await api(server.origin, 'DELETE', `/cloud/games/${gameId}/matchmaker/lobbies/${lobbyId}`, { token: ADMIN });
    await eventually('the http route to be removed', () => get(proxyPort, web!.hostname, '/').then((a) => a.status === 404, () => false), { timeoutMs: 30_000, everyMs: 100 });
    expect(await get(proxyPort, web!.hostname, '/')).toEqual(expect.objectContaining({ status: 404, body: 'no lobby at this address' }));
    await eventually('the tcp_tls port to close', async () => (await askTls(raw!.port!, raw!.hostname, 'after stop').then(() => 'open', (e: Error) => e.message)) !== 'open', { timeoutMs: 10_000, everyMs: 100 });
    await expect(askTls(raw!.port!, raw!.hostname, 'after stop')).rejects.toThrow(/ECONNREFUSED/);
  }, 120_000);
});
