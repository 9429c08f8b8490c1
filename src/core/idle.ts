import type { Ctx } from './context.js';
import type { MatchError } from './errors.js';
import { canStart } from './hosting.js';
import { isActive, isFindable, isIdle, isOutdated } from './lobby/flags.js';
import type { Lobby } from './lobby/lobby.js';
import { beginStop } from './lobby/stop.js';
import { spawnLobby } from './matchmaker/spawn.js';
import { createRng } from './rng.js';
import { type Decision, Tx } from './tx.js';
import { currentVersion, namespaceOf, type NamespaceState, type World } from './world.js';

export interface IdleTarget {
  readonly region: string;
  readonly gameMode: string;
}

/** Lobbies to create (one entry per lobby) and to stop (oldest first), to bring the idle pool within bounds. */
export interface IdlePlan {
  readonly create: readonly IdleTarget[];
  readonly stop: readonly string[];
}

const byAge = (a: Lobby, b: Lobby): number => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1);

/** The plan when the pool is within bounds: most decisions that move the pool leave it so. */
const NOTHING: IdlePlan = Object.freeze({ create: Object.freeze([]), stop: Object.freeze([]) });

/** The plan from the pool alone ({@link planIdle} without what cannot start). */
const poolPlan = (ns: NamespaceState): IdlePlan => {
  const modes = currentVersion(ns)?.config.gameModes ?? [];
  // The usable idle lobbies by game mode, then region.
  const pools = new Map<string, Map<string, Lobby[]>>();
  const stop: Lobby[] = [];
  ns.idleLobbies.forEach((lobby) => {
    if (!isFindable(lobby, ns.currentVersionId)) {
      stop.push(lobby);
      return;
    }
    let regions = pools.get(lobby.gameMode);
    if (regions === undefined) pools.set(lobby.gameMode, (regions = new Map<string, Lobby[]>()));
    const pool = regions.get(lobby.region);
    if (pool === undefined) regions.set(lobby.region, [lobby]);
    else pool.push(lobby);
  });
  for (const mode of modes) {
    for (const region of mode.regions) {
      const pool = pools.get(mode.name)?.get(region.name);
      if (pool !== undefined && pool.length > region.idleLobbies.max) stop.push(...pool.sort(byAge).slice(0, pool.length - region.idleLobbies.max));
    }
  }
  // Stopped lobbies no longer count against lobby_count_max, so plan creations after the stops.
  let capacity = ns.settings.lobbyCountMax - (ns.activeLobbies - stop.length);
  const create: IdleTarget[] = [];
  for (const mode of modes) {
    for (const region of mode.regions) {
      for (let n = pools.get(mode.name)?.get(region.name)?.length ?? 0; n < region.idleLobbies.min && capacity > 0; n++, capacity--) {
        create.push({ region: region.name, gameMode: mode.name });
      }
    }
  }
  if (create.length === 0 && stop.length === 0) return NOTHING;
  return { create, stop: stop.sort(byAge).map((l) => l.id) };
};

/**
 * The idle reconciliation of one namespace, from its idle lobbies alone (`idleLobbies`, which holds
 * them as they stand: no lookup per lobby). A lobby is idle when no player holds a seat. Per
 * (region, mode) of the current version the pool is the idle lobbies find could use (active,
 * public, open, current): below `idle_lobbies.min` create, above `max` stop the oldest. Idle lobbies
 * find can never use (outdated, closed or private) are stopped. Creations stop at the namespace's
 * `lobby_count_max`. With `at` (the decision's time and hosting facts), creations that cannot start
 * now are left out: none where no runtime can start a lobby, none of a game mode under start
 * back-off (they come back once the runtime answers or the wait is over; the capacity they were
 * planned in is not handed to others). The services run it after every decision that moved the
 * pool, so it allocates little when there is nothing to do.
 *
 * @example
 * const plan = planIdle(ns, { now, hosting }); // { create: [{ region: 'local', gameMode: 'default' }], stop: [] }
 */
export const planIdle = (ns: NamespaceState, at?: Pick<Ctx, 'now' | 'hosting'>): IdlePlan => {
  const plan = poolPlan(ns);
  const versionId = ns.currentVersionId;
  if (at?.hosting === undefined || plan.create.length === 0 || versionId === undefined) return plan;
  const { hosting, now } = at;
  const create = plan.create.filter((t) => canStart(hosting, { namespaceId: ns.id, versionId, gameMode: t.gameMode, region: t.region }, now));
  if (create.length === plan.create.length) return plan;
  return create.length === 0 && plan.stop.length === 0 ? NOTHING : { create, stop: plan.stop };
};

/**
 * Whether a plan does nothing.
 *
 * @example
 * if (!idlePlanEmpty(planIdle(ns, ctx))) await reconcile();
 */
export const idlePlanEmpty = (plan: IdlePlan): boolean => plan.create.length === 0 && plan.stop.length === 0;

export interface IdleOutcome {
  readonly created: readonly string[];
  readonly stopped: readonly string[];
  /** Creations that failed (lobby cap reached meanwhile, ports exhausted...). */
  readonly failed: readonly (IdleTarget & { readonly error: MatchError })[];
}

/**
 * Carry out an idle plan: stop first (freeing capacity), then create pooled public lobbies with
 * the given fresh ids (one per planned creation; extra ids are unused).
 *
 * @example
 * const plan = planIdle(ns);
 * const d = applyIdlePlan(world, ns.id, plan, plan.create.map(() => newId()), ctx);
 */
export const applyIdlePlan = (
  world: World,
  namespaceId: string,
  plan: IdlePlan,
  newLobbyIds: readonly string[],
  ctx: Ctx,
): Decision<IdleOutcome> => {
  const ns = namespaceOf(world, namespaceId);
  const tx = new Tx(world, ns, ctx.now);
  const stopped: string[] = [];
  for (const id of plan.stop) {
    const lobby = tx.lobby(id);
    if (lobby === undefined || !isActive(lobby) || !isIdle(lobby)) continue;
    beginStop(tx, lobby, isOutdated(lobby, tx.ns.currentVersionId) ? 'outdated' : 'idle');
    stopped.push(id);
  }
  const version = currentVersion(tx.ns);
  const rng = createRng(ctx.seed);
  const created: string[] = [];
  const failed: (IdleTarget & { readonly error: MatchError })[] = [];
  for (const [i, target] of plan.create.entries()) {
    const mode = version?.modes.get(target.gameMode);
    const lobbyId = newLobbyIds[i];
    if (version === undefined || mode === undefined || lobbyId === undefined) continue;
    const r = spawnLobby(tx, { lobbyId, version, mode, region: target.region, origin: 'pooled', publicity: 'public', tags: {} }, rng);
    if (r.ok) created.push(lobbyId);
    else failed.push({ region: target.region, gameMode: target.gameMode, error: r.error });
  }
  return tx.commit({ created, stopped, failed });
};
