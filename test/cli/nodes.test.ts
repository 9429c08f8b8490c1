/**
 * `tavern nodes list|drain|undrain` (the real command) against a Tavern app on 127.0.0.1 whose
 * runtime's nodes are a fake cluster: the table, a drain and its undrain by name, the catalog's
 * errors (an unknown node 404 `NODE_NOT_FOUND`, a server without nodes 501 `NODES_NOT_SUPPORTED`,
 * a token other than the admin's 403), and commander's usage errors (a missing node, an unknown
 * verb). The API against a real swarm: test/swarm/server.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeTable, type NodeRow } from '../../src/cli/nodes.js';
import type { ClusterNode, ClusterNodes } from '../../src/io/runtime.js';
import { createHttpServer } from '../../src/server/http.js';
import { ADMIN, harness, type Harness } from '../server/harness.js';
import { tavern } from './run.js';

const node = (name: string, region: string, lobbies: number): ClusterNode => ({
  id: `id-${name}`, name, region, address: `10.0.0.${name.length}`, state: 'ready', availability: 'active', drained: false, hardened: true, accepting: true, lobbies,
});

/** A cluster of two nodes whose drain is a field. */
class FakeNodes implements ClusterNodes {
  nodes = [node('worker-1', 'lnd', 2), node('worker-2', 'lnd', 1)];
  list(): Promise<readonly ClusterNode[]> {
    return Promise.resolve(this.nodes);
  }
  setDrain(name: string, drained: boolean): Promise<ClusterNode | undefined> {
    const found = this.nodes.find((n) => n.name === name || n.id === name);
    if (found === undefined) return Promise.resolve(undefined);
    const changed = { ...found, drained, accepting: !drained };
    this.nodes = this.nodes.map((n) => (n === found ? changed : n));
    return Promise.resolve(changed);
  }
}

const fake = new FakeNodes();
const served: { h: Harness; server: Server; env: Record<string, string> }[] = [];
let dir: string;

/** The app with `nodes` (or none) on a port; the CLI's environment for it with the admin token. */
const serve = async (nodes: ClusterNodes | undefined): Promise<Record<string, string>> => {
  const h = harness(nodes === undefined ? {} : { nodes });
  const server = createHttpServer(h.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const env = { TAVERN_API: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, TAVERN_TOKEN: ADMIN };
  served.push({ h, server, env });
  return env;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tavern-nodes-cli-'));
});

afterAll(async () => {
  for (const { h, server } of served) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    h.cleanup();
  }
  await rm(dir, { recursive: true, force: true });
});

describe('tavern nodes', () => {
  it('lists the nodes; drain and undrain a node by name, each saying what it means', async () => {
    const env = await serve(fake);
    const listed = await tavern(dir, env, 'nodes', 'list');
    expect(listed.stderr).toBe('');
    expect(listed.stdout.trimEnd().split('\n')).toEqual([
      'NAME      REGION  ADDRESS   STATE  DRAIN  ACCEPTS  LOBBIES',
      'worker-1  lnd     10.0.0.8  ready  -      yes      2',
      'worker-2  lnd     10.0.0.8  ready  -      yes      1',
    ]);
    const drained = await tavern(dir, env, 'nodes', 'drain', 'worker-2');
    expect(drained.stdout).toBe('node worker-2 drained: no new lobby is placed there; its 1 running lobby finishes (`tavern nodes undrain worker-2` lifts it)\n');
    expect(fake.nodes.find((n) => n.name === 'worker-2')?.drained).toBe(true);
    expect((await tavern(dir, env, 'nodes', 'list')).stdout).toMatch(/worker-2 +lnd +10\.0\.0\.8 +ready +drained +no +1/);
    const undrained = await tavern(dir, env, 'nodes', 'undrain', 'worker-2');
    expect(undrained.stdout).toBe('node worker-2 undrained: new lobbies are placed there again\n');
    expect(fake.nodes.find((n) => n.name === 'worker-2')?.drained).toBe(false);
  }, 60_000);

  it('says which node is unknown (404 NODE_NOT_FOUND), that a server without nodes has none (501), and refuses a token other than the admin one', async () => {
    const env = await serve(fake);
    const unknown = await tavern(dir, env, 'nodes', 'drain', 'worker-9');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/NODE_NOT_FOUND/);
    expect(unknown.stderr).toMatch(/No node worker-9 in the cluster/);
    const single = await tavern(dir, await serve(undefined), 'nodes', 'list');
    expect(single.code).toBe(1);
    expect(single.stderr).toMatch(/NODES_NOT_SUPPORTED/);
    expect(single.stderr).toMatch(/TAVERN_RUNTIME=swarm/);
    const cloud = (await served.find((s) => s.env === env)?.h.setup())?.cloud ?? '';
    const notAdmin = await tavern(dir, { ...env, TAVERN_TOKEN: cloud }, 'nodes', 'undrain', 'worker-1');
    expect(notAdmin.code).toBe(1);
    expect(notAdmin.stderr).toMatch(/API_FORBIDDEN/);
  }, 60_000);

  it('usage errors exit 2: a drain without a node, an unknown verb', async () => {
    const env = await serve(fake);
    const missing = await tavern(dir, env, 'nodes', 'drain');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing required argument 'node'/);
    const verb = await tavern(dir, env, 'nodes', 'cordon', 'worker-1');
    expect(verb.code).toBe(2);
    expect(verb.stderr).toMatch(/unknown command 'cordon'/);
  }, 60_000);

  it("the table shows a node's engine availability beside its state, and no region or address as -", () => {
    const row: NodeRow = { node_id: 'x', name: 'n3', region: null, address: null, state: 'down', availability: 'pause', drained: false, hardened: true, accepting: false, lobbies: 0 };
    expect(nodeTable([row])).toEqual(['NAME  REGION  ADDRESS  STATE         DRAIN  ACCEPTS  LOBBIES', 'n3    -       -        down (pause)  -      no       0']);
  });
});
