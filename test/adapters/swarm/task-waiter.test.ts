import { describe, expect, it } from 'vitest';
import { nodeFacts, type RawTask } from '../../../src/adapters/swarm/swarm-state.js';
import { TaskWaiter } from '../../../src/adapters/swarm/task-waiter.js';

const nodes = nodeFacts([
  { ID: 'n1', Spec: { Labels: { 'tavern.region': 'lnd', 'tavern.public-address': '10.0.0.1' } }, Description: { Hostname: 'host-n1' }, Status: { State: 'ready' } },
  { ID: 'n2', Spec: { Labels: { 'tavern.region': 'lnd', 'tavern.public-address': '10.0.0.2' } }, Description: { Hostname: 'host-n2' }, Status: { State: 'down' } },
]);

const task = (service: string, state: string, nodeId = 'n1', extra: Partial<NonNullable<RawTask['Status']>> = {}): RawTask => ({
  ID: `t-${service}`, ServiceID: service, NodeID: nodeId, CreatedAt: '2026-11-29T12:00:00Z', Status: { State: state, ...extra },
});

/**
 * A manager whose tasks move on one look at a time: `script[service]` is each look's state of its
 * task (the last one stays). Records the services each request asked for.
 */
const manager = (script: Record<string, readonly (RawTask | undefined)[]>, gone: readonly string[] = []) => {
  const asked: string[][] = [];
  const looks = new Map<string, number>();
  const tasks = (ids: readonly string[]): Promise<RawTask[]> => {
    asked.push([...ids]);
    if (ids.some((id) => gone.includes(id))) return Promise.reject(Object.assign(new Error('service not found'), { statusCode: 404 }));
    return Promise.resolve(ids.flatMap((id) => {
      const n = looks.get(id) ?? 0;
      looks.set(id, n + 1);
      const steps = script[id] ?? [];
      const t = steps[Math.min(n, steps.length - 1)];
      return t === undefined ? [] : [t];
    }));
  };
  return { tasks, asked };
};

describe('waiting for lobbies\' tasks to run', () => {
  it('looks at every waiting service in one request and gives each the node its task runs on', async () => {
    const m = manager({
      a: [undefined, task('a', 'assigned'), task('a', 'running', 'n1')],
      b: [task('b', 'preparing'), task('b', 'starting'), task('b', 'starting'), task('b', 'running', 'n1')],
    });
    const waiter = new TaskWaiter({ tasks: m.tasks, nodes: () => Promise.resolve(nodes), now: () => 0, fastMs: 1 });
    const [a, b] = await Promise.all([waiter.until('a', 10_000), waiter.until('b', 10_000)]);
    expect([a, b]).toEqual(['n1', 'n1']);
    expect(m.asked[0]).toEqual(['a']);
    expect(m.asked).toContainEqual(['a', 'b']);
    expect(m.asked.at(-1)).toEqual(['b']);
  });

  it('tells the node as soon as the scheduler places the task, before it runs', async () => {
    const m = manager({ a: [task('a', 'pending', ''), task('a', 'assigned', 'n2'), task('a', 'starting', 'n2'), task('a', 'running', 'n2')] });
    const placed: string[] = [];
    const nodesUp = nodeFacts([{ ID: 'n2', Spec: { Labels: { 'tavern.region': 'lnd' } }, Description: { Hostname: 'host-n2' }, Status: { State: 'ready' } }]);
    const waiter = new TaskWaiter({ tasks: m.tasks, nodes: () => Promise.resolve(nodesUp), now: () => 0, fastMs: 1 });
    const node = await waiter.until('a', 10_000, (n) => placed.push(n));
    expect(node).toBe('n2');
    // Heard from "assigned" on (each look: assigned, starting, running), never while pending without a node.
    expect(placed).toEqual(['n2', 'n2', 'n2']);
  });

  it('a task that ended, or whose node is down, fails its start saying why; the others wait on', async () => {
    const m = manager({
      ended: [task('ended', 'failed', 'n1', { Err: 'starting container failed: no such image' })],
      lost: [task('lost', 'running', 'n2')],
      fine: [task('fine', 'pending'), task('fine', 'running')],
    });
    const waiter = new TaskWaiter({ tasks: m.tasks, nodes: () => Promise.resolve(nodes), now: () => 0, fastMs: 1 });
    const results = await Promise.allSettled([waiter.until('ended', 10_000), waiter.until('lost', 10_000), waiter.until('fine', 10_000)]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      "the lobby's task did not start: starting container failed: no such image",
      "the lobby's task did not start: node host-n2 (10.0.0.2) is down",
      'n1',
    ]);
  });

  it('a task that does not run in time fails its start with the manager\'s last word on it', async () => {
    let now = 0;
    const m = manager({ stuck: [task('stuck', 'pending', 'n1', { Err: 'no suitable node (scheduling constraints not satisfied on 2 nodes)' })] });
    const waiter = new TaskWaiter({ tasks: (ids) => ((now += 400), m.tasks(ids)), nodes: () => Promise.resolve(nodes), now: () => now, fastMs: 1, slowMs: 1 });
    await expect(waiter.until('stuck', 3_000)).rejects.toThrow("the lobby's task did not run within 3000 ms: no suitable node (scheduling constraints not satisfied on 2 nodes)");
    expect(m.asked.length).toBe(8);
  });

  it('when one service is gone (the batch answers 404), each is asked on its own and only that start fails', async () => {
    const m = manager({ here: [task('here', 'starting'), task('here', 'running')] }, ['gone']);
    const waiter = new TaskWaiter({ tasks: m.tasks, nodes: () => Promise.resolve(nodes), now: () => 0, fastMs: 1 });
    const results = await Promise.allSettled([waiter.until('gone', 10_000), waiter.until('here', 10_000)]);
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { statusCode: 404 } });
    expect(results[1]).toEqual({ status: 'fulfilled', value: 'n1' });
  });

  it('a manager that does not answer fails the starts waiting on it', async () => {
    const waiter = new TaskWaiter({ tasks: () => Promise.reject(new Error('connect ECONNREFUSED')), nodes: () => Promise.resolve(nodes), now: () => 0 });
    await expect(Promise.all([waiter.until('a', 10_000), waiter.until('b', 10_000)])).rejects.toThrow('ECONNREFUSED');
  });
});
