/**
 * Two Tavern instances on one PostgreSQL share one real swarm: a lobby both try to start at once
 * runs once (the lobby_hosts claim, then the service name), each instance sees only its own
 * services, and an instance that restarts adopts every service it left running.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SwarmRuntime } from '../../src/adapters/swarm/runtime.js';
import type { CatalogStore } from '../../src/io/catalog.js';
import { Exits } from '../contracts/runtime.contract.js';
import { describeNeeding } from '../needs.js';
import { postgresProblem, schemaUnderTest } from '../storage/postgres-harness.js';
import { startCluster, type Cluster } from './cluster.js';
import { Lines, lobbyOf, pushGameServers } from './lobbies.js';
import { swarmProblem } from './system.js';

const problem = (await swarmProblem()) ?? (await postgresProblem());

describeNeeding(
  { what: 'root, the Swarm harness tools and PostgreSQL', start: 'run as root with the Swarm harness tools and PostgreSQL at DATABASE_URL (see .ci/run)' },
  'two Tavern instances on one PostgreSQL share a 3-node Docker Swarm',
  problem,
  () => {
    let started: Cluster | undefined;
    let images = new Map<string, string>();
    const schema = schemaUnderTest();
    const runtimes: SwarmRuntime[] = [];
    const cluster = (): Cluster => {
      if (started === undefined) throw new Error('the cluster did not start');
      return started;
    };
    const runtimeFor = (instanceId: string, catalog: CatalogStore): SwarmRuntime => {
      const runtime = new SwarmRuntime({
        docker: cluster().manager.docker, instanceId, hosts: catalog, logs: new Lines(),
        images: {
          ensure: (build) => {
            const ref = images.get(build);
            return ref === undefined ? Promise.reject(new Error(`no build ${build}`)) : Promise.resolve(ref);
          },
        },
        apiOrigin: `http://${cluster().layout.hostAddress}:9`, stopGraceMs: 5_000, clock: { now: () => Date.now() }, pollMs: 250,
      });
      runtimes.push(runtime);
      return runtime;
    };
    const services = async (instanceId: string): Promise<unknown[]> => cluster().manager.docker.listServices({ filters: { label: [`tavern.instance=${instanceId}`] } });

    beforeAll(async () => {
      started = await startCluster({ nodes: 3, regions: { lnd: [1, 2], fra: [3] } });
      images = await pushGameServers(cluster());
    }, 300_000);

    afterAll(async () => {
      for (const r of runtimes) r.close();
      await started?.stop();
      await schema.close();
    }, 120_000);

    it('a lobby both instances start at once runs once; each sees only its own services', async () => {
      const [a, b] = [`inst-a-${randomUUID().slice(0, 8)}`, `inst-b-${randomUUID().slice(0, 8)}`];
      const ra = runtimeFor(a, (await schema.open()).catalog);
      const rb = runtimeFor(b, (await schema.open()).catalog);
      const both = lobbyOf('lnd');
      const results = await Promise.allSettled([ra.start(both), rb.start(both)]);
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(results.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason).toMatchObject({ message: expect.stringMatching(/already hosted/) as unknown });
      const own = lobbyOf('fra');
      await rb.start(own);
      const [winner, other] = results[0]?.status === 'fulfilled' ? [ra, rb] : [rb, ra];
      expect((await winner.inventory()).map((c) => c.lobbyId)).toContain(both.lobbyId);
      expect((await other.inventory()).map((c) => c.lobbyId)).not.toContain(both.lobbyId);
      expect((await services(a)).length + (await services(b)).length).toBe(2);
      for (const r of [ra, rb]) for (const id of r.watching()) await r.stop({ type: 'stop-lobby', lobbyId: id, region: '', reason: 'requested', force: false });
    }, 120_000);

    it('an instance that restarts adopts every service it left running, and follows each to its end', async () => {
      const id = `restart-${randomUUID().slice(0, 8)}`;
      const catalog = (await schema.open()).catalog;
      const before = runtimeFor(id, catalog);
      const lobbies = [lobbyOf('lnd'), lobbyOf('lnd'), lobbyOf('fra')];
      for (const lobby of lobbies) await before.start(lobby);
      before.close();
      const after = runtimeFor(id, (await schema.open()).catalog);
      const exits = new Exits();
      after.attach(exits);
      const found = await after.inventory();
      expect(found.map((c) => [c.lobbyId, c.running]).sort()).toEqual(lobbies.map((l) => [l.lobbyId, true]).sort());
      for (const c of found) await after.adopt(c);
      expect([...after.watching()].sort()).toEqual(lobbies.map((l) => l.lobbyId).sort());
      for (const lobby of lobbies) await after.stop({ type: 'stop-lobby', lobbyId: lobby.lobbyId, region: lobby.region, reason: 'requested', force: false });
      for (const lobby of lobbies) expect(await exits.of(lobby.lobbyId)).toBe('exited');
      expect(await services(id)).toEqual([]);
      expect(await catalog.lobbyHosts(id)).toEqual([]);
    }, 120_000);
  },
);
