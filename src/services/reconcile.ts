/**
 * The runtime reconciler: compares the lobbies the store says this instance runs with the
 * containers that carry this instance's label, on start and then periodically. Containers of
 * live lobbies are adopted (after a restart the games keep running and keep their ports), orphans
 * are removed, lobbies whose container is gone are reported exited, and a lobby whose start is
 * under way is left alone, so nothing is started twice. Each instance sees only its own.
 */
import { isActive } from '../core/lobby/flags.js';
import type { Lobby } from '../core/lobby/lobby.js';
import type { World } from '../core/world.js';
import type { LobbyHostStore, LobbyHostRecord } from '../io/catalog.js';
import type { HostedContainer, HostedRuntime } from '../io/runtime.js';
import type { Matchmaker } from './matchmaker.js';

/** What to do, decided from one look at the store, the host records and the engine. */
export interface ReconcilePlan {
  /** Containers of lobbies that are live or stopping: watch them (an exited one is reported). */
  readonly adopt: readonly HostedContainer[];
  /** Containers of lobbies that are stopping: ask them to stop again (the request may have been lost). */
  readonly stop: readonly HostedContainer[];
  /** Containers no live lobby needs: remove. */
  readonly discard: readonly HostedContainer[];
  /** Live or stopping lobbies this instance hosts whose container is gone: report them exited. */
  readonly gone: readonly LobbyHostRecord[];
  /** Host records of lobbies that are over, with no container: forget. */
  readonly release: readonly LobbyHostRecord[];
}

const lobbyOf = (world: World, namespaceId: string, lobbyId: string): Lobby | undefined => world.namespaces.get(namespaceId)?.lobbies.get(lobbyId);

/**
 * Pure: the plan for one instance. `busy` says whether a lobby's start is under way here (its
 * container may not exist yet), or it is watched already.
 *
 * @example
 * const plan = planReconcile(world, await catalog.lobbyHosts(id), await runtime.inventory(), (l) => runtime.starting(l));
 */
export const planReconcile = (
  world: World,
  hosts: readonly LobbyHostRecord[],
  containers: readonly HostedContainer[],
  busy: (lobbyId: string) => boolean,
): ReconcilePlan => {
  const adopt: HostedContainer[] = [];
  const stop: HostedContainer[] = [];
  const discard: HostedContainer[] = [];
  const withContainer = new Set<string>();
  for (const c of containers) {
    withContainer.add(c.lobbyId);
    if (busy(c.lobbyId)) continue;
    const lobby = lobbyOf(world, c.namespaceId, c.lobbyId);
    if (lobby !== undefined && isActive(lobby)) adopt.push(c);
    else if (lobby?.lifecycle.status === 'stopping') {
      adopt.push(c);
      if (c.running) stop.push(c);
    } else discard.push(c);
  }
  const gone: LobbyHostRecord[] = [];
  const release: LobbyHostRecord[] = [];
  for (const h of hosts) {
    if (withContainer.has(h.lobbyId) || busy(h.lobbyId)) continue;
    const lobby = lobbyOf(world, h.namespaceId, h.lobbyId);
    if (lobby !== undefined && (isActive(lobby) || lobby.lifecycle.status === 'stopping')) gone.push(h);
    else release.push(h);
  }
  return { adopt, stop, discard, gone, release };
};

/** What one reconciliation did. */
export interface ReconcileReport {
  readonly adopted: number;
  readonly discarded: number;
  readonly gone: number;
  readonly released: number;
}

export interface ReconcilerDeps {
  readonly runtime: HostedRuntime;
  readonly hosts: LobbyHostStore;
  readonly matchmaker: Pick<Matchmaker, 'snapshot' | 'lobbyExited'>;
  readonly instanceId: string;
}

/**
 * One reconciliation of this instance's containers. Reads the engine first, then the host records
 * and the world (so a container found belongs to a lobby the world already holds), and treats a
 * lobby whose start is under way or whose container is watched as busy. Throws, having changed
 * nothing, when the engine cannot be listed.
 *
 * @effects runtime (inventory, adopt, stop, discard), catalog (lobbyHosts, releaseLobbyHost), store (snapshot, lobbyExited)
 * @example
 * const report = await reconcileRuntime({ runtime, hosts: catalog, matchmaker, instanceId });
 */
export async function reconcileRuntime(deps: ReconcilerDeps): Promise<ReconcileReport> {
  const { runtime, hosts, matchmaker } = deps;
  const containers = await runtime.inventory();
  const records = await hosts.lobbyHosts(deps.instanceId);
  const world = await matchmaker.snapshot();
  const busy = new Set([...runtime.watching(), ...containers.map((c) => c.lobbyId).filter((id) => runtime.starting(id))]);
  const plan = planReconcile(world, records, containers, (id) => busy.has(id) || runtime.starting(id));
  for (const c of plan.adopt) await runtime.adopt(c);
  for (const c of plan.stop) await runtime.stop({ type: 'stop-lobby', lobbyId: c.lobbyId, region: '', reason: 'requested', force: false });
  for (const c of plan.discard) await runtime.discard(c);
  for (const h of plan.gone) {
    await matchmaker.lobbyExited({ namespaceId: h.namespaceId, lobbyId: h.lobbyId }, 'exited');
    await hosts.releaseLobbyHost(h.lobbyId);
  }
  for (const h of plan.release) await hosts.releaseLobbyHost(h.lobbyId);
  return { adopted: plan.adopt.length, discarded: plan.discard.length, gone: plan.gone.length, released: plan.release.length };
}
