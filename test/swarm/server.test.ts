/**
 * A Tavern server process on a real 3-node swarm (fra: node 1, the manager; lnd: nodes 2 and 3),
 * its builds pushed to the cluster's registry, HAProxy as its game proxy on 127.0.0.1, and an idle
 * pool of two lobbies in lnd. Finds in both regions land on their region's nodes, and a real
 * client reaches each lobby's UDP and TCP ports at its node's address and its http port through
 * HAProxy (the route points at the node the lobby runs on). The operator's node API lists the
 * nodes and drains and undrains one. A node whose network link is cut mid-game has its lobbies
 * reported lost within 60 s (reason `lost`, said in their logs), their players and services gone,
 * and the lnd pool refilled on the other node; once the link is back the node takes lobbies again
 * and no lobby ever runs twice. A restarted Tavern adopts the lobbies and routes their http ports to
 * their nodes again.
 */
import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { docker as hostDocker } from '../docker/engine.js';
import { nodeImage } from '../docker/images.js';
import { describeNeeding } from '../needs.js';
import { freePort, get, HAPROXY, haproxyProblem } from '../proxy/helpers.js';
import { api, ok, startServer, type Answer, type Server } from '../server/process.js';
import { eventually } from '../wait.js';
import { swarmNode } from './api.js';
import { startCluster, type Cluster } from './cluster.js';
import { taskContainer, tcpAsk } from './lobbies.js';
import { swarmProblem } from './system.js';
import { putFile } from '../put-file.js';

const ADMIN = `swarm-server-admin-${randomUUID()}`;
const DOMAIN = 'example.test';

interface FoundPort {
  readonly host?: string;
  readonly hostname: string;
  readonly port: number;
}
interface Found {
  readonly lobbyId: string;
  readonly ports: Readonly<Record<string, FoundPort>>;
  readonly token: string;
}

/** What the UDP echo at `host:port` answers to a datagram `text`, or undefined after a second. */
const udpAsk = (host: string, port: number, text: string): Promise<string | undefined> =>
  new Promise((resolve) => {
    const socket = createSocket('udp4');
    const done = (answer: string | undefined): void => {
      clearTimeout(timer);
      socket.close();
      resolve(answer);
    };
    const timer = setTimeout(() => done(undefined), 1_000);
    socket.once('message', (m) => done(m.toString()));
    socket.once('error', () => done(undefined));
    socket.send(text, port, host);
  });

const problem = (await swarmProblem()) ?? haproxyProblem();

describeNeeding(
  { what: 'root, the Swarm harness tools and HAProxy', start: 'run as root with the Swarm harness tools and haproxy installed (see .ci/run)' },
  'a Tavern server on a 3-node Docker Swarm: find, the game proxy, the node API, a node cut off',
  problem,
  () => {
    let started: Cluster | undefined;
    let server: Server | undefined;
    let serverEnv: Record<string, string> = {};
    let dataDir: string | undefined;
    let proxyPort = 0;
    let gameId = '';
    let nsId = '';
    let pub = '';
    const cluster = (): Cluster => {
      if (started === undefined) throw new Error('the cluster did not start');
      return started;
    };
    const origin = (): string => {
      if (server === undefined) throw new Error('the server did not start');
      return server.origin;
    };
    const call = (method: string, path: string, token = ADMIN): Promise<Answer> => api(origin(), method, path, { token });
    const find = async (region: string): Promise<Found> => {
      const body = ok(`find in ${region}`, await api(origin(), 'POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'], regions: [region] } }));
      const lobby = body['lobby'] as { lobby_id: string };
      return { lobbyId: lobby.lobby_id, ports: body['ports'] as Record<string, FoundPort>, token: (body['player'] as { token: string }).token };
    };
    /** The namespace's running lobbies (live analytics). */
    const live = async (): Promise<{ lobby_id: string; is_ready: boolean; is_idle: boolean; total_player_count: number }[]> =>
      ok('live lobbies', await call('GET', `/cloud/games/${gameId}/namespaces/${nsId}/analytics/matchmaker/live`))['lobbies'] as never;
    /** The node number each running lobby's task runs on (0 when it has no running task). */
    const nodesOf = async (lobbyIds: readonly string[]): Promise<number[]> =>
      Promise.all(lobbyIds.map(async (id) => {
        const c = await taskContainer(cluster(), id);
        return c?.running === true ? c.node.number : 0;
      }));
    /** Every Tavern lobby container running on any node, by lobby id (a lobby running twice shows twice). */
    const runningEverywhere = async (): Promise<string[]> => {
      const ids: string[] = [];
      for (const n of cluster().nodes) {
        const list = await n.docker.listContainers({ filters: { label: ['tavern.lobby'], status: ['running'] } });
        for (const c of list) ids.push(c.Labels['tavern.lobby'] ?? '');
      }
      return ids;
    };

    beforeAll(async () => {
      started = await startCluster({ nodes: 3, regions: { fra: [1], lnd: [2, 3] } });
      const image = await nodeImage(hostDocker, 'swarm-game', fileURLToPath(new URL('./game-server.js', import.meta.url)));
      dataDir = mkdtempSync(join(tmpdir(), 'tavern-swarm-server-'));
      proxyPort = await freePort();
      // Tavern listens on the host's bridge address, where the lobbies on every node reach it; its proxy on loopback.
      serverEnv = {
        TAVERN_RUNTIME: 'swarm', TAVERN_SWARM_HOST: `unix://${cluster().manager.socket}`, TAVERN_REGISTRY: cluster().registry, TAVERN_REGISTRY_INSECURE: 'true',
        TAVERN_REGIONS: JSON.stringify(['lnd', 'fra']), TAVERN_ADMIN_TOKEN: ADMIN, TAVERN_HOST: cluster().layout.hostAddress, TAVERN_PORT: '0',
        TAVERN_DATA_DIR: dataDir, TAVERN_INSTANCE_ID: `swarm-server-${randomUUID().slice(0, 8)}`, TAVERN_RECONCILE_MS: '5000',
        TAVERN_PROXY: 'haproxy', TAVERN_HAPROXY_BIN: HAPROXY, TAVERN_PROXY_HOST: '127.0.0.1', TAVERN_JOB_DOMAIN: DOMAIN, TAVERN_PROXY_HTTP_PORT: String(proxyPort),
      };
      server = await startServer('tavern (swarm, proxy)', serverEnv);
      gameId = ok('game', await api(origin(), 'POST', '/cloud/games', {
        token: ADMIN, body: { name_id: `swarm-${randomUUID().slice(0, 8)}`, display_name: 'Swarm E2E', developer_group_id: randomUUID() },
      }))['game_id'] as string;
      const game = ok('the game', await call('GET', `/cloud/games/${gameId}`))['game'] as { namespaces: { namespace_id: string; name_id: string }[] };
      nsId = game.namespaces.find((n) => n.name_id === 'prod')?.namespace_id ?? '';
      const build = ok('build', await api(origin(), 'POST', `/cloud/games/${gameId}/builds`, {
        token: ADMIN,
        body: {
          display_name: 'swarm game server', image_tag: `game:${randomUUID().slice(0, 8)}`, kind: 'docker_image', compression: 'none',
          image_file: { path: 'image.tar', content_type: 'binary/octet-stream', content_length: statSync(image.dockerImage).size },
        },
      }));
      expect(await putFile((build['image_presigned_request'] as { url: string }).url, image.dockerImage)).toBe(200);
      ok('upload complete', await call('POST', `/cloud/uploads/${build['upload_id'] as string}/complete`));
      const config = {
        matchmaker: {
          regions: { lnd: { idle_lobbies: { min: 2, max: 2 } }, fra: {} }, max_players: 8,
          docker: { image_id: build['build_id'], ports: { web: { port: 8080, protocol: 'http' }, tcp: { port: 9000, protocol: 'tcp' }, udp: { port: 9001, protocol: 'udp' } } },
          game_modes: { default: {} },
        },
      };
      const version = ok('version', await api(origin(), 'POST', `/cloud/games/${gameId}/versions`, { token: ADMIN, body: { display_name: 'v1', config } }));
      ok('namespace version', await api(origin(), 'PUT', `/cloud/games/${gameId}/namespaces/${nsId}/version`, { token: ADMIN, body: { version_id: version['version_id'] } }));
      pub = ok('public token', await call('POST', `/cloud/games/${gameId}/namespaces/${nsId}/tokens/public`))['token'] as string;
    }, 400_000);

    afterAll(async () => {
      await cluster().setLink(2, 'up').catch(() => undefined);
      await cluster().setLink(3, 'up').catch(() => undefined);
      await server?.stop();
      await started?.stop();
      if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
    }, 180_000);

    it("find in two regions lands on each region's nodes; a client reaches UDP and TCP at the node's address and http through HAProxy", async () => {
      for (const [region, nodes] of [['lnd', [2, 3]], ['fra', [1]]] as const) {
        const found = await find(region);
        // A lobby may call ready before the manager calls its task running.
        const on = await eventually(`lobby ${found.lobbyId}'s task running`, async () => (await nodesOf([found.lobbyId]))[0] || undefined, { timeoutMs: 20_000, everyMs: 200 });
        expect(nodes, `${region} lobby ${found.lobbyId} on node ${on}`).toContain(on);
        const address = cluster().node(on).address;
        const { tcp, udp, web } = found.ports;
        expect([tcp?.hostname, udp?.hostname], JSON.stringify(found.ports)).toEqual([address, address]);
        expect(await eventually(`${region} tcp`, () => tcpAsk(address, tcp?.port ?? 0, 'over tcp'), { timeoutMs: 20_000 })).toBe(`lobby ${found.lobbyId}:over tcp`);
        expect(await eventually(`${region} udp`, () => udpAsk(address, udp?.port ?? 0, 'over udp'), { timeoutMs: 20_000 })).toBe(`lobby ${found.lobbyId}:over udp`);
        expect(web).toMatchObject({ hostname: `${found.lobbyId}-web.lobby.${region}.${DOMAIN}`, port: proxyPort });
        const answer = await eventually(`${region} http through the proxy`, async () => {
          const a = await get(proxyPort, web?.hostname ?? '', '/hello');
          return a.status === 200 ? a : undefined;
        }, { timeoutMs: 20_000 });
        expect(answer.body).toBe(`lobby ${found.lobbyId} /hello\n`);
      }
    }, 300_000);

    it('the node API (admin only) lists the nodes and drains and undrains one; an unknown node is 404 NODE_NOT_FOUND', async () => {
      const listed = ok('nodes', await call('GET', '/admin/nodes'))['nodes'] as { name: string; region: string; address: string; state: string; drained: boolean; accepting: boolean; lobbies: number }[];
      expect(listed.map((n) => [n.name, n.region, n.address, n.state, n.drained, n.accepting])).toEqual(cluster().nodes.map((n) => [n.name, n.region, n.address, 'ready', false, true]));
      expect(listed.find((n) => n.region === 'fra')?.lobbies).toBeGreaterThanOrEqual(1);
      const fra = cluster().node(1);
      const drained = ok('drain', await call('POST', `/admin/nodes/${fra.name}/drain`))['node'];
      expect(drained).toMatchObject({ name: fra.name, drained: true, accepting: false });
      expect((await swarmNode(cluster().manager.docker, fra.id)).Spec.Labels?.['tavern.drain']).toBe('true');
      // Tavern's drain, not Swarm's: the node stays active and its lobby runs on.
      expect((await swarmNode(cluster().manager.docker, fra.id)).Spec.Availability).toBe('active');
      const health = ok('health', await api(origin(), 'GET', '/health')) as { runtime: { regions: Record<string, { accepting: boolean }[]> } };
      expect(health.runtime.regions['fra']?.map((n) => n.accepting)).toEqual([false]);
      const undrained = ok('undrain', await call('POST', `/admin/nodes/${fra.id}/undrain`))['node'];
      expect(undrained).toMatchObject({ name: fra.name, drained: false, accepting: true });
      expect((await swarmNode(cluster().manager.docker, fra.id)).Spec.Labels?.['tavern.drain']).toBeUndefined();
      const unknown = await call('POST', '/admin/nodes/no-such-node/drain');
      expect([unknown.status, unknown.body['code']]).toEqual([404, 'NODE_NOT_FOUND']);
      const player = await call('GET', '/admin/nodes', pub);
      expect([player.status, player.body['code']]).toEqual([403, 'API_FORBIDDEN']);
    }, 120_000);

    it('a node cut off mid-game: its lobbies are reported lost within 60 s, their players gone and the lnd pool refilled on the other node; back, it is used again and no lobby runs twice', async () => {
      // A player in an lnd lobby, and the lnd pool full again (two idle lobbies) before the cut.
      const player = await find('lnd');
      const cutNode = await eventually(`lobby ${player.lobbyId}'s task running`, async () => (await nodesOf([player.lobbyId]))[0] || undefined, { timeoutMs: 20_000, everyMs: 200 });
      const otherNode = cutNode === 2 ? 3 : 2;
      const lndBefore = await eventually('the lnd pool refilled and ready', async () => {
        const lobbies = await live();
        const ids = lobbies.filter((l) => l.is_ready).map((l) => l.lobby_id);
        const nodes = await nodesOf(ids);
        const lnd = ids.filter((_, i) => nodes[i] === 2 || nodes[i] === 3);
        const idle = lobbies.filter((l) => lnd.includes(l.lobby_id) && l.is_idle);
        return idle.length >= 2 ? lnd : undefined;
      }, { timeoutMs: 120_000, everyMs: 500 });
      const lostIds = (await nodesOf(lndBefore)).flatMap((n, i) => (n === cutNode ? [lndBefore[i] ?? ''] : []));
      expect(lostIds).toContain(player.lobbyId);

      const t = performance.now();
      await cluster().setLink(cutNode, 'down');
      for (const id of lostIds) {
        const stopped = await eventually(`lobby ${id} reported lost`, async () => {
          const got = await call('GET', `/cloud/games/${gameId}/matchmaker/lobbies/${id}`);
          const s = got.body['stopped'] as { reason: string } | undefined;
          const l = got.body['lobby'] as { status: string; stop_reason?: string } | undefined;
          return s?.reason ?? (l?.status === 'stopped' ? l.stop_reason : undefined);
        }, { timeoutMs: 60_000, everyMs: 500 });
        expect(stopped).toBe('lost');
      }
      const ms = performance.now() - t;
      expect(ms).toBeLessThan(60_000);
      for (const id of lostIds) {
        const log = ok('tavern log', await call('GET', `/cloud/games/${gameId}/matchmaker/lobbies/${id}/logs?stream=tavern`))['lines'] as string[];
        const text = log.map((l) => Buffer.from(l, 'base64').toString('utf8')).join('\n');
        expect(text).toMatch(new RegExp(`the lobby was lost: node ${cluster().node(cutNode).name} \\(${cluster().node(cutNode).address.replace(/\./g, '\\.')}\\) is (down|disconnected|unknown)`));
        expect(text).toMatch(/stopping: the host running it was lost/);
        expect(await cluster().manager.docker.getService(`tavern-${id}`).inspect().then(() => 'exists', () => 'gone')).toBe('gone');
      }
      const stoppedList = ok('stopped lobbies', await call('GET', `/cloud/games/${gameId}/namespaces/${nsId}/analytics/matchmaker/stopped?failed=true`))['lobbies'] as { lobby_id: string; reason: string }[];
      expect(stoppedList.filter((s) => lostIds.includes(s.lobby_id)).map((s) => s.reason)).toEqual(lostIds.map(() => 'lost'));
      // The player's seat went with its lobby; the pool is whole again, on the node still there.
      expect((await live()).map((l) => l.lobby_id)).not.toContain(player.lobbyId);
      await eventually(`two idle lnd lobbies on node ${otherNode}`, async () => {
        const lobbies = (await live()).filter((l) => l.is_ready && l.is_idle);
        const nodes = await nodesOf(lobbies.map((l) => l.lobby_id));
        return nodes.filter((n) => n === otherNode).length >= 2 ? true : undefined;
      }, { timeoutMs: 120_000, everyMs: 500 });

      // The link back: the node's engine removes the lost lobbies' containers, and it takes lobbies again.
      await cluster().setLink(cutNode, 'up');
      await eventually(`node ${cutNode} ready again`, async () => ((await swarmNode(cluster().manager.docker, cluster().node(cutNode).id)).Status.State === 'ready' ? true : undefined), { timeoutMs: 120_000, everyMs: 500 });
      await eventually(`node ${cutNode}'s lost lobbies' containers removed`, async () =>
        ((await cluster().node(cutNode).docker.listContainers({ all: true, filters: { label: lostIds.map((id) => `tavern.lobby=${id}`) } })).length === 0 ? true : undefined), { timeoutMs: 90_000, everyMs: 500 });
      const placedAgain = await eventually(`a new lnd lobby on node ${cutNode}`, async () => {
        // Each find takes an idle lobby; the pool's refill is spread over both nodes.
        await find('lnd');
        const ids = (await live()).map((l) => l.lobby_id);
        const nodes = await nodesOf(ids);
        return nodes.includes(cutNode) ? true : undefined;
      }, { timeoutMs: 120_000, everyMs: 2_000 });
      expect(placedAgain).toBe(true);
      const running = await runningEverywhere();
      expect(running.length).toBe(new Set(running).size);
      for (const id of lostIds) expect(running).not.toContain(id);
      console.log(`node ${cutNode} link cut → its ${lostIds.length} lobbies reported lost: ${Math.round(ms)} ms`);
    }, 480_000);

    it("a restarted Tavern adopts its lobbies and its new proxy routes each http port to the lobby's node again", async () => {
      const lobbies = (await live()).filter((l) => l.is_ready).map((l) => l.lobby_id);
      const nodes = await nodesOf(lobbies);
      const spread = lobbies.filter((_, i) => (nodes[i] ?? 0) > 0);
      expect(new Set(nodes.filter((n) => n > 0)).size).toBeGreaterThanOrEqual(2);
      await server?.stop();
      // Nothing serves the routes while Tavern is down.
      expect(await get(proxyPort, `${spread[0] ?? ''}-web.lobby.lnd.${DOMAIN}`, '/').then((a) => a.status, () => 'refused')).toBe('refused');
      server = await startServer('tavern (swarm, proxy) restarted', serverEnv);
      for (const id of spread) {
        const lobby = ok('lobby', await call('GET', `/cloud/games/${gameId}/matchmaker/lobbies/${id}`))['lobby'] as { region_name_id: string; ports: Record<string, FoundPort> };
        const web = lobby.ports['web'];
        expect(web).toMatchObject({ hostname: `${id}-web.lobby.${lobby.region_name_id}.${DOMAIN}`, port: proxyPort });
        const answer = await eventually(`lobby ${id}'s http port through the restarted proxy`, async () => {
          const a = await get(proxyPort, web?.hostname ?? '', '/after-restart').catch(() => undefined);
          return a?.status === 200 ? a : undefined;
        }, { timeoutMs: 30_000, everyMs: 200 });
        expect(answer.body).toBe(`lobby ${id} /after-restart\n`);
      }
    }, 180_000);
  },
);
