/**
 * The Docker runtime on a real engine: the runtime contract (as the fake passes it), and its
 * faults: a port some other program holds, a build that does not exist, an engine that cannot be
 * reached, a runtime that restarts and adopts its containers, and two Tavern instances that each
 * see only their own containers. Lobbies join Tavern's network; host networking only when the
 * operator allows it; a forced user runs every process of the container.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectDocker } from '../../src/adapters/docker/engine.js';
import { BuildImages } from '../../src/adapters/docker/images.js';
import { LOBBY_NETWORK } from '../../src/adapters/docker/lobby-network.js';
import { DockerRuntime, type DockerRuntimeOptions } from '../../src/adapters/docker/runtime.js';
import { HOST_NETWORK_REFUSED } from '../../src/core/config/host-network.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/catalog.js';
import type { StartLobby } from '../../src/core/effects.js';
import type { BuildArchives } from '../../src/io/build-archives.js';
import type { LogLine, LogStream } from '../../src/io/catalog.js';
import { Exits, runtimeContract, startable } from '../contracts/runtime.contract.js';
import { describeWithDocker, docker, dockerProblem, removeBuildImages } from './engine.js';
import { busyboxGameServer, nodeGameServer, type GameServerArchives } from './images.js';
import { eventually } from '../wait.js';

const problem = await dockerProblem();
const BUILD = `bb-${randomUUID()}`;
const NODE_BUILD = `node-${randomUUID()}`;
const built = new Map<string, GameServerArchives>();

const archives: BuildArchives = {
  build: (id) => {
    const fixture = built.get(id);
    return Promise.resolve(fixture === undefined ? undefined : {
      kind: 'docker_image' as const,
      compression: 'none' as const,
      open: () => Promise.resolve(createReadStream(fixture.dockerImage)),
    });
  },
};

class Lines {
  readonly lines: { lobbyId: string; stream: LogStream; line: string }[] = [];
  write(lobbyId: string, stream: LogStream, lines: readonly LogLine[]): Promise<void> {
    for (const l of lines) this.lines.push({ lobbyId, stream, line: l.line });
    return Promise.resolve();
  }
  of(lobbyId: string, stream?: LogStream): string[] {
    return this.lines.filter((l) => l.lobbyId === lobbyId && (stream === undefined || l.stream === stream)).map((l) => l.line);
  }
}

const images = new BuildImages({ docker, source: archives });
const instances: string[] = [];

const runtimeFor = (instanceId: string, catalog = new MemoryCatalogStore(), logs = new Lines(), engine = docker, options: Partial<DockerRuntimeOptions> = {}): { runtime: DockerRuntime; catalog: MemoryCatalogStore; logs: Lines } => {
  instances.push(instanceId);
  const runtime = new DockerRuntime({
    docker: engine, images, instanceId, hosts: catalog, logs,
    apiOrigin: { bridge: 'http://127.0.0.1:9', host: 'http://127.0.0.1:9' },
    stopGraceMs: 5_000, clock: { now: () => Date.now() },
    ...options,
  });
  return { runtime, catalog, logs };
};

/** A lobby of the busybox game server: one TCP port, published on a port from the proxied range. */
const lobbyOf = (over: Partial<StartLobby> = {}, publicPort = 26_000 + Math.floor(Math.random() * 6_000)): StartLobby => ({
  type: 'start-lobby', lobbyId: randomUUID(), namespaceId: 'ns', versionId: 'v', gameMode: 'default', region: 'local', tier: 'basic-1d16',
  imageId: BUILD, args: [], env: { PORT_DEFAULT: '7000' }, networkMode: 'bridge',
  ports: [{ label: 'default', protocol: 'tcp', proxy: 'game_guard', transport: 'tcp', publicPort, hostPort: 20_000 + Math.floor(Math.random() * 6_000), containerPort: 7000 }],
  ...over,
});

const running = async (lobbyId: string): Promise<boolean> =>
  docker.getContainer(`tavern-${lobbyId}`).inspect().then((i) => i.State.Running, () => false);

describeWithDocker('the Docker runtime', problem, () => {
  beforeAll(async () => {
    built.set(BUILD, await busyboxGameServer(docker));
    built.set(NODE_BUILD, await nodeGameServer(docker));
  }, 120_000);

  afterAll(async () => {
    const left = await docker.listContainers({ all: true, filters: { label: instances.map((i) => `tavern.instance=${i}`) } });
    for (const c of left) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
    await removeBuildImages([BUILD, NODE_BUILD]);
  });

  runtimeContract('docker', () => {
    const { runtime } = runtimeFor(`contract-${randomUUID().slice(0, 8)}`);
    return Promise.resolve({
      runtime,
      lobby: ({ broken = false } = {}) => startable(lobbyOf(), broken),
      isRunning: running,
      crash: async (id) => {
        await docker.getContainer(`tavern-${id}`).kill({ signal: 'SIGKILL' });
      },
      close: async () => {
        for (const id of runtime.watching()) await docker.getContainer(`tavern-${id}`).remove({ force: true }).catch(() => undefined);
      },
    });
  });

  it('a port another program holds fails the start with a clear reason, and leaves no container and no host record', async () => {
    const holder: Server = createServer();
    const port = await new Promise<number>((resolve) => holder.listen(0, '127.0.0.1', () => resolve((holder.address() as { port: number }).port)));
    try {
      const id = `port-${randomUUID().slice(0, 8)}`;
      const { runtime, catalog } = runtimeFor(id);
      const lobby = lobbyOf({}, port);
      await expect(runtime.start(lobby)).rejects.toThrow(new RegExp(`host port ${port} is already in use by another program`));
      expect(await running(lobby.lobbyId)).toBe(false);
      expect(await docker.getContainer(`tavern-${lobby.lobbyId}`).inspect().then(() => 'exists', () => 'gone')).toBe('gone');
      expect(await catalog.lobbyHosts(id)).toEqual([]);
      expect(runtime.watching()).toEqual([]);
    } finally {
      holder.close();
    }
  });

  it('a build that does not exist, or no build at all, fails the start clearly', async () => {
    const id = `image-${randomUUID().slice(0, 8)}`;
    const { runtime, catalog } = runtimeFor(id);
    await expect(runtime.start(lobbyOf({ imageId: randomUUID() }))).rejects.toThrow(/build/i);
    const { imageId: _, ...noImage } = lobbyOf();
    await expect(runtime.start(noImage)).rejects.toThrow("the version's container has no image_id (build)");
    expect(runtime.watching()).toEqual([]);
    expect(await catalog.lobbyHosts(id)).toEqual([]);
  });

  it('an engine that cannot be reached: health says so, and a start fails saying so', async () => {
    const { runtime } = runtimeFor(`down-${randomUUID().slice(0, 8)}`, new MemoryCatalogStore(), new Lines(), connectDocker('unix:///nonexistent/docker.sock'));
    expect(await runtime.health()).toMatchObject({ runtime: 'docker', reachable: false, error: 'the Docker engine is unreachable (ENOENT /nonexistent/docker.sock)' });
    expect(runtime.available()).toBe(false);
    await expect(runtime.start(lobbyOf())).rejects.toThrow(/Docker engine is unreachable|build/);
  });

  it('a restarted runtime finds its containers and adopts them: their output and their exit are followed again', async () => {
    const id = `adopt-${randomUUID().slice(0, 8)}`;
    const catalog = new MemoryCatalogStore();
    const first = runtimeFor(id, catalog);
    const lobby = lobbyOf();
    await first.runtime.start(lobby);
    // A second runtime with the same instance id stands for this Tavern after a restart.
    const second = runtimeFor(id, catalog);
    const exits = new Exits();
    second.runtime.attach(exits);
    const [found] = await second.runtime.inventory();
    expect(found).toMatchObject({ lobbyId: lobby.lobbyId, namespaceId: 'ns', versionId: 'v', running: true });
    if (found === undefined) throw new Error('no container found');
    await second.runtime.adopt(found);
    expect(second.runtime.watching()).toEqual([lobby.lobbyId]);
    await docker.getContainer(found.containerId).kill({ signal: 'SIGKILL' });
    expect(await exits.of(lobby.lobbyId)).toBe('crashed');
    expect(second.logs.of(lobby.lobbyId, 'tavern')).toContain('the container exited with code 137');
    expect(await catalog.lobbyHosts(id)).toEqual([]);
  });

  it('a game that ignores SIGTERM is killed once the stop grace runs out, then removed and reported', async () => {
    // A short grace: the test waits all of it.
    const { runtime, logs } = runtimeFor(`grace-${randomUUID().slice(0, 8)}`, undefined, undefined, undefined, { stopGraceMs: 1_500 });
    const exits = new Exits();
    runtime.attach(exits);
    const lobby = lobbyOf({ imageId: NODE_BUILD, env: { PORT_TCP: '7000', GAME_READY: '0', GAME_IGNORE_SIGTERM: '1' } });
    await runtime.start(lobby);
    await eventually('the game server to listen', () => logs.of(lobby.lobbyId).some((l) => l.startsWith('game server listening')), { timeoutMs: 10_000 });
    await runtime.stop({ type: 'stop-lobby', lobbyId: lobby.lobbyId, region: 'local', reason: 'requested', force: false });
    expect(await exits.of(lobby.lobbyId)).toBe('exited');
    // Asked first (the game saw SIGTERM and went on), then killed (137 = SIGKILL) when the grace ran out.
    expect(logs.of(lobby.lobbyId, 'std_out')).toContain('SIGTERM received, ignoring it (GAME_IGNORE_SIGTERM)');
    // Tavern's own line is on its own stream, never in the game's.
    expect(logs.of(lobby.lobbyId, 'tavern')).toEqual(['the container exited with code 137 after Tavern asked it to stop']);
    expect(await running(lobby.lobbyId)).toBe(false);
  });

  it('a bridge lobby joins Tavern\'s network, where containers cannot reach each other (ICC off)', async () => {
    const { runtime } = runtimeFor(`net-${randomUUID().slice(0, 8)}`);
    const lobby = lobbyOf();
    await runtime.start(lobby);
    try {
      const info = await docker.getContainer(`tavern-${lobby.lobbyId}`).inspect();
      expect(Object.keys(info.NetworkSettings.Networks)).toEqual([LOBBY_NETWORK]);
      expect(info.HostConfig.NetworkMode).toBe((await runtime.lobbyNetwork()).id);
      const network = (await docker.getNetwork(info.HostConfig.NetworkMode ?? '').inspect()) as { Driver: string; Options: Record<string, string> };
      expect(network).toMatchObject({ Driver: 'bridge', Options: { 'com.docker.network.bridge.enable_icc': 'false' } });
    } finally {
      await runtime.stop({ type: 'stop-lobby', lobbyId: lobby.lobbyId, region: 'local', reason: 'requested', force: true });
    }
  });

  it('a lobby network removed while no lobby ran (docker network prune) is made again by the next start', async () => {
    const name = `tavern-test-pruned-${randomUUID().slice(0, 8)}`;
    const { runtime } = runtimeFor(`prune-${randomUUID().slice(0, 8)}`, new MemoryCatalogStore(), new Lines(), docker, { network: { name, create: true } });
    const exits = new Exits();
    runtime.attach(exits);
    try {
      const first = lobbyOf();
      await runtime.start(first);
      const before = (await runtime.lobbyNetwork()).id;
      await runtime.stop({ type: 'stop-lobby', lobbyId: first.lobbyId, region: 'local', reason: 'requested', force: true });
      await exits.of(first.lobbyId);
      await docker.getNetwork(before).remove();
      const second = lobbyOf();
      await runtime.start(second);
      const info = await docker.getContainer(`tavern-${second.lobbyId}`).inspect();
      expect(Object.keys(info.NetworkSettings.Networks)).toEqual([name]);
      expect((await runtime.lobbyNetwork()).id).not.toBe(before);
      await runtime.stop({ type: 'stop-lobby', lobbyId: second.lobbyId, region: 'local', reason: 'requested', force: true });
      await exits.of(second.lobbyId);
    } finally {
      await docker.getNetwork(name).remove().catch(() => undefined);
    }
  });

  it('a host-network lobby is never started unless the operator allows it: the start fails saying why, nothing is left', async () => {
    const id = `nohost-${randomUUID().slice(0, 8)}`;
    const { runtime, catalog } = runtimeFor(id);
    const lobby = lobbyOf({ networkMode: 'host', ports: [] });
    await expect(runtime.start(lobby)).rejects.toThrow(HOST_NETWORK_REFUSED);
    expect(await docker.getContainer(`tavern-${lobby.lobbyId}`).inspect().then(() => 'exists', () => 'gone')).toBe('gone');
    expect(await catalog.lobbyHosts(id)).toEqual([]);
    expect(runtime.watching()).toEqual([]);
  });

  it('TAVERN_DOCKER_USER: every process of the lobby\'s container runs as the forced uid and gid, not the image\'s user', async () => {
    const { runtime } = runtimeFor(`user-${randomUUID().slice(0, 8)}`, new MemoryCatalogStore(), new Lines(), docker, { hardening: { pidsLimit: 64, tmpMiB: 16, readOnlyRoot: true, user: '65534:65534' } });
    const lobby = lobbyOf();
    await runtime.start(lobby);
    try {
      const container = docker.getContainer(`tavern-${lobby.lobbyId}`);
      expect((await container.inspect()).Config.User).toBe('65534:65534');
      // The game server's shell and its nc (and docker-init) as the host's ps sees them, once the shell has started nc.
      const processes = await eventually('the game server\'s processes', async () => {
        const top = (await container.top({ ps_args: '-o pid,uid,gid,args' })) as { Processes?: string[][] };
        const rows = top.Processes ?? [];
        return rows.some((r) => r[3]?.includes('nc -ll')) ? rows : undefined;
      });
      expect(processes.length).toBeGreaterThanOrEqual(3);
      for (const [, uid, gid, args] of processes) expect({ args, uid, gid }).toEqual({ args, uid: '65534', gid: '65534' });
    } finally {
      await runtime.stop({ type: 'stop-lobby', lobbyId: lobby.lobbyId, region: 'local', reason: 'requested', force: true });
    }
  });

  it('a host-network lobby, when the operator allows it, listens on its own ports directly (its tcp port and its range), nothing published', async () => {
    const { runtime } = runtimeFor(`host-${randomUUID().slice(0, 8)}`, new MemoryCatalogStore(), new Lines(), docker, { allowHostNetwork: true });
    const port = 26_000 + Math.floor(Math.random() * 5_000);
    const lobby = lobbyOf({
      imageId: NODE_BUILD, networkMode: 'host',
      env: { PORT_GAME_TCP: String(port), PORT_RANGE_MIN_P2P: String(port + 500), PORT_RANGE_MAX_P2P: String(port + 509), GAME_TCP_LABEL: 'game-tcp', GAME_READY: '0' },
      ports: [
        { label: 'game-tcp', protocol: 'tcp', proxy: 'game_guard', transport: 'tcp', publicPort: port, hostPort: 20_000 + Math.floor(Math.random() * 6_000), containerPort: port },
        { label: 'p2p', protocol: 'udp', proxy: 'none', transport: 'udp', range: { min: port + 500, max: port + 509 } },
      ],
    });
    await runtime.start(lobby);
    try {
      const info = await docker.getContainer(`tavern-${lobby.lobbyId}`).inspect();
      expect(info.HostConfig.NetworkMode).toBe('host');
      expect(info.HostConfig.PortBindings ?? {}).toEqual({});
      expect(info.Config.Env).toEqual(expect.arrayContaining([`PORT_RANGE_MIN_P2P=${port + 500}`, `PORT_RANGE_MAX_P2P=${port + 509}`]));
      const echo = await new Promise<string>((resolve, reject) => {
        const deadline = Date.now() + 15_000;
        const attempt = (): void => {
          const socket = connect(port, '127.0.0.1', () => socket.write('over the host network\n'));
          socket.once('data', (d) => {
            socket.destroy();
            resolve(d.toString());
          });
          socket.once('error', () => {
            socket.destroy();
            if (Date.now() > deadline) reject(new Error(`nothing listens on 127.0.0.1:${port}`));
            else setTimeout(attempt, 100);
          });
        };
        attempt();
      });
      expect(echo).toContain('over the host network');
    } finally {
      await runtime.stop({ type: 'stop-lobby', lobbyId: lobby.lobbyId, region: 'local', reason: 'requested', force: true });
    }
  });

  it('two instances on one store each see and own only their own containers', async () => {
    const catalog = new MemoryCatalogStore();
    const a = runtimeFor(`inst-a-${randomUUID().slice(0, 8)}`, catalog);
    const b = runtimeFor(`inst-b-${randomUUID().slice(0, 8)}`, catalog);
    const la = lobbyOf();
    const lb = lobbyOf();
    await a.runtime.start(la);
    await b.runtime.start(lb);
    expect((await a.runtime.inventory()).map((c) => c.lobbyId)).toEqual([la.lobbyId]);
    expect((await b.runtime.inventory()).map((c) => c.lobbyId)).toEqual([lb.lobbyId]);
    // A lobby already hosted by one instance is never started by the other.
    await expect(b.runtime.start(la)).rejects.toThrow(/already hosted/);
    expect(await running(la.lobbyId)).toBe(true);
    for (const r of [a.runtime, b.runtime]) for (const id of r.watching()) await r.stop({ type: 'stop-lobby', lobbyId: id, region: 'local', reason: 'requested', force: true });
  });
});
