/**
 * Where lobbies can start now: facts the services read before each decision (from the runtime,
 * and from this instance's start history) and hand to the core in the context. `find`, `create`
 * and the idle plan read them and answer with the refusal or leave out what cannot start, so no
 * service ever overrules an admission.
 */
import { type MatchError, matchError } from './errors.js';
import { backoffOf, type StartBackoffs } from './lobby/backoff.js';
import type { Lobby } from './lobby/lobby.js';

/**
 * What a decision knows of the hosting side.
 *
 * @example
 * const ctx: Ctx = { now, seed, hosting: { canStartIn: () => runtimeUp, backoff } };
 */
export interface Hosting {
  /**
   * Whether a lobby can start in `region` now: a runtime is configured there and answers. One
   * answer for every region while a runtime reports one health (Docker); a runtime that reports
   * per region answers per region, and nothing in the core changes.
   */
  readonly canStartIn: (region: string) => boolean;
  /** This instance's start back-off, read at the decision's `now`. */
  readonly backoff: StartBackoffs;
}

/** What a new lobby would start as. */
export type StartTarget = Pick<Lobby, 'namespaceId' | 'versionId' | 'gameMode' | 'region'>;

/**
 * Whether a new lobby of `target` may start at `now` (no `hosting`: anywhere, no back-off).
 *
 * @example
 * plan.create.filter((t) => canStart(hosting, { namespaceId, versionId, ...t }, now))
 */
export const canStart = (hosting: Hosting | undefined, target: StartTarget, now: number): boolean =>
  hosting === undefined ||
  (hosting.canStartIn(target.region) && backoffOf(hosting.backoff, target.namespaceId, target.versionId, target.gameMode, now) === undefined);

/**
 * Why a new lobby of `target` cannot start at `now`, or undefined when it can: 503
 * `MATCHMAKER_RUNTIME_UNAVAILABLE` where no runtime can start it, 503
 * `MATCHMAKER_LOBBY_START_BACKOFF` while its version's game mode is under back-off (naming the
 * lobby that failed last, and when the next start is tried).
 *
 * @example
 * startRefusal({ canStartIn: () => false, backoff: NO_BACKOFF }, lobby, now)?.code // 'MATCHMAKER_RUNTIME_UNAVAILABLE'
 */
export const startRefusal = (hosting: Hosting | undefined, target: StartTarget, now: number): MatchError | undefined => {
  if (hosting === undefined) return undefined;
  if (!hosting.canStartIn(target.region)) return matchError('MATCHMAKER_RUNTIME_UNAVAILABLE', { region: target.region });
  const blocked = backoffOf(hosting.backoff, target.namespaceId, target.versionId, target.gameMode, now);
  if (blocked === undefined) return undefined;
  const params = { game_mode: target.gameMode, failures: blocked.failures, lobby_id: blocked.lastLobbyId, seconds: Math.ceil((blocked.until - now) / 1000) };
  return matchError('MATCHMAKER_LOBBY_START_BACKOFF', params, { metadata: { retry_after_ms: blocked.until - now, lobby_id: blocked.lastLobbyId } });
};
