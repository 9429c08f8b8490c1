import type pg from 'pg';
import { dehydrateLobby, dehydrateNamespace, diffWorld, hydrateWorld, playerFields, playerOf, type LobbyDoc, type NamespaceRow, type PlayerFields } from '../../core/persist.js';
import type { Decision } from '../../core/tx.js';
import type { RegionInfo, World } from '../../core/world.js';
import type { LobbyStatePage, LobbyStateWrite, MatchStore, Transaction } from '../../io/index.js';
import { fitStates, statelessLobbies } from '../../core/lobby/state.js';
import { decideGroup, type Pending } from '../group-commit.js';
import { statePage } from '../state-page.js';
import { inTransaction } from './schema.js';

interface Cached {
  readonly revision: number;
  readonly world: World;
}

/** PostgreSQL errors after which the whole transaction may simply be run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 5;

const isRetryable = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && RETRYABLE.has(String((error as { code?: unknown }).code));

/**
 * The matchmaker world in PostgreSQL: a row per namespace, per lobby and per player (`json`
 * documents, see `core/persist.ts`) and one `match_meta` row whose revision every committed
 * decision bumps.
 *
 * A commit locks that row (`SELECT ... FOR UPDATE`) before reading anything, so the decisions of
 * every process sharing the database run one at a time, each on the latest committed world: the
 * cached world is reused when the revision has not moved, and rebuilt from the rows when another
 * process committed since. Only the rows the decisions changed are written. Within a process,
 * `transact` calls queue in memory while a commit is under way, and everything queued by then is
 * decided in order and committed together (group commit); each call resolves once its group is
 * committed. Serialization failures and deadlocks roll back and run again (the decisions with them).
 *
 * Lobby states are rows of their own (`match_lobby_states`), written in the commit of the group
 * that decided them (under the same lock) and deleted in the one that stops their lobby; every
 * process reads them from the database.
 *
 * @example
 * const store = new PgMatchStore(pool, [LOCAL_REGION]);
 */
export class PgMatchStore implements MatchStore {
  readonly #pool: pg.Pool;
  readonly #regions: readonly RegionInfo[];
  #cache: Cached | undefined;
  /** The tail of this process's queue of commits and snapshots. */
  #queue: Promise<unknown> = Promise.resolve();
  /** `transact` calls waiting for the next group commit. */
  #waiting: Pending[] = [];

  constructor(pool: pg.Pool, regions: readonly RegionInfo[]) {
    this.#pool = pool;
    this.#regions = regions;
  }

  async #load(client: pg.PoolClient, revision: number): Promise<Cached> {
    if (this.#cache?.revision === revision) return this.#cache;
    const namespaces = await client.query<{ doc: NamespaceRow }>('SELECT doc FROM match_namespaces');
    const lobbies = await client.query<{ doc: LobbyDoc }>('SELECT doc FROM match_lobbies');
    const players = await client.query<{ lobby_id: string; id: string; doc: PlayerFields }>('SELECT lobby_id, id, doc FROM match_players');
    const seated = players.rows.map((r) => playerOf(r.lobby_id, r.id, r.doc));
    const cached = {
      revision,
      world: hydrateWorld(this.#regions, namespaces.rows.map((r) => r.doc), lobbies.rows.map((r) => r.doc), seated),
    };
    this.#remember(cached);
    return cached;
  }

  #remember(cached: Cached): void {
    if (this.#cache === undefined || this.#cache.revision < cached.revision) this.#cache = cached;
  }

  /** Writes the states a group decided (before its rows: a stop later in the group deletes its lobby's). */
  async #putStates(client: pg.PoolClient, writes: readonly LobbyStateWrite[]): Promise<void> {
    for (const { namespaceId, lobbyId, json } of writes) {
      if (json === undefined) await client.query('DELETE FROM match_lobby_states WHERE lobby_id = $1', [lobbyId]);
      else {
        await client.query(
          `INSERT INTO match_lobby_states (lobby_id, namespace_id, state, bytes) VALUES ($1, $2, $3, $4)
           ON CONFLICT (lobby_id) DO UPDATE SET state = EXCLUDED.state, bytes = EXCLUDED.bytes`,
          [lobbyId, namespaceId, json, Buffer.byteLength(json)],
        );
      }
    }
  }

  async #persist(client: pg.PoolClient, before: World, after: World): Promise<void> {
    const namespaces: { id: string; doc: unknown }[] = [];
    const lobbies: { id: string; namespaceId: string; doc: unknown }[] = [];
    const seated: { lobbyId: string; id: string; doc: PlayerFields }[] = [];
    const unseated: { lobbyId: string; id: string }[] = [];
    const gone: string[] = [];
    const deleted: string[] = [];
    const stateless: string[] = [];
    for (const change of diffWorld(before, after).namespaces) {
      if (change.after === undefined) {
        gone.push(change.id);
        continue;
      }
      stateless.push(...statelessLobbies(change));
      if (change.rowChanged) namespaces.push({ id: change.id, doc: dehydrateNamespace(change.after) });
      for (const lobby of change.upserted) lobbies.push({ id: lobby.id, namespaceId: lobby.namespaceId, doc: dehydrateLobby(lobby) });
      deleted.push(...change.deleted);
      for (const p of change.seated) seated.push({ lobbyId: p.lobbyId, id: p.id, doc: playerFields(p) });
      for (const p of change.unseated) unseated.push({ lobbyId: p.lobbyId, id: p.id });
    }
    if (stateless.length > 0) await client.query('DELETE FROM match_lobby_states WHERE lobby_id = ANY($1::text[])', [stateless]);
    if (gone.length > 0) {
      await client.query('DELETE FROM match_lobby_states WHERE namespace_id = ANY($1::text[])', [gone]);
      await client.query('DELETE FROM match_namespaces WHERE id = ANY($1::text[])', [gone]);
      await client.query('DELETE FROM match_players WHERE lobby_id IN (SELECT id FROM match_lobbies WHERE namespace_id = ANY($1::text[]))', [gone]);
      await client.query('DELETE FROM match_lobbies WHERE namespace_id = ANY($1::text[])', [gone]);
    }
    if (deleted.length > 0) {
      await client.query('DELETE FROM match_players WHERE lobby_id = ANY($1::text[])', [deleted]);
      await client.query('DELETE FROM match_lobbies WHERE id = ANY($1::text[])', [deleted]);
    }
    if (namespaces.length > 0) {
      await client.query(
        `INSERT INTO match_namespaces (id, doc) SELECT e->>'id', e->'doc' FROM json_array_elements($1::json) e
         ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc`,
        [JSON.stringify(namespaces)],
      );
    }
    if (lobbies.length > 0) {
      await client.query(
        `INSERT INTO match_lobbies (id, namespace_id, doc) SELECT e->>'id', e->>'namespaceId', e->'doc' FROM json_array_elements($1::json) e
         ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc`,
        [JSON.stringify(lobbies)],
      );
    }
    if (unseated.length > 0) {
      await client.query(
        `DELETE FROM match_players p USING json_array_elements($1::json) e WHERE p.lobby_id = e->>'lobbyId' AND p.id = e->>'id'`,
        [JSON.stringify(unseated)],
      );
    }
    if (seated.length > 0) {
      await client.query(
        `INSERT INTO match_players (lobby_id, id, doc) SELECT e->>'lobbyId', e->>'id', e->'doc' FROM json_array_elements($1::json) e
         ON CONFLICT (lobby_id, id) DO UPDATE SET doc = EXCLUDED.doc`,
        [JSON.stringify(seated)],
      );
    }
  }

  /** Decides a group on the latest committed world and commits it; returns how to settle its calls. */
  async #attempt(queue: readonly Pending[]): Promise<() => void> {
    let committed: Cached | undefined;
    const settle = await inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<{ revision: string }>('SELECT revision FROM match_meta WHERE id = 1 FOR UPDATE');
      const base = await this.#load(client, Number(rows[0]?.revision ?? 0));
      const group = decideGroup(base.world, queue);
      await this.#putStates(client, group.states);
      if (group.world === base.world) return group.settle;
      await this.#persist(client, base.world, group.world);
      committed = { revision: base.revision + 1, world: group.world };
      await client.query('UPDATE match_meta SET revision = $1 WHERE id = 1', [committed.revision]);
      return group.settle;
    });
    if (committed !== undefined) this.#remember(committed);
    return settle;
  }

  /** Commits everything waiting now as one group, retrying conflicts; every call is settled or rejected. */
  async #commitWaiting(): Promise<void> {
    const queue = this.#waiting;
    if (queue.length === 0) return;
    this.#waiting = [];
    for (let attempt = 1; ; attempt++) {
      try {
        (await this.#attempt(queue))();
        return;
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !isRetryable(error)) {
          for (const pending of queue) pending.reject(error);
          return;
        }
      }
    }
  }

  #enqueue<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  snapshot(): Promise<World> {
    return this.#enqueue(() =>
      inTransaction(this.#pool, async (client) => {
        const { rows } = await client.query<{ revision: string }>('SELECT revision FROM match_meta WHERE id = 1');
        return (await this.#load(client, Number(rows[0]?.revision ?? 0))).world;
      }, 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY'),
    );
  }

  transact<T>(decide: (world: World) => Transaction<T>): Promise<{ readonly result: T; readonly decision?: Decision<unknown> }> {
    return new Promise((resolve, reject) => {
      // The first call waiting schedules the group's commit; later ones join it until it starts.
      if (this.#waiting.length === 0) void this.#enqueue(() => this.#commitWaiting());
      this.#waiting.push({ decide, resolve: resolve as Pending['resolve'], reject });
    });
  }

  async lobbyState(lobbyId: string): Promise<string | undefined> {
    const { rows } = await this.#pool.query<{ state: string }>('SELECT state FROM match_lobby_states WHERE lobby_id = $1', [lobbyId]);
    return rows[0]?.state;
  }

  /** The sizes, then the texts of those that fit, in one repeatable-read transaction (no commit falls between them). */
  lobbyStates(lobbyIds: readonly string[], maxBytes: number): Promise<LobbyStatePage> {
    return inTransaction(this.#pool, async (client) => {
      const sizes = await client.query<{ lobby_id: string; bytes: number }>('SELECT lobby_id, bytes FROM match_lobby_states WHERE lobby_id = ANY($1::text[])', [lobbyIds]);
      const bytes = new Map(sizes.rows.map((r) => [r.lobby_id, r.bytes]));
      const { included, omitted } = fitStates(lobbyIds, (id) => bytes.get(id), maxBytes);
      const texts = new Map<string, string>();
      if (included.length > 0) {
        const read = await client.query<{ lobby_id: string; state: string }>('SELECT lobby_id, state FROM match_lobby_states WHERE lobby_id = ANY($1::text[])', [included]);
        for (const r of read.rows) texts.set(r.lobby_id, r.state);
      }
      return statePage(included, omitted, texts);
    }, 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
  }
}
