import type { Effect } from './effects.js';
import type { MatchEvent } from './events.js';
import { isActive, isIdle } from './lobby/flags.js';
import { type Lobby, type Player, reviseLobby } from './lobby/lobby.js';
import { hasSeatTimer, lifecycleDue } from './lobby/timers.js';
import { hashKey, type PMap } from './pmap.js';
import type { PortSpace } from './ports/index.js';
import { reindex, type RoutingIndex } from './routing/index.js';
import type { NamespaceState, World } from './world.js';

/** A decision's result: the next world, the effects to perform, the events established, and a value. */
export interface Decision<T> {
  readonly world: World;
  readonly effects: readonly Effect[];
  readonly events: readonly MatchEvent[];
  readonly value: T;
}

type Fields = Pick<NamespaceState, 'settings' | 'currentVersionId' | 'versions' | 'captcha' | 'routing'>;

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** A lobby id set after one lobby changed membership (`was` → `is`); itself when it did not. `hash` is the id's. */
const track = (set: PMap<string, 1>, id: string, hash: number, was: boolean, is: boolean): PMap<string, 1> =>
  was === is ? set : is ? set.set(id, 1, hash) : set.delete(id, hash);

/** The timed lobbies after one lobby's due time changed (`was` → `is`, undefined: none). */
const retime = (timed: PMap<string, number>, id: string, hash: number, was: number | undefined, is: number | undefined): PMap<string, number> =>
  was === is ? timed : is === undefined ? timed.delete(id, hash) : timed.set(id, is, hash);

const isIdleActive = (lobby: Lobby): boolean => isActive(lobby) && isIdle(lobby);

/** `hashKey` of the last key asked for, remembered: a decision works on one lobby (and one player) many times. */
class LastHash {
  #key: string | undefined;
  #hash = 0;

  of(key: string): number {
    if (key !== this.#key) {
      this.#key = key;
      this.#hash = hashKey(key);
    }
    return this.#hash;
  }
}

/**
 * The working copy of one decision: it reads from the world it started with and records every
 * change through methods that keep the namespace's derived data (routing index, active lobby count,
 * timed, seat-timed and idle lobby sets, per-client seat counts, lobby player counts) consistent.
 * It lives only inside one core call; `commit` turns it into the next immutable world, sharing
 * everything untouched. The namespace record is rebuilt once per decision, not once per change.
 *
 * @example
 * const tx = new Tx(world, namespaceOf(world, 'ns-1'), now);
 * tx.putLobby(lobby);
 * return tx.commit(lobby.id);
 */
export class Tx {
  #base: NamespaceState;
  #lobbies: PMap<string, Lobby>;
  #routing: RoutingIndex;
  #sources: PMap<string, number>;
  #active: number;
  #timed: PMap<string, number>;
  #seatTimed: PMap<string, 1>;
  #idle: PMap<string, Lobby>;
  #view: NamespaceState | undefined;
  #ports: PMap<string, PortSpace>;
  readonly #effects: Effect[] = [];
  readonly #events: MatchEvent[] = [];
  readonly #lobbyHash = new LastHash();
  readonly #playerHash = new LastHash();

  constructor(
    private readonly world: World,
    ns: NamespaceState,
    readonly now: number,
  ) {
    this.#base = ns;
    this.#view = ns;
    this.#lobbies = ns.lobbies;
    this.#routing = ns.routing;
    this.#sources = ns.sources;
    this.#active = ns.activeLobbies;
    this.#timed = ns.timedLobbies;
    this.#seatTimed = ns.seatTimedLobbies;
    this.#idle = ns.idleLobbies;
    this.#ports = world.ports;
  }

  /** The namespace as it stands in this decision so far. */
  get ns(): NamespaceState {
    if (this.#view !== undefined) return this.#view;
    const b = this.#base;
    // Written out rather than spread: V8 builds this with one hidden class, much faster on a hot path.
    const view: Writable<NamespaceState> = {
      id: b.id,
      settings: b.settings,
      versions: b.versions,
      lobbies: this.#lobbies,
      routing: this.#routing,
      sources: this.#sources,
      captcha: b.captcha,
      activeLobbies: this.#active,
      timedLobbies: this.#timed,
      seatTimedLobbies: this.#seatTimed,
      idleLobbies: this.#idle,
    };
    if (b.currentVersionId !== undefined) view.currentVersionId = b.currentVersionId;
    this.#view = view;
    return view;
  }

  lobby(id: string): Lobby | undefined {
    return this.#lobbies.get(id, this.#lobbyHash.of(id));
  }

  /** The players seated in a lobby. */
  playersOf(lobbyId: string): Player[] {
    return [...(this.#lobbies.get(lobbyId)?.players.values() ?? [])];
  }

  /** Replace the namespace's own fields (not lobbies or players: use the methods below). */
  patch(fields: Partial<Fields>): void {
    const { routing, ...rest } = fields;
    if (routing !== undefined) this.#routing = routing;
    this.#base = { ...this.#base, ...rest };
    this.#view = undefined;
  }

  /** Insert or replace a lobby; keeps the routing index, the active count and the lobby sets in step. */
  putLobby(next: Lobby): void {
    this.#replace(this.lobby(next.id), next);
  }

  /** {@link putLobby} when the caller already holds the lobby as it stands (`prev`). */
  #replace(prev: Lobby | undefined, next: Lobby): void {
    const id = next.id;
    const h = this.#lobbyHash.of(id);
    this.#active += (isActive(next) ? 1 : 0) - (prev !== undefined && isActive(prev) ? 1 : 0);
    this.#timed = retime(this.#timed, id, h, prev === undefined ? undefined : lifecycleDue(prev), lifecycleDue(next));
    this.#seatTimed = track(this.#seatTimed, id, h, prev !== undefined && hasSeatTimer(prev), hasSeatTimer(next));
    this.#idle = isIdleActive(next) ? this.#idle.set(id, next, h) : prev !== undefined && isIdleActive(prev) ? this.#idle.delete(id, h) : this.#idle;
    this.#lobbies = this.#lobbies.set(id, next, h);
    this.#routing = reindex(this.#routing, prev, next, this.#base.currentVersionId, h);
    this.#view = undefined;
  }

  /** Drop a stopped lobby from the working set. */
  forgetLobby(id: string): void {
    const h = this.#lobbyHash.of(id);
    const prev = this.#lobbies.get(id, h);
    if (prev === undefined) return;
    this.#active -= isActive(prev) ? 1 : 0;
    this.#timed = retime(this.#timed, id, h, lifecycleDue(prev), undefined);
    this.#seatTimed = track(this.#seatTimed, id, h, hasSeatTimer(prev), false);
    if (isIdleActive(prev)) this.#idle = this.#idle.delete(id, h);
    this.#lobbies = this.#lobbies.delete(id, h);
    this.#routing = reindex(this.#routing, prev, undefined, this.#base.currentVersionId, h);
    this.#view = undefined;
  }

  /** Seat a new player in its lobby (which must exist): lobby counts, client count and index follow. */
  addPlayer(player: Player): void {
    const lobby = this.lobby(player.lobbyId);
    if (lobby === undefined) throw new Error(`addPlayer: no lobby ${player.lobbyId}`);
    const players = lobby.players.set(player.id, player, this.#playerHash.of(player.id));
    if (players.size === lobby.players.size) throw new Error(`addPlayer: player id ${player.id} is already taken`);
    this.#replace(lobby, reviseLobby(lobby, { players, playerCount: players.size }));
    const sh = hashKey(player.source);
    this.#sources = this.#sources.set(player.source, (this.#sources.get(player.source, sh) ?? 0) + 1, sh);
  }

  /** Replace a seated player (status, deadline). */
  updatePlayer(player: Player): void {
    const lobby = this.lobby(player.lobbyId);
    const h = this.#playerHash.of(player.id);
    const prev = lobby?.players.get(player.id, h);
    if (lobby === undefined || prev === undefined) throw new Error(`updatePlayer: no player ${player.id} in ${player.lobbyId}`);
    const delta = (player.status === 'connected' ? 1 : 0) - (prev.status === 'connected' ? 1 : 0);
    this.#replace(lobby, reviseLobby(lobby, { players: lobby.players.set(player.id, player, h), connectedCount: lobby.connectedCount + delta }));
  }

  /** Free a player's seat; returns the removed player, or undefined if there was none. */
  removePlayer(lobbyId: string, id: string): Player | undefined {
    const lobby = this.lobby(lobbyId);
    const h = this.#playerHash.of(id);
    const player = lobby?.players.get(id, h);
    if (lobby === undefined || player === undefined) return undefined;
    const players = lobby.players.delete(id, h);
    this.#replace(
      lobby,
      reviseLobby(lobby, { players, playerCount: players.size, connectedCount: lobby.connectedCount - (player.status === 'connected' ? 1 : 0) }),
    );
    const sh = hashKey(player.source);
    const left = (this.#sources.get(player.source, sh) ?? 1) - 1;
    this.#sources = left === 0 ? this.#sources.delete(player.source, sh) : this.#sources.set(player.source, left, sh);
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
    const ns = this.ns;
    const world: World = {
      regions: this.world.regions,
      namespaces: this.world.namespaces.set(ns.id, ns),
      ports: this.#ports,
    };
    return { world, effects: this.#effects, events: this.#events, value };
  }
}
