import { PassThrough } from 'node:stream';
import type Dockerode from 'dockerode';
import { describe, expect, it } from 'vitest';
import { NodeList } from '../../../src/adapters/swarm/node-list.js';
import type { RawNode } from '../../../src/adapters/swarm/swarm-state.js';

const node = (id: string, drain: boolean): RawNode => ({
  ID: id, Spec: { Labels: { 'tavern.region': 'lnd', ...(drain ? { 'tavern.drain': 'true' } : {}) } }, Description: { Hostname: `host-${id}` }, Status: { State: 'ready' },
});

/** A manager whose node list is `nodes` at the time it answers, its answers released by hand when `held`. */
const manager = () => {
  const state = { nodes: [node('n1', false), node('n2', false)], reads: 0, held: false, release: [] as (() => void)[], opened: 0, refuse: false };
  let events = new PassThrough();
  const docker = {
    listNodes: () => {
      state.reads += 1;
      return new Promise<RawNode[]>((resolve) => {
        const answer = () => resolve(state.nodes);
        if (state.held) state.release.push(() => answer());
        else answer();
      });
    },
    getEvents: () => {
      if (state.refuse) return Promise.reject(new Error('events refused'));
      state.opened += 1;
      events = new PassThrough();
      return Promise.resolve(events);
    },
  } as unknown as Dockerode;
  return { docker, state, events: () => events };
};

const warnings: string[] = [];
const warn = (message: string): void => {
  warnings.push(message);
};

const drainedOf = async (list: NodeList): Promise<string[]> => (await list.current()).filter((n) => n.drained).map((n) => n.id);

describe('the node list a start reads', () => {
  it('without the event stream, every start reads the nodes', async () => {
    const m = manager();
    const list = new NodeList(m.docker, warn);
    await list.current();
    await list.current();
    expect(m.state.reads).toBe(2);
  });

  it('with the event stream open, the last read serves until a node event says something changed', async () => {
    const m = manager();
    const list = new NodeList(m.docker, warn);
    await list.follow();
    expect(await drainedOf(list)).toEqual([]);
    expect(await drainedOf(list)).toEqual([]);
    expect(m.state.reads).toBe(1);
    m.state.nodes = [node('n1', false), node('n2', true)];
    m.events().write('{"Type":"node","Action":"update","Actor":{"ID":"n2"}}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await drainedOf(list)).toEqual(['n2']);
    expect(await drainedOf(list)).toEqual(['n2']);
    expect(m.state.reads).toBe(2);
    list.close();
  });

  it('a read under way when a node changed is not kept; reads at once share one request', async () => {
    const m = manager();
    const list = new NodeList(m.docker, warn);
    await list.follow();
    m.state.held = true;
    const first = list.current();
    const second = list.current();
    expect(m.state.reads).toBe(1);
    m.events().write('{"Type":"node","Action":"update"}\n');
    await new Promise((resolve) => setImmediate(resolve));
    for (const release of m.state.release.splice(0)) release();
    expect(await first).toBe(await second);
    m.state.held = false;
    await list.current();
    expect(m.state.reads).toBe(2);
    await list.current();
    expect(m.state.reads).toBe(2);
    list.close();
  });

  it('once the stream ends (a client timeout), the next start reads the nodes and opens it again', async () => {
    const m = manager();
    const list = new NodeList(m.docker, warn);
    await list.follow();
    await list.current();
    const first = m.events();
    first.end();
    await new Promise((resolve) => first.once('end', resolve));
    await list.current();
    expect(m.state.opened).toBe(2);
    await list.current();
    await list.current();
    expect(m.state.reads).toBe(3);
    list.close();
  });

  it('a manager that refuses the stream is said once; every start reads the nodes meanwhile', async () => {
    const m = manager();
    m.state.refuse = true;
    warnings.length = 0;
    const list = new NodeList(m.docker, warn);
    await list.follow();
    await list.current();
    await list.current();
    expect(m.state.reads).toBe(2);
    expect(warnings).toEqual(["following the Swarm manager's node events failed: every start reads the nodes until it works"]);
  });
});
