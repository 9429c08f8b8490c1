/**
 * Lobbies that stopped recently: each stop the matchmaker commits is kept with the last lines of
 * the lobby's log (its game server's output and Tavern's own lines), within the bounds of
 * `core/lobby/stopped.ts`, and listed for `tavern lobbies list` and the dashboard.
 */
import { lastLines, STOPPED_LOG_LINES, STOPPED_MAX_AGE_MS, STOPPED_PER_NAMESPACE } from '../core/lobby/stopped.js';
import { optional } from '../core/optional.js';
import type { Decision } from '../core/tx.js';
import { LOG_STREAMS, type LogStore } from '../io/catalog.js';
import type { LobbyStop, StopRecorder, StoppedLobbyRecord, StoppedLobbyStore } from '../io/stopped-lobbies.js';

/** The most stops one listing returns. */
export const STOPPED_LIST_MAX = 2 * STOPPED_PER_NAMESPACE;

/**
 * The stops a committed decision made (its `lobby-stopped` events), as the recorder takes them.
 *
 * @example
 * for (const stop of stopsIn(decision)) await recorder.record(stop);
 */
export const stopsIn = (decision: Decision<unknown>): LobbyStop[] => {
  // A plain loop: every committed decision (each find's) passes here, and nearly none stops a lobby.
  const stops: LobbyStop[] = [];
  for (const event of decision.events) {
    if (event.type !== 'lobby-stopped') continue;
    const lobby = decision.world.namespaces.get(event.namespaceId)?.lobbies.get(event.lobbyId);
    if (lobby === undefined) continue;
    const lc = lobby.lifecycle;
    stops.push({
      lobbyId: lobby.id, namespaceId: lobby.namespaceId, versionId: lobby.versionId, gameMode: lobby.gameMode, region: lobby.region,
      createdAt: lobby.createdAt, ...optional('readyAt', lc.status === 'stopped' ? lc.readyAt : undefined),
      stoppedAt: event.at, reason: event.reason, failed: event.failed, ...optional('exitCode', event.exitCode),
    });
  }
  return stops;
};

export interface StoppedLobbiesDeps {
  readonly store: StoppedLobbyStore;
  readonly catalog: LogStore;
}

/**
 * @example
 * const stopped = new StoppedLobbies({ store: stores.stopped, catalog });
 * const matchmaker = new Matchmaker({ ..., stops: stopped });
 * await stopped.list(nsId, { failedOnly: true, limit: 20 }, clock.now());
 */
export class StoppedLobbies implements StopRecorder {
  readonly #deps: StoppedLobbiesDeps;

  constructor(deps: StoppedLobbiesDeps) {
    this.#deps = deps;
  }

  /**
   * Keeps a stop with the newest lines of the lobby's log, and prunes its namespace's stops.
   *
   * @effects catalog (lastLogs), stopped-lobby store (putStoppedLobby)
   */
  async record(stop: LobbyStop): Promise<void> {
    const tails = await Promise.all(LOG_STREAMS.map(async (s) => [s, (await this.#deps.catalog.lastLogs(stop.lobbyId, s, STOPPED_LOG_LINES)).lines] as const));
    const record: StoppedLobbyRecord = { ...stop, lastLines: lastLines(tails, STOPPED_LOG_LINES) };
    await this.#deps.store.putStoppedLobby(record, { perNamespace: STOPPED_PER_NAMESPACE, since: stop.stoppedAt - STOPPED_MAX_AGE_MS });
  }

  /**
   * A namespace's stops of the last {@link STOPPED_MAX_AGE_MS} before `now`, newest first.
   *
   * @effects stopped-lobby store (stoppedLobbies)
   */
  list(namespaceId: string, query: { readonly failedOnly: boolean; readonly limit: number }, now: number): Promise<readonly StoppedLobbyRecord[]> {
    return this.#deps.store.stoppedLobbies(namespaceId, { since: now - STOPPED_MAX_AGE_MS, failedOnly: query.failedOnly, limit: Math.min(query.limit, STOPPED_LIST_MAX) });
  }

  /**
   * What is kept of one lobby, if it stopped within {@link STOPPED_MAX_AGE_MS} before `now`.
   *
   * @effects stopped-lobby store (stoppedLobby)
   */
  async find(lobbyId: string, now: number): Promise<StoppedLobbyRecord | undefined> {
    const record = await this.#deps.store.stoppedLobby(lobbyId);
    return record !== undefined && record.stoppedAt >= now - STOPPED_MAX_AGE_MS ? record : undefined;
  }
}
