/**
 * A game's lobbies as its developer sees them: the live ones of a namespace (wire.md §2.3), one
 * found within the game (stopped lobbies are kept for a while), its newest log lines (§2.4), and
 * stopping it.
 */
import { summarize, type LobbySummary } from '../core/analytics.js';
import { matchError, type MatchError } from '../core/errors.js';
import { isActive } from '../core/lobby/flags.js';
import type { Lobby } from '../core/lobby/lobby.js';
import { err, ok, type Result } from '../core/result.js';
import type { LogStore, NamespaceStore, LogPage, LogStream } from '../io/catalog.js';
import type { StoppedLobbyRecord } from '../io/stopped-lobbies.js';
import type { Matchmaker } from './matchmaker.js';
import type { StoppedLobbies } from './stopped-lobbies.js';

/** Lines of a log tail (a read without a watch index). */
export const TAIL_LINES = 256;

/**
 * The namespace's active lobbies, oldest first, as analytics summaries (`is_outdated` against the
 * current version).
 *
 * @effects matchmaker (snapshot)
 * @example
 * (await liveLobbies({ matchmaker }, ns.id)).map((s) => s.totalPlayerCount)
 */
export async function liveLobbies(deps: { readonly matchmaker: Pick<Matchmaker, 'snapshot'> }, namespaceId: string): Promise<LobbySummary[]> {
  const state = (await deps.matchmaker.snapshot()).namespaces.get(namespaceId);
  const lobbies = [...(state?.lobbies.values() ?? [])].filter(isActive);
  lobbies.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  return lobbies.map((l) => summarize(l, state?.currentVersionId));
}

type FindDeps = {
  readonly catalog: NamespaceStore;
  readonly matchmaker: Pick<Matchmaker, 'snapshot'>;
};

/**
 * The lobby, if it belongs to one of the game's namespaces (`LOBBY_NOT_FOUND` otherwise).
 *
 * @effects matchmaker (snapshot), catalog (listNamespaces)
 * @example
 * const r = await findGameLobby(deps, game.id, lobbyId); if (r.ok) r.value.namespaceId
 */
export async function findGameLobby(deps: FindDeps, gameId: string, lobbyId: string): Promise<Result<Lobby, MatchError>> {
  const world = await deps.matchmaker.snapshot();
  for (const ns of await deps.catalog.listNamespaces(gameId)) {
    const lobby = world.namespaces.get(ns.id)?.lobbies.get(lobbyId);
    if (lobby !== undefined) return ok(lobby);
  }
  return err(matchError('LOBBY_NOT_FOUND'));
}

/**
 * What is kept of a stopped lobby the matchmaker already forgot, if it belongs to one of the
 * game's namespaces (`LOBBY_NOT_FOUND` otherwise, and when nothing is kept): its log stays
 * readable while it is listed.
 *
 * @effects stopped lobbies (find), catalog (getNamespace)
 * @example
 * const r = await findStoppedGameLobby(deps, game.id, lobbyId, now);
 */
export async function findStoppedGameLobby(
  deps: { readonly catalog: NamespaceStore; readonly stoppedLobbies?: Pick<StoppedLobbies, 'find'> },
  gameId: string,
  lobbyId: string,
  now: number,
): Promise<Result<StoppedLobbyRecord, MatchError>> {
  const record = await deps.stoppedLobbies?.find(lobbyId, now);
  const ns = record === undefined ? undefined : await deps.catalog.getNamespace(record.namespaceId);
  return record !== undefined && ns?.gameId === gameId ? ok(record) : err(matchError('LOBBY_NOT_FOUND'));
}

/**
 * Stops one of the game's lobbies: whether this call stopped it (false when it was already
 * stopping or stopped); `LOBBY_NOT_FOUND` when the game has no such lobby.
 *
 * @effects matchmaker (snapshot, stopLobby), catalog (listNamespaces)
 * @example
 * const r = await stopGameLobby(deps, game.id, lobbyId); // ok(true)
 */
export async function stopGameLobby(
  deps: FindDeps & { readonly matchmaker: Pick<Matchmaker, 'stopLobby'> },
  gameId: string,
  lobbyId: string,
): Promise<Result<boolean, MatchError>> {
  const found = await findGameLobby(deps, gameId, lobbyId);
  if (!found.ok) return found;
  if (!isActive(found.value)) return ok(false);
  const stopped = await deps.matchmaker.stopLobby({ namespaceId: found.value.namespaceId, lobbyId });
  return ok(stopped.ok);
}

/**
 * Closes one of the game's lobbies to new players, or opens it again; `LOBBY_NOT_FOUND` when the
 * game has no such lobby, the matchmaker's refusal when it is not running.
 *
 * @effects matchmaker (snapshot, setClosed), catalog (listNamespaces)
 * @example
 * const r = await setGameLobbyClosed(deps, game.id, lobbyId, true);
 */
export async function setGameLobbyClosed(
  deps: FindDeps & { readonly matchmaker: Pick<Matchmaker, 'setClosed'> },
  gameId: string,
  lobbyId: string,
  closed: boolean,
): Promise<Result<undefined, MatchError>> {
  const found = await findGameLobby(deps, gameId, lobbyId);
  if (!found.ok) return found;
  return deps.matchmaker.setClosed({ namespaceId: found.value.namespaceId, lobbyId }, closed);
}

/**
 * The newest {@link TAIL_LINES} lines of a lobby stream, old to new, and the sequence number to
 * watch from.
 *
 * @effects catalog (lastLogs)
 * @example
 * const { lines, last } = await tailLogs({ catalog }, lobbyId, 'std_out');
 */
export function tailLogs(deps: { readonly catalog: LogStore }, lobbyId: string, stream: LogStream): Promise<LogPage> {
  return deps.catalog.lastLogs(lobbyId, stream, TAIL_LINES);
}
