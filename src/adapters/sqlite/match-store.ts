import type Database from 'better-sqlite3';
import { dehydrateLobby, dehydrateNamespace, diffWorld, hydrateWorld, playerFieldsJson, playerOf, type LobbyDoc, type NamespaceRow, type PlayerFields } from '../../core/persist.js';
import type { Player } from '../../core/lobby/lobby.js';
import type { Decision } from '../../core/tx.js';
import type { RegionInfo, World } from '../../core/world.js';
import type { LobbyStatePage, LobbyStateWrite, MatchStore, Transaction } from '../../io/index.js';
import { fitStates, statelessLobbies } from '../../core/lobby/state.js';
import { decideGroup, GroupQueue, type Flushed, type Pending } from '../group-commit.js';
import { statePage } from '../state-page.js';

interface Cached {
  readonly revision: number;
  readonly world: World;
}

/** Seats written by one statement (a group commit seats dozens: a statement each took ~13 % longer). */
const SEAT_CHUNK = 8;

const SQL = {
  revision: 'SELECT revision FROM match_meta WHERE id = 1',
  bump: 'UPDATE match_meta SET revision = ? WHERE id = 1',
  namespaces: 'SELECT doc FROM match_namespaces',
  lobbies: 'SELECT doc FROM match_lobbies',
  players: 'SELECT lobby_id, id, doc FROM match_players',
  putNamespace: 'INSERT INTO match_namespaces (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc',
  deleteNamespace: 'DELETE FROM match_namespaces WHERE id = ?',
  deleteNamespaceLobbies: 'DELETE FROM match_lobbies WHERE namespace_id = ?',
  deleteNamespacePlayers: 'DELETE FROM match_players WHERE lobby_id IN (SELECT id FROM match_lobbies WHERE namespace_id = ?)',
  putLobby: 'INSERT INTO match_lobbies (id, namespace_id, doc) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc',
  deleteLobby: 'DELETE FROM match_lobbies WHERE id = ?',
  deleteLobbyPlayers: 'DELETE FROM match_players WHERE lobby_id = ?',
  putPlayer: 'INSERT INTO match_players (lobby_id, id, doc) VALUES (?, ?, ?) ON CONFLICT (lobby_id, id) DO UPDATE SET doc = excluded.doc',
  putPlayers: `INSERT INTO match_players (lobby_id, id, doc) VALUES ${Array.from({ length: SEAT_CHUNK }, () => '(?, ?, ?)').join(', ')}
    ON CONFLICT (lobby_id, id) DO UPDATE SET doc = excluded.doc`,
  deletePlayer: 'DELETE FROM match_players WHERE lobby_id = ? AND id = ?',
  putState: `INSERT INTO match_lobby_states (lobby_id, namespace_id, state, bytes) VALUES (?, ?, ?, ?)
    ON CONFLICT (lobby_id) DO UPDATE SET state = excluded.state, bytes = excluded.bytes`,
  deleteState: 'DELETE FROM match_lobby_states WHERE lobby_id = ?',
  deleteNamespaceStates: 'DELETE FROM match_lobby_states WHERE namespace_id = ?',
  state: 'SELECT state FROM match_lobby_states WHERE lobby_id = ?',
  stateSizes: 'SELECT lobby_id, bytes FROM match_lobby_states WHERE lobby_id IN (SELECT value FROM json_each(?))',
  states: 'SELECT lobby_id, state FROM match_lobby_states WHERE lobby_id IN (SELECT value FROM json_each(?))',
} as const;

type Statements = { readonly [K in keyof typeof SQL]: Database.Statement };

/**
 * The matchmaker world in a SQLite database: a row per namespace, per lobby and per player (JSON
 * documents, see `core/persist.ts`; a player's key is in its columns, not its document) and a
 * revision that every committed decision bumps. The hydrated world is cached with its revision; a
 * commit reloads it only when another connection (another process on the same file) committed
 * since.
 *
 * Group commit: the `transact` calls of one turn of the event loop are decided in order and
 * written in one transaction, which holds the write lock (`BEGIN IMMEDIATE`) from reading the
 * revision to commit, so decisions are serialised across processes; only the rows the group
 * changed are written, and each call resolves once the group is committed. A group commit never
 * waits for the lock inside SQLite (that would stop the event loop): it takes the lock with no
 * busy timeout and, when another connection holds it, tries again a millisecond later, up to the
 * connection's own busy timeout (see `GroupQueue`).
 *
 * Lobby states are rows of their own (`match_lobby_states`), written by the group commit that
 * decided them and deleted in the one that stops their lobby; they are read from the database
 * every time (several processes may share the file), never cached.
 *
 * @example
 * const store = new SqliteMatchStore(openDatabase('.tavern'), [LOCAL_REGION]);
 */
export class SqliteMatchStore implements MatchStore {
  readonly #regions: readonly RegionInfo[];
  readonly #q: Statements;
  readonly #group: GroupQueue;
  /** `PRAGMA busy_timeout` to 0 around a group commit, and back to the connection's. */
  readonly #noWait: Database.Statement;
  readonly #wait: Database.Statement;
  readonly #reload: Database.Transaction<() => Cached>;
  readonly #readStates: Database.Transaction<(lobbyIds: readonly string[], maxBytes: number) => LobbyStatePage>;
  readonly #commitGroup: Database.Transaction<(queue: readonly Pending[]) => { settle: () => void; next: Cached }>;
  #cache: Cached | undefined;
  /** The parameters of a {@link SEAT_CHUNK}-seat insert, reused. */
  readonly #seatArgs: string[] = new Array<string>(3 * SEAT_CHUNK).fill('');
  /** Set by `flush` before the database closes: the last commit waits for the lock in SQLite. */
  #closing = false;

  constructor(db: Database.Database, regions: readonly RegionInfo[]) {
    this.#regions = regions;
    const busyTimeoutMs = Number(db.pragma('busy_timeout', { simple: true }));
    this.#group = new GroupQueue((queue) => this.#commit(queue), { busyTimeoutMs });
    this.#noWait = db.prepare('PRAGMA busy_timeout = 0');
    this.#wait = db.prepare(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    this.#q = Object.fromEntries(Object.entries(SQL).map(([k, v]) => [k, db.prepare(v)])) as Statements;
    this.#reload = db.transaction(() => this.#current());
    this.#readStates = db.transaction((lobbyIds: readonly string[], maxBytes: number) => this.#pageOf(lobbyIds, maxBytes));
    this.#commitGroup = db.transaction((queue: readonly Pending[]) => {
      const base = this.#current();
      const group = decideGroup(base.world, queue);
      for (const write of group.states) this.#putState(write);
      if (group.world === base.world) return { settle: group.settle, next: base };
      this.#persist(base.world, group.world);
      const revision = base.revision + 1;
      this.#q.bump.run(revision);
      return { settle: group.settle, next: { revision, world: group.world } };
    });
  }

  /** Commits every queued call now, waiting for the lock if need be (before the database closes). */
  flush(): void {
    this.#closing = true;
    this.#group.drain();
  }

  /** The committed world, reloaded if the revision moved; call inside a transaction. */
  #current(): Cached {
    const { revision } = this.#q.revision.get() as { revision: number };
    if (this.#cache?.revision === revision) return this.#cache;
    const namespaces = (this.#q.namespaces.all() as { doc: string }[]).map((r) => JSON.parse(r.doc) as NamespaceRow);
    const lobbies = (this.#q.lobbies.all() as { doc: string }[]).map((r) => JSON.parse(r.doc) as LobbyDoc);
    const players = (this.#q.players.all() as { lobby_id: string; id: string; doc: string }[]).map((r) => playerOf(r.lobby_id, r.id, JSON.parse(r.doc) as PlayerFields));
    this.#cache = { revision, world: hydrateWorld(this.#regions, namespaces, lobbies, players) };
    return this.#cache;
  }

  #putState({ namespaceId, lobbyId, json }: LobbyStateWrite): void {
    if (json === undefined) this.#q.deleteState.run(lobbyId);
    else this.#q.putState.run(lobbyId, namespaceId, json, Buffer.byteLength(json));
  }

  #persist(before: World, after: World): void {
    for (const change of diffWorld(before, after).namespaces) {
      if (change.after === undefined) {
        this.#q.deleteNamespace.run(change.id);
        this.#q.deleteNamespacePlayers.run(change.id);
        this.#q.deleteNamespaceLobbies.run(change.id);
        this.#q.deleteNamespaceStates.run(change.id);
        continue;
      }
      for (const id of statelessLobbies(change)) this.#q.deleteState.run(id);
      if (change.rowChanged) this.#q.putNamespace.run(change.id, JSON.stringify(dehydrateNamespace(change.after)));
      for (const id of change.deleted) {
        this.#q.deleteLobbyPlayers.run(id);
        this.#q.deleteLobby.run(id);
      }
      for (const lobby of change.upserted) this.#q.putLobby.run(lobby.id, lobby.namespaceId, JSON.stringify(dehydrateLobby(lobby)));
      for (const p of change.unseated) this.#q.deletePlayer.run(p.lobbyId, p.id);
      this.#putPlayers(change.seated);
    }
  }

  #putPlayers(seated: readonly Player[]): void {
    const args = this.#seatArgs;
    let i = 0;
    for (; i + SEAT_CHUNK <= seated.length; i += SEAT_CHUNK) {
      for (let j = 0; j < SEAT_CHUNK; j++) {
        const p = seated[i + j] as Player;
        args[3 * j] = p.lobbyId;
        args[3 * j + 1] = p.id;
        args[3 * j + 2] = playerFieldsJson(p);
      }
      this.#q.putPlayers.run(args);
    }
    for (; i < seated.length; i++) {
      const p = seated[i] as Player;
      this.#q.putPlayer.run(p.lobbyId, p.id, playerFieldsJson(p));
    }
  }

  #commit(queue: readonly Pending[]): Flushed {
    let committed: { settle: () => void; next: Cached };
    if (this.#closing) committed = this.#commitGroup.immediate(queue);
    else {
      this.#noWait.get();
      try {
        committed = this.#commitGroup.immediate(queue);
      } catch (error) {
        const { code } = error as { code?: unknown };
        if (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) return 'busy';
        throw error;
      } finally {
        this.#wait.get();
      }
    }
    this.#cache = committed.next;
    committed.settle();
    return 'committed';
  }

  snapshot(): Promise<World> {
    return attempt(() => {
      // The cached world when the revision has not moved (one read); else a consistent reload.
      const { revision } = this.#q.revision.get() as { revision: number };
      if (this.#cache?.revision === revision) return this.#cache.world;
      return this.#reload.deferred().world;
    });
  }

  transact<T>(decide: (world: World) => Transaction<T>): Promise<{ readonly result: T; readonly decision?: Decision<unknown> }> {
    return this.#group.enqueue(decide);
  }

  lobbyState(lobbyId: string): Promise<string | undefined> {
    return attempt(() => (this.#q.state.get(lobbyId) as { state: string } | undefined)?.state);
  }

  lobbyStates(lobbyIds: readonly string[], maxBytes: number): Promise<LobbyStatePage> {
    return attempt(() => this.#readStates.deferred(lobbyIds, maxBytes));
  }

  /** The sizes, then the texts of those that fit (one read transaction: no commit falls between them). */
  #pageOf(lobbyIds: readonly string[], maxBytes: number): LobbyStatePage {
    const sizes = new Map((this.#q.stateSizes.all(JSON.stringify(lobbyIds)) as { lobby_id: string; bytes: number }[]).map((r) => [r.lobby_id, r.bytes]));
    const { included, omitted } = fitStates(lobbyIds, (id) => sizes.get(id), maxBytes);
    const texts = new Map((this.#q.states.all(JSON.stringify(included)) as { lobby_id: string; state: string }[]).map((r) => [r.lobby_id, r.state]));
    return statePage(included, omitted, texts);
  }
}

/** A synchronous read as a promise (rejected, not thrown, when it fails). */
const attempt = <T>(read: () => T): Promise<T> => {
  try {
    return Promise.resolve(read());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
};
