import { describe, expect, it } from 'vitest';
import { acceptingRegions, latestTask, nodeFacts, nodesByRegion, type RawNode, regionsFn, taskOutcome } from '../../../src/adapters/swarm/swarm-state.js';

const node = (id: string, region: string | undefined, over: { state?: string; availability?: string; drain?: boolean; hardened?: boolean } = {}): RawNode => ({
  ID: id,
  Spec: { Availability: over.availability ?? 'active', Labels: { ...(region === undefined ? {} : { 'tavern.region': region }), 'tavern.public-address': `10.0.0.${id.slice(1)}`, ...(over.drain === true ? { 'tavern.drain': 'true' } : {}) } },
  Description: { Hostname: `host-${id}`, Engine: { Labels: over.hardened === false ? {} : { 'tavern.no-new-privileges': 'true' } } },
  Status: { State: over.state ?? 'ready' },
});

const nodes = nodeFacts([
  node('n1', 'lnd'), node('n2', 'lnd', { state: 'down' }), node('n3', 'fra', { drain: true }), node('n4', 'nyc', { hardened: false }),
  node('n5', 'sgp', { availability: 'drain' }), node('n6', undefined),
]);

describe('the swarm as Tavern reads it', () => {
  it('a node accepts lobbies only when ready, active, not drained for Tavern, hardened and in a region', () => {
    expect(nodes.map((n) => [n.id, n.accepting])).toEqual([['n1', true], ['n2', false], ['n3', false], ['n4', false], ['n5', false], ['n6', false]]);
    expect([...acceptingRegions(nodes)]).toEqual(['lnd']);
    expect(nodesByRegion(nodes)['lnd']).toEqual([
      { name: 'host-n1', address: '10.0.0.1', state: 'ready', availability: 'active', drained: false, hardened: true, accepting: true },
      { name: 'host-n2', address: '10.0.0.2', state: 'down', availability: 'active', drained: false, hardened: true, accepting: false },
    ]);
    expect(Object.keys(nodesByRegion(nodes)).sort()).toEqual(['(none)', 'fra', 'lnd', 'nyc', 'sgp']);
  });

  it('the region function stays the same while the accepting regions do', () => {
    const first = regionsFn(() => false, new Set(['lnd', 'fra']));
    expect(regionsFn(first, new Set(['fra', 'lnd']))).toBe(first);
    const next = regionsFn(first, new Set(['lnd']));
    expect(next).not.toBe(first);
    expect([next('lnd'), next('fra')]).toEqual([true, false]);
  });

  it('a task is pending, running, ended (with its exit code) or lost with a node the manager no longer hears from', () => {
    const task = (state: string, nodeId = 'n1', extra = {}) => ({ ID: 't', ServiceID: 's', NodeID: nodeId, Status: { State: state, ...extra } });
    expect(taskOutcome(undefined, nodes)).toEqual({ kind: 'pending' });
    expect(taskOutcome(task('preparing'), nodes)).toEqual({ kind: 'pending' });
    expect(taskOutcome(task('pending', 'n1', { Err: 'no suitable node' }), nodes)).toEqual({ kind: 'pending', why: 'no suitable node' });
    expect(taskOutcome(task('running'), nodes)).toEqual({ kind: 'running', nodeId: 'n1' });
    expect(taskOutcome(task('failed', 'n1', { Err: 'task: non-zero exit (137)', ContainerStatus: { ExitCode: 137 } }), nodes))
      .toEqual({ kind: 'ended', state: 'failed', exitCode: 137, why: 'task: non-zero exit (137)' });
    expect(taskOutcome(task('running', 'n2'), nodes)).toEqual({ kind: 'lost', nodeId: 'n2', why: 'node host-n2 (10.0.0.2) is down' });
    expect(taskOutcome(task('complete', 'n2', { ContainerStatus: { ExitCode: 0 } }), nodes)).toMatchObject({ kind: 'ended', exitCode: 0 });
  });

  it('the latest task of a service is the last created', () => {
    expect(latestTask([{ ID: 'a', ServiceID: 's', CreatedAt: '2026-01-01T00:00:01Z' }, { ID: 'b', ServiceID: 's', CreatedAt: '2026-01-01T00:00:02Z' }])?.ID).toBe('b');
    expect(latestTask([])).toBeUndefined();
  });
});
