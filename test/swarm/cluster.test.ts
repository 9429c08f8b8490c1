/**
 * The Swarm harness itself, on a real 3-node cluster: it forms, its nodes carry their labels, the
 * registry serves a node an image another node pushed, a one-replica service lands where its
 * placement constraint says and answers on that node's address, a crashed or cut-off node goes
 * Down and comes back, and nothing is left afterwards. Each step is timed; the figures are printed
 * at the end (the Swarm runtime's benchmark starts from them).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readReply } from '../../src/adapters/docker/engine-upload.js';
import { eventually } from '../wait.js';
import { describeNeeding } from '../needs.js';
import { serviceTasks, swarmNode, swarmNodes } from './api.js';
import { ADDRESS_LABEL, REGION_LABEL, startCluster, type Cluster } from './cluster.js';
import type { ImageSource, PushedImage } from './registry.js';
import { swarmProblem, pidsMentioning } from './system.js';
import { leftovers } from './teardown.js';

const WWW = '/srv/tavern-swarm-www';
/** busybox httpd serving one page on 8080, as uid 1000: an image built FROM scratch. */
const httpd: ImageSource = {
  files: [
    { path: 'bin', kind: 'dir' },
    { path: 'bin/busybox', kind: 'file', from: '/bin/busybox' },
    { path: 'srv', kind: 'dir' },
    { path: WWW.slice(1), kind: 'dir' },
    { path: `${WWW.slice(1)}/index.html`, kind: 'text', text: 'tavern swarm smoke\n' },
  ],
  process: { args: ['/bin/busybox', 'httpd', '-f', '-p', '8080', '-h', WWW], env: ['PATH=/bin'], cwd: '/', uid: 1000, gid: 1000 },
};

/** The page at `url`, or undefined while nothing answers (each try bounded to 1 s). */
const page = async (url: string): Promise<string | undefined> => {
  const res = await fetch(url, { signal: AbortSignal.timeout(1_000) }).catch(() => undefined);
  return res?.status === 200 ? res.text() : undefined;
};

describeNeeding(
  { what: 'root and the Swarm harness tools', start: 'run as root with iproute2, iptables, util-linux, docker.io and docker-registry installed (see .ci/run)' },
  'a 3-node Docker Swarm on this machine (test/swarm/cluster.ts)',
  await swarmProblem(),
  () => {
    let started: Cluster | undefined;
    const figures: Record<string, number | string> = {};
    const cluster = (): Cluster => {
      if (started === undefined) throw new Error('the cluster did not start');
      return started;
    };
    const timed = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
      const t = performance.now();
      const value = await work();
      figures[name] = Math.round(performance.now() - t);
      return value;
    };
    let image: PushedImage | undefined;

    beforeAll(async () => {
      started = await timed('startCluster total', () => startCluster({ nodes: 3, regions: { lnd: [1, 2], fra: [3] } }));
    }, 240_000);

    afterAll(async () => {
      await started?.stop();
      const all = { ...Object.fromEntries(Object.entries(started?.timings ?? {}).map(([k, v]) => [`cluster: ${k}`, v])), ...figures };
      console.log(`Swarm harness figures (ms):\n${Object.entries(all).map(([k, v]) => `  ${k}: ${v}`).join('\n')}`);
    }, 120_000);

    it('forms: every node Ready, node 1 the only manager and the leader, each named by its hostname', async () => {
      const nodes = await swarmNodes(cluster().manager.docker);
      expect(nodes.map((n) => [n.Description.Hostname, n.Status.State, n.Spec.Role]).sort()).toEqual(
        cluster().nodes.map((n) => [n.name, 'ready', n.number === 1 ? 'manager' : 'worker']));
      expect(nodes.filter((n) => n.ManagerStatus?.Leader === true).map((n) => n.ID)).toEqual([cluster().manager.id]);
    });

    it('labels every node with its region and its public address', async () => {
      for (const node of cluster().nodes) {
        const labels = (await swarmNode(cluster().manager.docker, node.id)).Spec.Labels;
        expect(labels).toEqual({ [REGION_LABEL]: node.region, [ADDRESS_LABEL]: node.address });
      }
      expect(cluster().nodes.map((n) => n.region)).toEqual(['lnd', 'lnd', 'fra']);
    });

    it('pushes an image built FROM scratch to the registry, and another node pulls it from there', async () => {
      const pushed = await timed('push image (import on node 1, push, ≈1 MB)', () => cluster().pushImage(`tavern-swarm-httpd:${process.pid}`, httpd));
      image = pushed;
      const tags = (await (await fetch(`http://${cluster().registry}/v2/tavern-swarm-httpd/tags/list`)).json()) as { tags: string[] };
      expect(tags.tags).toContain(String(process.pid));
      const worker = cluster().node(2).docker;
      const pulled = await timed('pull image on node 2', async () => readReply(await worker.pull(pushed.ref)));
      expect(pulled.error).toBeUndefined();
      expect((await worker.getImage(pushed.ref).inspect()).RepoDigests).toContain(`${pushed.ref.split(':').slice(0, -1).join(':')}@${pushed.digest}`);
    });

    it("runs a one-replica service on the node its placement constraint names, answering on that node's address", async () => {
      if (image === undefined) throw new Error('the image was not pushed');
      const { manager, nodes } = cluster();
      const fra = cluster().node(3);
      const url = `http://${fra.address}:28080/`;
      const t = performance.now();
      const service = await manager.docker.createService({
        Name: 'tavern-swarm-smoke',
        TaskTemplate: {
          ContainerSpec: { Image: image.pinned, Init: true },
          Placement: { Constraints: [`node.labels.${REGION_LABEL} == fra`] },
          RestartPolicy: { Condition: 'none' },
        },
        Mode: { Replicated: { Replicas: 1 } },
        EndpointSpec: { Ports: [{ Protocol: 'tcp', TargetPort: 8080, PublishedPort: 28080, PublishMode: 'host' }] },
      });
      figures['service create call'] = Math.round(performance.now() - t);
      expect(await eventually(`${url} to answer`, () => page(url), { timeoutMs: 60_000 })).toBe('tavern swarm smoke\n');
      figures['service create → HTTP 200 on the node (image pulled by the node)'] = Math.round(performance.now() - t);
      // The manager hears of the task's start a moment after its container answers: wait for it.
      const placed = async (): Promise<(string | undefined)[][]> => (await serviceTasks(manager.docker, service.id)).map((task) => [task.NodeID, task.Status.State]);
      await eventually('the manager to see the task running', async () => (await placed()).every(([, state]) => state === 'running'), { timeoutMs: 30_000 });
      expect(await placed()).toEqual([[fra.id, 'running']]);
      for (const other of nodes.filter((n) => n !== fra)) {
        await expect(fetch(`http://${other.address}:28080/`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
      }

      const plain = `http://${fra.address}:28081/`;
      const u = performance.now();
      const container = await fra.docker.createContainer({
        Image: image.pinned, ExposedPorts: { '8080/tcp': {} }, HostConfig: { Init: true, PortBindings: { '8080/tcp': [{ HostPort: '28081' }] } },
      });
      await container.start();
      expect(await eventually(`${plain} to answer`, () => page(plain), { timeoutMs: 30_000 })).toBe('tavern swarm smoke\n');
      figures['docker run → HTTP 200 on the same node (image present)'] = Math.round(performance.now() - u);
      await container.remove({ force: true });
    }, 120_000);

    it('shows a node whose dockerd was killed Down, and a node whose link was cut Down; both Ready again once restarted and restored, the cut node\'s task shut down', async () => {
      const { manager } = cluster();
      const [crashed, cut] = [cluster().node(2), cluster().node(3)];
      const state = async (id: string): Promise<string> => (await swarmNode(manager.docker, id)).Status.State;
      const down = async (name: string, id: string, t: number): Promise<void> => {
        await eventually(`${name} to be down`, async () => ((await state(id)) === 'down' ? true : undefined), { timeoutMs: 90_000 });
        figures[name] = Math.round(performance.now() - t);
      };
      const t = performance.now();
      await Promise.all([cluster().stopNode(2, 'SIGKILL'), cluster().setLink(3, 'down')]);
      await Promise.all([down('node 2 dockerd SIGKILL → Down in the manager', crashed.id, t), down('node 3 link down → Down in the manager', cut.id, t)]);
      figures["node 3's task state while node 3 is Down"] = (await serviceTasks(manager.docker, 'tavern-swarm-smoke'))[0]?.Status.State ?? 'none';

      const u = performance.now();
      const ready = async (name: string, id: string): Promise<void> => {
        await eventually(`${name} to be ready`, async () => ((await state(id)) === 'ready' ? true : undefined), { timeoutMs: 90_000 });
        figures[name] = Math.round(performance.now() - u);
      };
      await Promise.all([cluster().startNode(2), cluster().setLink(3, 'up')]);
      await Promise.all([ready('node 2 dockerd restarted → Ready', crashed.id), ready('node 3 link up → Ready', cut.id)]);
      // A task with restart policy none on a node that was Down is lost for good: once the node is back, the
      // manager shuts it down there and starts no other (Tavern's Swarm runtime reports such a lobby lost, and
      // no lobby runs twice).
      const tasks = async (): Promise<(string | undefined)[][]> =>
        (await serviceTasks(manager.docker, 'tavern-swarm-smoke')).map((task) => [task.NodeID, task.DesiredState, task.Status.State]);
      await eventually("the manager to shut node 3's task down", async () => (await tasks()).every(([, , state]) => state === 'shutdown'), { timeoutMs: 60_000 });
      expect(await tasks()).toEqual([[cut.id, 'shutdown', 'shutdown']]);
      expect((await cut.docker.listContainers({ all: true })).map((c) => c.State)).toEqual(['exited']);
      await expect(fetch(`http://${cut.address}:28080/`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
    }, 240_000);

    it('leaves no process, container, mount, folder, namespace, link or iptables rule behind', async () => {
      await cluster().stop();
      expect(await leftovers(cluster().layout)).toEqual([]);
      expect(await pidsMentioning(`-h ${WWW}`)).toEqual([]);
    }, 120_000);
  },
);
