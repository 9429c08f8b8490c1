/**
 * End to end with the real `@rivet-gg/api@23.2.0-rc1` client against the server listening on
 * 127.0.0.1 through the node:http bridge (fake runtime, memory storage, filesystem blobs).
 */
import { RivetClient, RivetError } from '@rivet-gg/api';
import { randomUUID } from 'node:crypto';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/server/app.js';
import { createHttpServer } from '../../src/server/http.js';
import { specConfig } from './fixtures.js';
import { ADMIN, harness, settle, type Harness } from './harness.js';

let server: Server;
let h: Harness;
let origin: string;

beforeAll(async () => {
  const live: { app?: App } = {};
  server = createHttpServer({ respond: (request) => (live.app as App).respond(request) });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  h = harness({ readyAfterMs: 0, origin });
  live.app = h.app;
});

afterAll(async () => {
  h.cleanup();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** The client parses some timestamps into Dates and keeps others as strings; both must be RFC 3339 with ms. */
const iso = (t: unknown): string => (t instanceof Date ? t.toISOString() : String(t));
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const client = (token?: string): RivetClient => new RivetClient({ environment: origin, ...(token === undefined ? {} : { token }) });

/** PUT through real HTTP, as the CLI does with presigned URLs. */
const put = async (url: string, body: string, contentType?: string): Promise<number> =>
  (await fetch(url, { method: 'PUT', body, headers: { 'content-length': String(Buffer.byteLength(body)), ...(contentType === undefined ? {} : { 'content-type': contentType }) } })).status;

/** A raw HTTP call with a chosen Host header (fetch cannot set it). */
const rawCall = (method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}${path}`, { method, headers }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });

describe('the 23.2 client, end to end', () => {
  it('runs the whole developer and player flow', async () => {
    const admin = client(ADMIN);
    const { gameId } = await admin.cloud.games.games.createGame({ nameId: 'e2e-game', displayName: 'E2E Game', developerGroupId: randomUUID() });
    const { token: cloudToken } = await admin.cloud.games.tokens.createCloudToken(gameId);
    const cloud = client(cloudToken);

    // CLI start-up calls.
    expect((await cloud.cloud.auth.inspect()).agent.gameCloud?.gameId).toBe(gameId);
    expect((await cloud.cloud.bootstrap()).cluster).toBe('oss');
    const { game } = await cloud.cloud.games.games.getGameById(gameId);
    expect(game.availableRegions.map((r) => r.regionNameId)).toContain('local');
    expect(iso(game.createTs)).toMatch(RFC3339_MS);
    const prod = game.namespaces.find((n) => n.nameId === 'prod');
    if (prod === undefined) throw new Error('no prod namespace');
    const nsId = prod.namespaceId;

    // A build, through its presigned URL.
    const build = await cloud.cloud.games.builds.createGameBuild(gameId, {
      displayName: 'Build 1', imageTag: 'e2e:1', imageFile: { path: 'image.tar', contentType: 'binary/octet-stream', contentLength: 11 },
      kind: 'docker_image', compression: 'none',
    });
    const presigned = build.imagePresignedRequest;
    if (presigned === undefined) throw new Error('no presigned request');
    expect(presigned.byteOffset).toBe(0);
    expect(await put(presigned.url, 'hello build', 'binary/octet-stream')).toBe(200);
    await cloud.cloud.uploads.completeUpload(build.uploadId);
    const builds = await cloud.cloud.games.builds.listGameBuilds(gameId);
    expect(builds.builds[0]).toMatchObject({ buildId: build.buildId, complete: true, contentLength: 11 });

    // A CDN site.
    const site = await cloud.cloud.games.cdn.createGameCdnSite(gameId, {
      displayName: 'Site 1', files: [{ path: 'index.html', contentType: 'text/html', contentLength: 5 }, { path: 'assets/app.js', contentLength: 2 }],
    });
    for (const p of site.presignedRequests) {
      expect(await put(p.url, p.path === 'index.html' ? '<h1/>' : '{}', p.path === 'index.html' ? 'text/html' : undefined)).toBe(200);
    }
    await cloud.cloud.uploads.completeUpload(site.uploadId);
    expect((await cloud.cloud.games.cdn.listGameCdnSites(gameId)).sites[0]).toMatchObject({ siteId: site.siteId, complete: true });

    // A version with a full config, validated, read back and deployed.
    const config = {
      engine: { godot: {} },
      cdn: { siteId: site.siteId, routes: [{ glob: 'assets/**', priority: 5, middlewares: [{ kind: { customHeaders: { headers: [{ name: 'x-game', value: 'e2e' }] } } }] }] },
      kv: {},
      matchmaker: {
        regions: { local: { idleLobbies: { min: 0, max: 1 } } },
        maxPlayers: 8,
        docker: { imageId: build.buildId, env: { MODE: 'e2e' }, ports: { default: { port: 7777, protocol: 'udp' as const }, web: { port: 8080, protocol: 'https' as const } } },
        gameModes: { default: { taggable: true }, custom: { actions: { create: { enabled: true, enablePublic: true } } } },
      },
    };
    expect((await cloud.cloud.games.versions.validateGameVersion(gameId, { displayName: 'v1', config })).errors).toEqual([]);
    const { versionId } = await cloud.cloud.games.versions.createGameVersion(gameId, { displayName: 'v1', config });
    const { version } = await cloud.cloud.games.versions.getGameVersionById(gameId, versionId);
    expect(version.config.matchmaker?.docker?.imageId).toBe(build.buildId);
    expect(version.config.engine).toBeUndefined();
    await cloud.cloud.games.namespaces.updateGameNamespaceVersion(gameId, nsId, { versionId });

    // Namespace, domain, tokens.
    await cloud.cloud.games.namespaces.addNamespaceDomain(gameId, nsId, { domain: 'e2e.example.com' });
    const { namespace } = await cloud.cloud.games.namespaces.getGameNamespaceById(gameId, nsId);
    expect(namespace.versionId).toBe(versionId);
    expect(namespace.config.cdn.domains[0]?.domain).toBe('e2e.example.com');
    expect(namespace.config.matchmaker.lobbyCountMax).toBe(128);
    const { token: publicToken } = await cloud.cloud.games.namespaces.createGameNamespaceTokenPublic(gameId, nsId);
    const validation = await cloud.cloud.games.namespaces.validateGameNamespaceTokenDevelopment(gameId, nsId, {
      hostname: '127.0.0.1', lobbyPorts: [{ label: 'default', targetPort: 7777, proxyProtocol: 'udp' }, { label: 'Bad', proxyProtocol: 'udp' }],
    });
    expect(validation.errors.map((e) => e.path)).toEqual([['ports', '1', 'label-invalid'], ['ports', '1', 'missing-port-and-port-range']]);
    const { token: devToken } = await cloud.cloud.games.namespaces.createGameNamespaceTokenDevelopment(gameId, nsId, {
      hostname: '127.0.0.1', ports: { default: { port: 7777, protocol: 'udp' } },
    });

    // Players: find (a lobby starts and reports ready), join, create.
    const player = client(publicToken);
    const found = await player.matchmaker.lobbies.find({ gameModes: ['default'], tags: { map: 'a' } });
    const lobbyId = found.lobby.lobbyId;
    expect(found.lobby.region).toEqual({ regionId: 'local', displayName: 'Local' });
    const udp = found.ports['default'];
    expect(udp?.port).toBeGreaterThanOrEqual(26_000);
    expect(udp?.hostname).toBe('127.0.0.1');
    expect(found.ports['web']).toMatchObject({ port: 443, isTls: true });
    expect(found.player.token).toMatch(/^player\./);
    expect((await player.matchmaker.lobbies.join({ lobbyId })).lobby.lobbyId).toBe(lobbyId);
    const created = await player.matchmaker.lobbies.create({ gameMode: 'custom', publicity: 'public' });
    expect(created.lobby.lobbyId).not.toBe(lobbyId);
    expect((await player.matchmaker.regions.list()).regions[0]?.regionId).toBe('local');

    // The lobby: its token came through the runtime environment.
    const lobbyToken = h.runtime.startOf(lobbyId)?.env['RIVET_TOKEN'];
    expect(h.runtime.startOf(lobbyId)?.env['RIVET_API_ENDPOINT']).toBe(origin);
    const lobby = client(lobbyToken);
    await lobby.matchmaker.lobbies.ready();
    await lobby.matchmaker.players.connected({ playerToken: found.player.token });
    await lobby.matchmaker.lobbies.setState({ round: 1 });
    expect(await lobby.matchmaker.lobbies.getState(lobbyId)).toEqual({ round: 1 });
    const listed = await player.matchmaker.lobbies.list({ includeState: true });
    expect(listed.lobbies.find((l) => l.lobbyId === lobbyId)).toMatchObject({ totalPlayerCount: 1, state: { round: 1 } });
    expect((await player.matchmaker.players.getStatistics()).playerCount).toBeGreaterThanOrEqual(3);
    await lobby.matchmaker.lobbies.setClosed({ isClosed: true });

    // The developer sees it closed in live analytics.
    const live = await cloud.cloud.games.namespaces.analytics.getAnalyticsMatchmakerLive(gameId, nsId);
    const summary = live.lobbies.find((l) => l.lobbyId === lobbyId);
    expect(summary).toMatchObject({ isClosed: true, isReady: true, registeredPlayerCount: 1, totalPlayerCount: 2, lobbyGroupNameId: 'default' });
    expect(iso(summary?.createTs)).toMatch(RFC3339_MS);
    // A new find no longer lands in the closed lobby.
    expect((await player.matchmaker.lobbies.find({ gameModes: ['default'] })).lobby.lobbyId).not.toBe(lobbyId);
    await lobby.matchmaker.players.disconnected({ playerToken: found.player.token });

    // Lobby logs, and their long poll woken by a new line.
    const logs = await cloud.cloud.games.matchmaker.getLobbyLogs(gameId, lobbyId, { stream: 'std_out' });
    expect(logs.lines.map((l) => Buffer.from(l, 'base64').toString())).toEqual([`fake container ${lobbyId} started`]);
    expect(iso(logs.timestamps[0])).toMatch(RFC3339_MS);
    const watching = cloud.cloud.games.matchmaker.getLobbyLogs(gameId, lobbyId, { stream: 'std_out', watchIndex: logs.watch.index });
    await settle(10);
    await h.logBook.write(lobbyId, 'std_out', [{ at: h.clock.now(), line: 'round 2' }]);
    const next = await watching;
    expect(next.lines.map((l) => Buffer.from(l, 'base64').toString())).toEqual(['round 2']);
    expect(Number(next.watch.index)).toBe(Number(logs.watch.index) + 1);

    // A development token gets mocks.
    const mock = await client(devToken).matchmaker.lobbies.find({ gameModes: ['default'] });
    expect(mock.lobby.lobbyId).toBe('00000000-0000-0000-0000-000000000000');
    expect(mock.ports['default']).toMatchObject({ hostname: '127.0.0.1', port: 7777 });
  });

  it('surfaces errors the way the client maps them', async () => {
    const admin = client(ADMIN);
    await expect(admin.cloud.games.games.getGameById(randomUUID())).rejects.toMatchObject({ statusCode: 404, body: { code: 'GAME_NOT_FOUND' } });
    const noToken = client();
    const unauthorized = await noToken.cloud.auth.inspect().catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(RivetError);
    expect(unauthorized).toMatchObject({ statusCode: 401 });
    const bad = await admin.cloud.games.games.createGame({ nameId: 'Bad Name', displayName: 'x', developerGroupId: randomUUID() }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ statusCode: 400, body: { code: 'VALIDATION_ERROR' } });
  });

  it('accepts raw JSON with the spec fields the 23.2 client cannot send', async () => {
    const admin = client(ADMIN);
    const { gameId } = await admin.cloud.games.games.createGame({ nameId: 'raw-game', displayName: 'Raw', developerGroupId: randomUUID() });
    const buildId = await h.completeBuild(gameId, ADMIN);
    const res = await fetch(`${origin}/cloud/games/${gameId}/versions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'spec', config: specConfig(buildId) }),
    });
    expect(res.status).toBe(200);
    const { version_id } = (await res.json()) as { version_id: string };
    const { version } = await admin.cloud.games.versions.getGameVersionById(gameId, version_id);
    expect(version.config.matchmaker?.captcha?.turnstile?.siteKey).toBe('site-key-1');
  });

  it('serves the deprecated host-per-service URLs and tolerates bodies on GET', async () => {
    const find = await rawCall('POST', '/v1/lobbies/find', { host: 'matchmaker.api.example.com', 'content-type': 'application/json' }, '{"game_modes":["default"]}');
    expect(find.status).toBe(401);
    expect(JSON.parse(find.body)).toMatchObject({ code: 'CLAIMS_MISSING_ENTITLEMENT' });
    const boot = await rawCall('GET', '/v1/bootstrap', { host: 'cloud.api.example.com', 'content-type': 'application/json', 'content-length': '2' }, '{}');
    expect(boot.status).toBe(200);
    expect(JSON.parse(boot.body)).toEqual({ cluster: 'oss', captcha: {} });
  });

  it('uses the socket address when no proxy header names the client', async () => {
    const { pub, nsId } = await h.setup(undefined, 'socket-game');
    const r = await rawCall('POST', '/matchmaker/lobbies/find', { authorization: `Bearer ${pub}`, 'content-type': 'application/json' }, '{"game_modes":["default"]}');
    expect(r.status).toBe(200);
    expect([...(h.store.world.namespaces.get(nsId)?.sources.keys() ?? [])]).toEqual(['127.0.0.1']);
  });
});

describe('the 23.2 client, supporting calls', () => {
  it('parses every other cloud response Tavern serves', async () => {
    const admin = client(ADMIN);
    const { gameId } = await admin.cloud.games.games.createGame({ nameId: 'calls-game', displayName: 'Calls', developerGroupId: randomUUID() });
    const games = await admin.cloud.games.games.getGames();
    expect(games.games.some((g) => g.gameId === gameId)).toBe(true);
    expect(games.groups.length).toBeGreaterThan(0);
    expect((await admin.cloud.games.games.validateGame({ nameId: 'calls-game', displayName: 'x' })).errors).toEqual([{ path: ['name-id', 'not-unique'] }]);
    const { game } = await admin.cloud.games.games.getGameById(gameId);
    const versionId = game.versions[0]?.versionId ?? '';
    const { namespaceId } = await admin.cloud.games.namespaces.createGameNamespace(gameId, { displayName: 'QA', nameId: 'qa', versionId });
    expect((await admin.cloud.games.namespaces.validateGameNamespace(gameId, { displayName: 'QA', nameId: 'qa' })).errors).toHaveLength(1);
    await admin.cloud.games.namespaces.updateGameNamespaceMatchmakerConfig(gameId, namespaceId, { lobbyCountMax: 4, maxPlayers: 2 });
    expect((await admin.cloud.games.namespaces.validateGameNamespaceMatchmakerConfig(gameId, namespaceId, { lobbyCountMax: 4, maxPlayers: 2 })).errors).toEqual([]);
    await admin.cloud.games.namespaces.toggleNamespaceDomainPublicAuth(gameId, namespaceId, { enabled: false });
    await admin.cloud.games.namespaces.setNamespaceCdnAuthType(gameId, namespaceId, { authType: 'basic' });
    await admin.cloud.games.namespaces.addNamespaceDomain(gameId, namespaceId, { domain: 'qa.example.com' });
    await admin.cloud.games.namespaces.removeNamespaceDomain(gameId, namespaceId, 'qa.example.com');
    const history = await admin.cloud.games.namespaces.getGameNamespaceVersionHistoryList(gameId, namespaceId);
    expect(history.versions[0]?.versionId).toBe(versionId);
    const { namespace } = await admin.cloud.games.namespaces.getGameNamespaceById(gameId, namespaceId);
    expect(namespace.config.cdn).toMatchObject({ enableDomainPublicAuth: false, authType: 'basic', domains: [] });
    expect(namespace.config.matchmaker).toMatchObject({ lobbyCountMax: 4, maxPlayersPerClient: 2 });
    const link = await client().cloud.devices.links.prepare();
    expect((await client().cloud.devices.links.get({ deviceLinkToken: link.deviceLinkToken })).cloudToken).toBeUndefined();
  });
});

describe('the node:http bridge', () => {
  it('closes the connection when a refused request left its body unread, and keeps it otherwise', async () => {
    const refused = await fetch(`${origin}/cloud/games`, { method: 'POST', body: JSON.stringify({ pad: 'x'.repeat(200_000) }), headers: { 'content-type': 'application/json' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('connection')).toBe('close');
    await refused.text();
    const fine = await fetch(`${origin}/health`);
    expect(fine.status).toBe(200);
    expect(fine.headers.get('connection')).not.toBe('close');
    await fine.text();
  });
});
