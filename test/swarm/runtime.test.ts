/**
 * The Swarm runtime on a real 3-node Docker Swarm (test/swarm/cluster.ts): the runtime contract
 * (as the fake and Docker pass it), the hardening read back from the container on its node (what
 * the service spec sets, and no-new-privileges, which the node's dockerd sets), a missing image,
 * and a restarted runtime that adopts its services.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MemoryCatalogStore } from '../../src/adapters/memory/catalog.js';
import { SwarmRuntime, type SwarmRuntimeOptions } from '../../src/adapters/swarm/runtime.js';
import { runtimeContract, startable, Exits } from '../contracts/runtime.contract.js';
import { describeNeeding } from '../needs.js';
import { eventually } from '../wait.js';
import { startCluster, type Cluster } from './cluster.js';
import { swarmProblem } from './system.js';
import { Lines, lobbyOf, pushGameServers, taskContainer } from './lobbies.js';

describeNeeding(
  { what: 'root and the Swarm harness tools', start: 'run as root with iproute2, iptables, util-linux, docker.io and docker-registry installed (see .ci/run)' },
  'the Swarm runtime on a 3-node Docker Swarm',
  await swarmProblem(),
  () => {
    let started: Cluster | undefined;
    let images = new Map<string, string>();
    const cluster = (): Cluster => {
      if (started === undefined) throw new Error('the cluster did not start');
      return started;
    };
    const runtimes: SwarmRuntime[] = [];
    const runtimeFor = (instanceId: string, catalog = new MemoryCatalogStore(), logs = new Lines(), options: Partial<SwarmRuntimeOptions> = {}): { runtime: SwarmRuntime; catalog: MemoryCatalogStore; logs: Lines } => {
      const runtime = new SwarmRuntime({
        docker: cluster().manager.docker, instanceId, hosts: catalog, logs,
        images: {
          ensure: (id) => {
            const ref = images.get(id);
            return ref === undefined ? Promise.reject(new Error(`no build ${id} in the registry`)) : Promise.resolve(ref);
          },
        },
        apiOrigin: `http://${cluster().layout.hostAddress}:9`, stopGraceMs: 5_000, clock: { now: () => Date.now() }, pollMs: 250,
        ...options,
      });
      runtimes.push(runtime);
      return { runtime, catalog, logs };
    };
    const running = async (lobbyId: string): Promise<boolean> => (await taskContainer(cluster(), lobbyId))?.running === true;

    beforeAll(async () => {
      started = await startCluster({ nodes: 3, regions: { lnd: [1, 2], fra: [3] } });
      images = await pushGameServers(cluster());
    }, 300_000);

    afterAll(async () => {
      for (const r of runtimes) r.close();
      await started?.stop();
    }, 120_000);

    runtimeContract('swarm', async () => {
      const { runtime } = runtimeFor(`contract-${randomUUID().slice(0, 8)}`);
      await runtime.health();
      return {
        runtime,
        lobby: ({ broken = false } = {}) => startable(lobbyOf('lnd'), broken),
        isRunning: running,
        crash: async (id) => {
          const found = await taskContainer(cluster(), id);
          if (found === undefined) throw new Error(`lobby ${id} has no container`);
          await found.engine.getContainer(found.id).kill({ signal: 'SIGKILL' });
        },
        close: async () => {
          for (const id of runtime.watching()) await cluster().manager.docker.getService(`tavern-${id}`).remove().catch(() => undefined);
          runtime.close();
        },
      };
    });

    it('sets the hardening, limits, env and labels on the container on its node, and the node adds no-new-privileges', async () => {
      const { runtime } = runtimeFor(`harden-${randomUUID().slice(0, 8)}`, undefined, undefined, { hardening: { pidsLimit: 64, tmpMiB: 16, readOnlyRoot: true, user: '65534:65534' } });
      await runtime.health();
      const lobby = lobbyOf('lnd');
      await runtime.start(lobby);
      try {
        const found = await taskContainer(cluster(), lobby.lobbyId);
        if (found === undefined) throw new Error('no container');
        const info = await found.engine.getContainer(found.id).inspect();
        expect(info.HostConfig).toMatchObject({ CapDrop: ['ALL'], ReadonlyRootfs: true, PidsLimit: 64, Init: true, NanoCpus: 63_000_000, Memory: 134_217_728 });
        expect(info.Config.User).toBe('65534:65534');
        expect(info.Config.Env).toEqual(expect.arrayContaining(['PORT_DEFAULT=7000', 'RIVET_CPU=63', `RIVET_API_ENDPOINT=http://${cluster().layout.hostAddress}:9`]));
        expect(info.Config.Labels).toMatchObject({ 'tavern.lobby': lobby.lobbyId, 'tavern.namespace': 'ns', 'tavern.version': 'v' });
        expect(info.Mounts.find((m) => m.Destination === '/tmp')).toMatchObject({ Type: 'tmpfs' });
        // no-new-privileges: the service spec of Engine 20.10 cannot say it; the node's dockerd sets it on every container.
        const status = await readFile(`/proc/${info.State.Pid}/status`, 'utf8');
        expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
        expect(runtime.nodes().map((n) => [n.name, n.hardened]).sort()).toEqual(cluster().nodes.map((n) => [n.name, true]));
      } finally {
        await runtime.stop({ type: 'stop-lobby', lobbyId: lobby.lobbyId, region: 'lnd', reason: 'requested', force: true });
      }
    }, 60_000);

    it('a build missing from the registry fails the start clearly and leaves no service and no host record', async () => {
      const id = `image-${randomUUID().slice(0, 8)}`;
      const { runtime, catalog } = runtimeFor(id);
      await runtime.health();
      const lobby = lobbyOf('lnd', { imageId: 'nothing-like-it' });
      await expect(runtime.start(lobby)).rejects.toThrow(/no build nothing-like-it/);
      const unpullable = lobbyOf('lnd', { imageId: 'unpullable' });
      images.set('unpullable', `${cluster().registry}/tavern-missing:none`);
      await expect(runtime.start(unpullable)).rejects.toThrow(/did not start|did not run/);
      expect(await cluster().manager.docker.listServices({ filters: { label: [`tavern.instance=${id}`] } })).toEqual([]);
      expect(await catalog.lobbyHosts(id)).toEqual([]);
    }, 180_000);

    it('a restarted runtime finds its services and adopts them: their output and their end are followed again', async () => {
      const id = `adopt-${randomUUID().slice(0, 8)}`;
      const catalog = new MemoryCatalogStore();
      const first = runtimeFor(id, catalog);
      await first.runtime.health();
      const lobby = lobbyOf('fra');
      await first.runtime.start(lobby);
      first.runtime.close();
      const second = runtimeFor(id, catalog);
      const exits = new Exits();
      second.runtime.attach(exits);
      const [found] = await second.runtime.inventory();
      expect(found).toMatchObject({ lobbyId: lobby.lobbyId, namespaceId: 'ns', versionId: 'v', running: true });
      if (found === undefined) throw new Error('no service found');
      await second.runtime.adopt(found);
      expect(second.runtime.watching()).toEqual([lobby.lobbyId]);
      await eventually('the game server\'s output', () => second.logs.of(lobby.lobbyId, 'std_out').includes('busybox game server listening on tcp 7000'), { timeoutMs: 20_000 });
      const container = await taskContainer(cluster(), lobby.lobbyId);
      await container?.engine.getContainer(container.id).kill({ signal: 'SIGKILL' });
      expect(await exits.of(lobby.lobbyId)).toBe('crashed');
      expect(second.logs.of(lobby.lobbyId, 'tavern').join('\n')).toMatch(/exit code 137/);
      expect(await catalog.lobbyHosts(id)).toEqual([]);
      expect(await cluster().manager.docker.listServices({ filters: { label: [`tavern.instance=${id}`] } })).toEqual([]);
    }, 60_000);
  },
);
