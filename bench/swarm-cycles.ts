/**
 * The `swarm` benchmark's start/stop cycles: lobbies started and stopped through Tavern's Swarm
 * runtime, a few at a time, each on a port of its own; then what is left once every end was
 * reported (services and host records are counted by the caller; the containers and published
 * ports on the nodes here).
 */
import type { SwarmRuntime } from '../src/adapters/swarm/runtime.js';
import type { StartLobby } from '../src/core/effects.js';
import type { Cluster } from '../test/swarm/cluster.js';
import type { Calls } from './swarm-probe.js';

export interface CyclesOptions {
  readonly runtime: SwarmRuntime;
  readonly cycles: number;
  readonly concurrency: number;
  /** The manager calls counted (`listNodes`, `startLook`, `poll`). */
  readonly calls: Calls;
  /** The lobby of cycle `c` (its own port: the cycles' lobbies may overlap on a node). */
  readonly lobbyOf: (c: number) => StartLobby;
  /** Tavern's live heap (MB) after a full collection. */
  readonly heapMb: () => number;
}

/**
 * Runs the cycles; resolves once every lobby's end was reported (or 120 s after the last stop)
 * with the figures: placed per second, failures, manager calls, Tavern's heap.
 *
 * @example
 * const figures = await runCycles({ runtime, cycles: 1_000, concurrency: 8, calls, lobbyOf: (c) => lobbyOf(28_000 + c), heapMb });
 */
export async function runCycles(o: CyclesOptions): Promise<Record<string, number>> {
  const before = { heap: o.heapMb(), nodeReads: o.calls.count('listNodes'), looks: o.calls.count('startLook'), polls: o.calls.count('poll') };
  let heapMid = NaN;
  let failures = 0;
  let firstFailure: unknown;
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let c = next++; c < o.cycles; c = next++) {
      if (c === Math.floor(o.cycles / 2)) heapMid = o.heapMb();
      const lobby = o.lobbyOf(c);
      try {
        await o.runtime.start(lobby);
        await o.runtime.stop({ type: 'stop-lobby', lobbyId: lobby.lobbyId, region: lobby.region, reason: 'requested', force: false });
      } catch (error) {
        failures += 1;
        firstFailure ??= error;
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  const placedS = (performance.now() - t0) / 1000;
  const deadline = performance.now() + 120_000;
  while (o.runtime.watching().length > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const endedS = (performance.now() - t0) / 1000;
  if (firstFailure !== undefined) process.stderr.write(`first failed cycle: ${firstFailure instanceof Error ? firstFailure.message : JSON.stringify(firstFailure)}\n`);
  return {
    cycles_s: placedS, lobbies_placed_per_s: (o.cycles - failures) / placedS, cycles_all_ended_s: endedS, cycle_failures: failures,
    node_reads_in_cycles: o.calls.count('listNodes') - before.nodeReads, task_looks_in_cycles: o.calls.count('startLook') - before.looks,
    polls_in_cycles: o.calls.count('poll') - before.polls,
    still_watched: o.runtime.watching().length,
    heap_before_mb: before.heap, heap_mid_mb: heapMid, heap_after_mb: o.heapMb(),
  };
}

/**
 * The containers of `instanceId` still on the nodes, and the ports they publish, once each node's
 * engine had up to 60 s to remove the containers of removed services.
 *
 * @example
 * await leftOnNodes(cluster, 'bench-123'); // { left_containers_on_nodes: 0, left_published_ports: 0 }
 */
export async function leftOnNodes(cluster: Cluster, instanceId: string): Promise<Record<string, number>> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const left = (await Promise.all(cluster.nodes.map((n) => n.docker.listContainers({ all: true, filters: { label: [`tavern.instance=${instanceId}`] } })))).flat();
    if (left.length === 0 || performance.now() > deadline) {
      return { left_containers_on_nodes: left.length, left_published_ports: left.reduce((sum, c) => sum + c.Ports.filter((p) => p.PublicPort !== undefined).length, 0) };
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
