import { type Admission, type Credentials, type GateInput, passGates, actionGate, refusedAfterGates, rejected } from '../admission/gate.js';
import type { GameMode } from '../config/types.js';
import type { Ctx } from '../context.js';
import { type MatchError, matchError } from '../errors.js';
import { startRefusal } from '../hosting.js';
import { createRng, type Rng, shuffled } from '../rng.js';
import { choose, poolKey } from '../routing/index.js';
import { Tx } from '../tx.js';
import type { NamespaceState, Version, World } from '../world.js';
import { currentVersion, namespaceOf } from '../world.js';
import { checkDynamicMax, checkTags, type Client, resolveModes, resolveRegions } from './request.js';
import { reserveSeats, type Seat } from './seat.js';
import { spawnLobby } from './spawn.js';
import { optional } from '../optional.js';

export interface FindCommand extends Credentials {
  readonly namespaceId: string;
  readonly gameModes: readonly string[];
  /** A priority order (see `resolveRegions`). */
  readonly regions?: readonly string[];
  readonly preventAutoCreate?: boolean;
  readonly tags?: Readonly<Record<string, string>>;
  readonly maxPlayers?: number;
  /** One fresh id per seat; more than one makes a party find, bounded by `max_players_party`. */
  readonly playerIds: readonly string[];
  /** A fresh id, used if a lobby has to be created. */
  readonly newLobbyId: string;
  readonly client: Client;
}

interface Pair {
  readonly region: string;
  readonly mode: GameMode;
}

/** (region, mode) pairs where a mode runs in a region: regions in priority order, modes in request order. */
const pairsOf = (regions: readonly string[], modes: readonly GameMode[]): Pair[] => {
  const out: Pair[] = [];
  // Plain loops: this runs on every find.
  for (const region of regions) {
    for (const mode of modes) {
      for (const r of mode.regions) {
        if (r.name === region) {
          out.push({ region, mode });
          break;
        }
      }
    }
  }
  return out;
};

/** The seat limit a find of this size checks against in lobbies of `mode`. */
const limitOf = (mode: GameMode, party: boolean, dynamicMax: number | undefined): number =>
  party ? mode.maxPlayers.party : (dynamicMax ?? mode.maxPlayers.normal);

/**
 * The lobby a find would seat its players in, without changing anything: regions in priority
 * order; within a region the game modes in random order (from `rng`); within a pool the fullest
 * lobby that fits. Undefined: none fits (create one, or `NO_AVAILABLE_LOBBIES`).
 *
 * @example
 * chooseLobby(ns, version, pairs, cmd, seed) // 'lobby-id' | undefined
 */
export const chooseLobby = (
  ns: NamespaceState,
  version: Version,
  pairs: readonly Pair[],
  cmd: Pick<FindCommand, 'tags' | 'maxPlayers' | 'playerIds'>,
  seed: number,
): string | undefined => {
  const need = cmd.playerIds.length;
  const tags = cmd.tags ?? {};
  const lobbyOf = (id: string) => ns.lobbies.get(id);
  let rng: Rng | undefined;
  let i = 0;
  while (i < pairs.length) {
    const region = (pairs[i] as Pair).region;
    let j = i;
    while (j < pairs.length && (pairs[j] as Pair).region === region) j++;
    const inRegion = pairs.slice(i, j);
    const group = inRegion.length > 1 ? shuffled(inRegion, (rng ??= createRng(seed))) : inRegion;
    for (const { mode } of group) {
      const pool = poolKey(version.id, mode.name, region, cmd.maxPlayers);
      const id = choose(ns.routing, pool, limitOf(mode, need > 1, cmd.maxPlayers), need, tags, lobbyOf);
      if (id !== undefined) return id;
    }
    i = j;
  }
  return undefined;
};

/** The first mode that refuses finds, with the path of its name in the request (made only then). */
const findGate = (modes: readonly GameMode[], names: readonly string[]): MatchError | undefined => {
  for (const m of modes) {
    if (actionGate(m, 'find') !== undefined) return actionGate(m, 'find', ['game_modes', String(names.indexOf(m.name))]);
  }
  return undefined;
};

interface Plan {
  readonly version: Version;
  readonly modes: readonly GameMode[];
  readonly pairs: readonly Pair[];
}

/** Everything about the request that does not depend on lobbies: modes, tags, limits, regions. */
const planFind = (world: World, ns: NamespaceState, cmd: FindCommand): Plan | { readonly kind: 'rejected'; readonly error: MatchError } => {
  const version = currentVersion(ns);
  const modes = resolveModes(version, cmd.gameModes);
  if (!modes.ok) return rejected(modes.error);
  if (version === undefined) throw new Error('unreachable: modes resolved without a version');
  const problem = checkTags(cmd.tags ?? {}, modes.value) ?? checkDynamicMax(cmd.maxPlayers, modes.value) ?? findGate(modes.value, cmd.gameModes);
  if (problem) return rejected(problem);
  if (cmd.playerIds.length === 0) throw new Error('find: at least one player id is required');
  const regions = resolveRegions(world.regions, modes.value, cmd.regions, cmd.client.coords);
  if (!regions.ok) return rejected(regions.error);
  const pairs = pairsOf(regions.value, modes.value);
  if (pairs.length === 0) return rejected(matchError('MATCHMAKER_AUTO_CREATE_FAILED'));
  return { version, modes: modes.value, pairs };
};

/**
 * The modes whose verification a find passes, with its payload details: with auto-create only the
 * mode a lobby would be created in, without every mode. Empty when none of them has one (the
 * gate skips a mode without): no payload is made then.
 */
const toVerify = (ns: NamespaceState, cmd: FindCommand, modes: readonly GameMode[]): GateInput['verify'] => {
  if (!modes.some((mode) => mode.actions.find.verification !== undefined)) return [];
  const payload = {
    namespaceId: ns.id,
    kind: 'Find' as const,
    client: cmd.client,
    verificationData: cmd.verificationData,
    tags: cmd.tags ?? {},
    ...optional('dynamicMaxPlayers', cmd.maxPlayers),
    party: cmd.playerIds.length > 1,
  };
  return modes.map((mode) => ({ mode, payload }));
};

/**
 * `POST /matchmaker/lobbies/find`: validate, pass the gates (per-client cap, captcha,
 * verification), then seat the players in the fullest fitting lobby of the preferred region, or
 * create a lobby in the first region (priority order) where the first requested mode runs. A lobby
 * that cannot start there (`ctx.hosting`: no runtime, or the mode under start back-off) is refused
 * with `MATCHMAKER_RUNTIME_UNAVAILABLE` or `MATCHMAKER_LOBBY_START_BACKOFF`, committing nothing.
 *
 * @example
 * const a = find(world, { namespaceId, gameModes: ['default'], playerIds: [pid], newLobbyId: lid, client }, { now, seed });
 * if (a.kind === 'admitted') world = a.decision.world;
 */
export const find = (world: World, cmd: FindCommand, ctx: Ctx): Admission<Seat> => {
  const ns = namespaceOf(world, cmd.namespaceId);
  const plan = planFind(world, ns, cmd);
  if ('kind' in plan) return plan;
  const { version, pairs } = plan;
  const autoCreate = pairs[0] as Pair;
  const tx = new Tx(world, ns, ctx.now);
  const stop = passGates(tx, {
    version,
    current: version,
    client: cmd.client,
    seats: cmd.playerIds.length,
    credentials: cmd,
    verify: toVerify(ns, cmd, cmd.preventAutoCreate === true ? plan.modes : [autoCreate.mode]),
    action: 'find',
  });
  if (stop) return stop;
  const chosen = chooseLobby(ns, version, pairs, cmd, ctx.seed);
  if (chosen !== undefined) {
    const lobby = tx.lobby(chosen);
    if (lobby === undefined) throw new Error(`routing index names unknown lobby ${chosen}`);
    return { kind: 'admitted', decision: tx.commit(reserveSeats(tx, lobby, cmd.playerIds, cmd.client, false)) };
  }
  if (cmd.preventAutoCreate === true) return refusedAfterGates(tx, matchError('MATCHMAKER_NO_AVAILABLE_LOBBIES'));
  const limit = limitOf(autoCreate.mode, cmd.playerIds.length > 1, cmd.maxPlayers);
  if (cmd.playerIds.length > limit) return refusedAfterGates(tx, matchError('MATCHMAKER_LOBBY_FULL'));
  const spawned = spawnLobby(
    tx,
    {
      lobbyId: cmd.newLobbyId,
      version,
      mode: autoCreate.mode,
      region: autoCreate.region,
      origin: 'pooled',
      publicity: 'public',
      tags: cmd.tags ?? {},
      ...optional('dynamicMaxPlayers', cmd.maxPlayers),
    },
    createRng(ctx.seed),
  );
  if (!spawned.ok) return refusedAfterGates(tx, spawned.error);
  // The new lobby cannot start (no runtime there, or its mode is under start back-off): nothing is committed.
  const held = startRefusal(ctx.hosting, spawned.value, ctx.now);
  if (held !== undefined) return rejected(held);
  return { kind: 'admitted', decision: tx.commit(reserveSeats(tx, spawned.value, cmd.playerIds, cmd.client, true)) };
};

/** Where a find would go, decided without changing anything. */
export type Route =
  | { readonly kind: 'lobby'; readonly lobbyId: string }
  | { readonly kind: 'create'; readonly region: string; readonly gameMode: string }
  | { readonly kind: 'rejected'; readonly error: MatchError };

/**
 * The routing choice of a find alone (read-only): which lobby, or "create one here", or why not.
 * No gate (cap, captcha, verification) is consulted; `find` applies them and commits.
 *
 * @example
 * routeFind(world, { namespaceId, gameModes: ['default'], playerIds: ['p'], newLobbyId: 'l', client }, ctx)
 */
export const routeFind = (world: World, cmd: FindCommand, ctx: Ctx): Route => {
  const ns = namespaceOf(world, cmd.namespaceId);
  const plan = planFind(world, ns, cmd);
  if ('kind' in plan) return plan;
  const chosen = chooseLobby(ns, plan.version, plan.pairs, cmd, ctx.seed);
  if (chosen !== undefined) return { kind: 'lobby', lobbyId: chosen };
  if (cmd.preventAutoCreate === true) return rejected(matchError('MATCHMAKER_NO_AVAILABLE_LOBBIES'));
  const target = plan.pairs[0] as Pair;
  return { kind: 'create', region: target.region, gameMode: target.mode.name };
};
