/**
 * The chaos benchmark's judge: a history of requests (what each asked, and whether it was
 * answered) against the world the store holds afterwards. Each find and join comes from its own
 * client address, which the store keeps with the seat, so every stored seat names the request
 * that made it.
 */
import { isActive } from '../src/core/lobby/flags.js';
import type { Lobby, Player } from '../src/core/lobby/lobby.js';
import { inconsistencies } from '../src/core/invariants.js';
import type { World } from '../src/core/world.js';

export type Op = 'find' | 'join' | 'connect' | 'disconnect' | 'close';

/**
 * `acked`: answered 200; `refused`: answered with a 4xx (nothing applied); `unsent`: the
 * connection was refused (it never reached a server); `unknown`: no answer (the server died with
 * the request in flight, or a 5xx): applied or not, but never in part.
 */
export type Outcome = 'pending' | 'acked' | 'refused' | 'unsent' | 'unknown';

/** One request of the history. */
export interface Sent {
  readonly op: Op;
  /** find and join: the client address, unique to the request. */
  readonly ip?: string;
  /** join: the lobby asked for; connect, disconnect, close: the lobby token's lobby. */
  readonly lobbyId?: string;
  /** connect and disconnect: the player. */
  readonly playerId?: string;
  outcome: Outcome;
  /** An acknowledged find or join: where the answer seated its player. */
  seat?: { readonly playerId: string; readonly lobbyId: string };
}

/** Broken promises, by kind; the goal is zero of each. */
export interface Violations {
  /** An acknowledged seat, connect, disconnect or close the store does not show. */
  lost: number;
  /** A seat stored twice (two lobbies, or two seats for one request), or a player acknowledged twice. */
  duplicated: number;
  /** A lobby holding more players than its limits. */
  overCapacity: number;
  /** A port held by two lobbies, or taken with no lobby holding it, or held but free. */
  portConflicts: number;
  /** A seat in a lobby that is stopping or stopped. */
  stoppedSeats: number;
  /** A seat or connect stored for a request that was refused, never sent, or never made. */
  phantom: number;
  /** Any other way the world contradicts itself (derived counts against their rows). */
  inconsistent: number;
}

export const noViolations = (): Violations => ({ lost: 0, duplicated: 0, overCapacity: 0, portConflicts: 0, stoppedSeats: 0, phantom: 0, inconsistent: 0 });

export const addViolations = (into: Violations, more: Violations): void => {
  for (const key of Object.keys(into) as (keyof Violations)[]) into[key] += more[key];
};

const lobbiesOf = (world: World, namespaceId: string): Lobby[] => [...(world.namespaces.get(namespaceId)?.lobbies.values() ?? [])];

/**
 * What any committed world must hold, whatever the history: no lobby over its limits, no port
 * held twice, no seat in a stopped lobby, and nothing that contradicts itself.
 *
 * @example
 * addViolations(total, worldViolations(await store.snapshot(), nsId));
 */
export function worldViolations(world: World, namespaceId: string): Violations {
  const v = noViolations();
  for (const message of inconsistencies(world)) {
    if (message.includes('over its limits')) v.overCapacity++;
    else if (message.includes('port')) v.portConflicts++;
    else v.inconsistent++;
  }
  for (const lobby of lobbiesOf(world, namespaceId)) if (!isActive(lobby)) v.stoppedSeats += lobby.players.size;
  return v;
}

/** How the history left a player: the last disconnect's outcome, and whether a connect was acknowledged or may have applied. */
const playerFates = (history: readonly Sent[]) => {
  const fates = new Map<string, { disconnect?: Outcome; connect?: Outcome }>();
  const strongest = (a: Outcome | undefined, b: Outcome): Outcome => (a === 'acked' || b === 'acked' ? 'acked' : a === 'unknown' || b === 'unknown' ? 'unknown' : b);
  for (const s of history) {
    if (s.playerId === undefined || (s.op !== 'connect' && s.op !== 'disconnect')) continue;
    const fate = fates.get(s.playerId) ?? {};
    fate[s.op] = strongest(fate[s.op], s.outcome);
    fates.set(s.playerId, fate);
  }
  return fates;
};

/**
 * The history against the final world of namespace `namespaceId` (see {@link Violations}), on top
 * of {@link worldViolations}. Nothing here depends on timing: an unanswered request may have
 * applied or not, an answered one must show exactly as answered.
 */
export function historyViolations(world: World, namespaceId: string, history: readonly Sent[]): Violations {
  const v = worldViolations(world, namespaceId);
  const lobbies = lobbiesOf(world, namespaceId);
  const seatsOf = new Map<string, { lobby: Lobby; player: Player }[]>();
  const bySource = new Map<string, number>();
  for (const lobby of lobbies) {
    for (const player of lobby.players.values()) {
      seatsOf.set(player.id, [...(seatsOf.get(player.id) ?? []), { lobby, player }]);
      bySource.set(player.source, (bySource.get(player.source) ?? 0) + 1);
    }
  }
  for (const seats of seatsOf.values()) if (seats.length > 1) v.duplicated += seats.length - 1;
  for (const n of bySource.values()) if (n > 1) v.duplicated += n - 1;

  const requests = new Map<string, Sent>();
  for (const s of history) if (s.ip !== undefined) requests.set(s.ip, s);
  const acked = new Set<string>();
  for (const s of history) {
    if (s.seat === undefined) continue;
    if (acked.has(s.seat.playerId)) v.duplicated++;
    acked.add(s.seat.playerId);
  }
  // Every stored seat was made by a request that may have applied.
  for (const seats of seatsOf.values()) {
    for (const { player } of seats) {
      const request = requests.get(player.source);
      if (request === undefined || request.outcome === 'refused' || request.outcome === 'unsent') v.phantom++;
      else if (request.outcome === 'acked' && request.seat?.playerId !== player.id) v.duplicated++;
    }
  }

  const fates = playerFates(history);
  for (const s of history) {
    if (s.seat === undefined) continue;
    const fate = fates.get(s.seat.playerId);
    const stored = seatsOf.get(s.seat.playerId)?.find((seat) => seat.lobby.id === s.seat?.lobbyId);
    if (fate?.disconnect === 'acked') {
      if (stored !== undefined) v.lost++;
    } else if (stored === undefined) {
      if (fate?.disconnect !== 'unknown') v.lost++;
    } else if (stored.player.status === 'connected') {
      if (fate?.connect !== 'acked' && fate?.connect !== 'unknown') v.phantom++;
    } else if (fate?.connect === 'acked') v.lost++;
  }
  for (const s of history) {
    if (s.op !== 'close' || s.outcome !== 'acked') continue;
    const lobby = lobbies.find((l) => l.id === s.lobbyId);
    if (lobby !== undefined && isActive(lobby) && !lobby.closed) v.lost++;
  }
  return v;
}
