/**
 * The Swarm runtime's placement, ports, drain and node failure on a real 3-node swarm (lnd: nodes
 * 1 and 2, fra: node 3): lobbies land in their region, spread over its nodes, and a real client
 * reaches their TCP port at the node's public address; a region without a ready node cannot start
 * lobbies and `/health`'s nodes say why; Tavern's drain label stops new placements and lets a
 * running lobby finish; a node whose dockerd is killed has its lobbies reported lost within 60 s
 * (the reason in the log), their services removed and host records released, and it is used again
 * once it is back.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MemoryCatalogStore } from '../../src/adapters/memory/catalog.js';
import type { StartLobby } from '../../src/core/effects.js';
import { SwarmRuntime } from '../../src/adapters/swarm/runtime.js';
import { Exits } from '../contracts/runtime.contract.js';
import { describeNeeding } from '../needs.js';
import { eventually } from '../wait.js';
import { swarmNode } from './api.js';
import { startCluster, type Cluster } from './cluster.js';
import { Lines, lobbyOf, pushGameServers, taskContainer, tcpAsk } from './lobbies.js';
import { swarmProblem } from './system.js';

describeNeeding(
  { what: 'root and the Swarm harness tools', start: 'run as root with iproute2, iptables, util-linux, docker.io and docker-registry installed (see .ci/run)' },
  'the Swarm runtime: placement, ports, drain and node failure on a 3-node Docker Swarm',
  await swarmProblem(),
  () => {
    let started: Cluster | undefined;
    let runtime: SwarmRuntime | undefined;
    let images = new Map<string, string>();
    const catalog = new MemoryCatalogStore();
    const logs = new Lines();
    const exits = new Exits();
    const instanceId = `place-${randomUUID().slice(0, 8)}`;
    const cluster = (): Cluster => {
      if (started === undefined) throw new Error('the cluster did not start');
      return started;
    };
    const rt = (): SwarmRuntime => {
      if (runtime === undefined) throw new Error('no runtime');
      return runtime;
    };
    const setLabel = async (n: number, key: string, value: string | undefined): Promise<void> => {
      const { manager } = cluster();
      const node = await swarmNode(manager.docker, cluster().node(n).id);
      const Labels: Record<string, string> = { ...node.Spec.Labels };
      if (value === undefined) delete Labels[key];
      else Labels[key] = value;
      await manager.docker.getNode(node.ID).update({ _query: { version: node.Version.Index }, _body: { ...node.Spec, Labels } });
    };
    /** A runtime's options on this cluster, for instance `id`. */
    const options = (id: string): ConstructorParameters<typeof SwarmRuntime>[0] => ({
      docker: cluster().manager.docker, instanceId: id, hosts: catalog, logs,
      images: {
        ensure: (build) => {
          const ref = images.get(build);
          return ref === undefined ? Promise.reject(new Error(`no build ${build}`)) : Promise.resolve(ref);
        },
      },
      apiOrigin: `http://${cluster().layout.hostAddress}:9`, stopGraceMs: 5_000, clock: { now: () => Date.now() },
    });
    const stopLobby = (lobbyId: string, region: string): Promise<void> => rt().stop({ type: 'stop-lobby', lobbyId, region, reason: 'requested', force: false });

    beforeAll(async () => {
      started = await startCluster({ nodes: 3, regions: { lnd: [1, 2], fra: [3] } });
      images = await pushGameServers(cluster());
      runtime = new SwarmRuntime({ ...options(instanceId), pollMs: 500 });
      runtime.attach(exits);
      await runtime.health();
    }, 300_000);

    afterAll(async () => {
      runtime?.close();
      await started?.stop();
    }, 120_000);

    it("places lobbies in their region, spread over its nodes, and a client reaches each one's TCP port at its node's public address", async () => {
      const lnd = [lobbyOf('lnd'), lobbyOf('lnd'), lobbyOf('lnd'), lobbyOf('lnd')];
      const fra = lobbyOf('fra');
      for (const lobby of [...lnd, fra]) await rt().start(lobby);
      const nodeOf = async (lobbyId: string): Promise<number> => (await taskContainer(cluster(), lobbyId))?.node.number ?? 0;
      const lndNodes = await Promise.all(lnd.map((l) => nodeOf(l.lobbyId)));
      expect(new Set(lndNodes)).toEqual(new Set([1, 2]));
      expect(await nodeOf(fra.lobbyId)).toBe(3);
      for (const lobby of [...lnd, fra]) {
        const address = rt().addressOf(lobby.lobbyId);
        const node = cluster().node(await nodeOf(lobby.lobbyId));
        expect(address).toBe(node.address);
        const port = lobby.ports[0]?.publicPort ?? 0;
        expect(await eventually(`${address}:${port} to echo`, () => tcpAsk(node.address, port, `hello ${lobby.lobbyId}\n`), { timeoutMs: 20_000 })).toBe(`hello ${lobby.lobbyId}\n`);
      }
      for (const lobby of [...lnd, fra]) await stopLobby(lobby.lobbyId, lobby.region);
      for (const lobby of [...lnd, fra]) expect(await exits.of(lobby.lobbyId)).toBe('exited');
    }, 120_000);

    it('a region with no ready node cannot start lobbies; /health lists the nodes per region', async () => {
      const health = await rt().health();
      expect(Object.keys(health.regions ?? {}).sort()).toEqual(['fra', 'lnd']);
      expect(health.regions?.['lnd']?.map((n) => [n.name, n.address, n.accepting]).sort()).toEqual([
        [cluster().node(1).name, cluster().node(1).address, true], [cluster().node(2).name, cluster().node(2).address, true],
      ]);
      const can = rt().startableIn();
      expect([can('lnd'), can('fra'), can('nyc')]).toEqual([true, true, false]);
    });

    it('drain (node label tavern.drain=true): no new lobby is placed on the node, a running one finishes there', async () => {
      const running = lobbyOf('fra');
      await rt().start(running);
      await setLabel(3, 'tavern.drain', 'true');
      try {
        await rt().health();
        expect(rt().startableIn()('fra')).toBe(false);
        expect((await rt().health()).regions?.['fra']?.[0]).toMatchObject({ drained: true, accepting: false });
        // A start placed anyway (by an instance that had not looked yet) waits and fails: Swarm never puts it on the drained node.
        const late = lobbyOf('fra');
        const refused = new SwarmRuntime({ ...options(`${instanceId}-late`), startTimeoutMs: 3_000 });
        await refused.health();
        await expect(refused.start(late)).rejects.toThrow(/did not run within 3000 ms: no suitable node/);
        // The lobby already there runs on and answers, and finishes when asked.
        const port = running.ports[0]?.publicPort ?? 0;
        expect(await eventually('the drained node\'s lobby to echo', () => tcpAsk(cluster().node(3).address, port, 'still here\n'), { timeoutMs: 20_000 })).toBe('still here\n');
        await stopLobby(running.lobbyId, 'fra');
        expect(await exits.of(running.lobbyId)).toBe('exited');
      } finally {
        await setLabel(3, 'tavern.drain', undefined);
      }
      await rt().health();
      expect(rt().startableIn()('fra')).toBe(true);
    }, 90_000);

    it("a node whose dockerd is killed: its lobbies are reported lost (reason lost) within 60 s, services removed, host records released; the node is used again once back", async () => {
      const lobbies = [lobbyOf('lnd'), lobbyOf('lnd'), lobbyOf('lnd'), lobbyOf('lnd')];
      for (const lobby of lobbies) await rt().start(lobby);
      const on2: StartLobby[] = [];
      for (const lobby of lobbies) if ((await taskContainer(cluster(), lobby.lobbyId))?.node.number === 2) on2.push(lobby);
      expect(on2.length).toBeGreaterThan(0);
      const t = performance.now();
      await cluster().stopNode(2, 'SIGKILL');
      for (const lobby of on2) expect(await exits.of(lobby.lobbyId, 60_000)).toBe('lost');
      const ms = performance.now() - t;
      expect(ms).toBeLessThan(60_000);
      for (const lobby of on2) {
        expect(logs.of(lobby.lobbyId, 'tavern').join('\n')).toMatch(new RegExp(`the lobby was lost: node ${cluster().node(2).name} \\(${cluster().node(2).address.replace(/\./g, '\\.')}\\) is down`));
        expect(await cluster().manager.docker.getService(`tavern-${lobby.lobbyId}`).inspect().then(() => 'exists', () => 'gone')).toBe('gone');
      }
      expect((await catalog.lobbyHosts(instanceId)).map((h) => h.lobbyId).sort()).toEqual(lobbies.filter((l) => !on2.includes(l)).map((l) => l.lobbyId).sort());
      // The region still has node 1: new lobbies start there.
      await rt().health();
      expect(rt().startableIn()('lnd')).toBe(true);
      const replacement = lobbyOf('lnd');
      await rt().start(replacement);
      expect((await taskContainer(cluster(), replacement.lobbyId))?.node.number).toBe(1);
      // Node 2 back: its old containers are removed by its engine (their services are gone), and it takes lobbies again.
      await cluster().startNode(2);
      await eventually('node 2 to be ready', async () => ((await swarmNode(cluster().manager.docker, cluster().node(2).id)).Status.State === 'ready' ? true : undefined), { timeoutMs: 90_000 });
      await eventually("node 2's lost lobbies' containers to be removed", async () => ((await cluster().node(2).docker.listContainers({ all: true, filters: { label: [`tavern.instance=${instanceId}`] } })).length === 0 ? true : undefined), { timeoutMs: 60_000 });
      const again = [lobbyOf('lnd'), lobbyOf('lnd')];
      for (const lobby of again) await rt().start(lobby);
      const nodes = await Promise.all(again.map(async (l) => (await taskContainer(cluster(), l.lobbyId))?.node.number));
      expect(nodes).toContain(2);
      for (const lobby of [...lobbies.filter((l) => !on2.includes(l)), replacement, ...again]) await stopLobby(lobby.lobbyId, 'lnd');
      console.log(`node 2 dockerd SIGKILL → its lobbies reported lost: ${Math.round(ms)} ms`);
    }, 240_000);
  },
);
