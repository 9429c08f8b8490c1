import type { Effect } from './effects.js';
import type { MatchEvent } from './events.js';
import { isActive } from './lobby/flags.js';
import type { Lobby, Player } from './lobby/lobby.js';
import { PMap } from './pmap.js';
import type { PortSpace } from './ports/index.js';
import { reindex } from './routing/index.js';
import type { NamespaceState, World } from './world.js';

/** A decision's result: the next world, the effects to perform, the events established, and a value. */
export interface Decision<T> {
  readonly world: World;
  readonly effects: readonly Effect[];
  readonly events: readonly MatchEvent[];
  readonly value: T;
}

/**
 * The working copy of one decision: it reads from the world it started with and records every
 * change through methods that keep the namespace's derived data (routing index, active lobby count,
 * per-client seat counts, lobby player counts) consistent. It lives only inside one core call;
 * `commit` turns it into the next immutable world, sharing everything untouched.
 *
 * @example
 * const tx = new Tx(world, 'ns-1', now);
 * tx.putLobby(lobby);
 * return tx.commit(lobby.id);
 */
export class Tx {
  #ns: NamespaceState;
  #ports: PMap<string, PortSpace>;
  readonly #effects: Effect[] = [];
  readonly #events: MatchEvent[] = [];

  constructor(
    private readonly base: World,
    ns: NamespaceState,
    readonly now: number,
  ) {
    this.#ns = ns;
    this.#ports = base.ports;
  }

  get ns(): NamespaceState {
    return this.#ns;
  }

  /** The ids of the players seated in a lobby. */
  playersOf(lobbyId: string): string[] {
    return [...(this.#ns.seats.get(lobbyId)?.keys() ?? [])];
  }

  lobby(id: string): Lobby | undefined {
    return this.#ns.lobbies.get(id);
  }

  player(id: string): Player | undefined {
    return this.#ns.players.get(id);
  }

  /** Replace the namespace's own fields (not lobbies or players: use the methods below). */
  patch(fields: Partial<Pick<NamespaceState, 'settings' | 'currentVersionId' | 'versions' | 'captcha' | 'routing'>>): void {
    this.#ns = { ...this.#ns, ...fields };
  }

  /** Insert or replace a lobby; keeps the routing index and the active count in step. */
  putLobby(next: Lobby): void {
    const ns = this.#ns;
    const prev = ns.lobbies.get(next.id);
    const activeDelta = (isActive(next) ? 1 : 0) - (prev !== undefined && isActive(prev) ? 1 : 0);
    this.#ns = {
      ...ns,
      lobbies: ns.lobbies.set(next.id, next),
      routing: reindex(ns.routing, prev, next, ns.currentVersionId),
      activeLobbies: ns.activeLobbies + activeDelta,
    };
  }

  /** Drop a stopped lobby from the working set. */
  forgetLobby(id: string): void {
    const ns = this.#ns;
    const prev = ns.lobbies.get(id);
    if (prev === undefined) return;
    this.#ns = {
      ...ns,
      lobbies: ns.lobbies.delete(id),
      routing: reindex(ns.routing, prev, undefined, ns.currentVersionId),
      activeLobbies: ns.activeLobbies - (isActive(prev) ? 1 : 0),
    };
  }

  /** Seat a new player in its lobby (which must exist): lobby count, client count and index follow. */
  addPlayer(player: Player): void {
    const lobby = this.#ns.lobbies.get(player.lobbyId);
    if (lobby === undefined) throw new Error(`addPlayer: no lobby ${player.lobbyId}`);
    this.putLobby({ ...lobby, playerCount: lobby.playerCount + 1 });
    const ns = this.#ns;
    this.#ns = {
      ...ns,
      players: ns.players.set(player.id, player),
      seats: ns.seats.set(player.lobbyId, (ns.seats.get(player.lobbyId) ?? PMap.empty<string, 1>()).set(player.id, 1)),
      sources: ns.sources.set(player.source, (ns.sources.get(player.source) ?? 0) + 1),
    };
  }

  /** Replace a player whose lobby does not change (status, deadline). */
  updatePlayer(player: Player): void {
    const prev = this.#ns.players.get(player.id);
    if (prev === undefined || prev.lobbyId !== player.lobbyId) throw new Error(`updatePlayer: bad player ${player.id}`);
    if (prev.status !== player.status) {
      const lobby = this.#ns.lobbies.get(player.lobbyId);
      if (lobby !== undefined) {
        const delta = (player.status === 'connected' ? 1 : 0) - (prev.status === 'connected' ? 1 : 0);
        this.putLobby({ ...lobby, connectedCount: lobby.connectedCount + delta });
      }
    }
    this.#ns = { ...this.#ns, players: this.#ns.players.set(player.id, player) };
  }

  /** Free a player's seat; returns the removed player, or undefined if there was none. */
  removePlayer(id: string): Player | undefined {
    const player = this.#ns.players.get(id);
    if (player === undefined) return undefined;
    const lobby = this.#ns.lobbies.get(player.lobbyId);
    if (lobby !== undefined) {
      this.putLobby({
        ...lobby,
        playerCount: lobby.playerCount - 1,
        connectedCount: lobby.connectedCount - (player.status === 'connected' ? 1 : 0),
      });
    }
    const ns = this.#ns;
    const left = (ns.sources.get(player.source) ?? 1) - 1;
    const seated = (ns.seats.get(player.lobbyId) ?? PMap.empty<string, 1>()).delete(id);
    this.#ns = {
      ...ns,
      players: ns.players.delete(id),
      seats: seated.size === 0 ? ns.seats.delete(player.lobbyId) : ns.seats.set(player.lobbyId, seated),
      sources: left === 0 ? ns.sources.delete(player.source) : ns.sources.set(player.source, left),
    };
    return player;
  }

  portSpace(region: string): PortSpace | undefined {
    return this.#ports.get(region);
  }

  setPortSpace(region: string, space: PortSpace): void {
    this.#ports = this.#ports.set(region, space);
  }

  emit(event: MatchEvent): void {
    this.#events.push(event);
  }

  perform(effect: Effect): void {
    this.#effects.push(effect);
  }

  commit<T>(value: T): Decision<T> {
    const world: World = {
      regions: this.base.regions,
      namespaces: this.base.namespaces.set(this.#ns.id, this.#ns),
      ports: this.#ports,
    };
    return { world, effects: this.#effects, events: this.#events, value };
  }
}
