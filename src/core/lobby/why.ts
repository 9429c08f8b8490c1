/**
 * What Tavern says about a lobby that stops: the words of its log line (on the lobby's `tavern`
 * stream) and the `MATCHMAKER_LOBBY_STOPPED` a request about it gets, which names the lobby so a
 * developer can read its log (`tavern logs <lobby id>`).
 */
import { type MatchError, matchError } from '../errors.js';
import type { Lobby, StopReason } from './lobby.js';

const withCode = (exitCode: number | undefined): string => (exitCode === undefined ? '' : ` with code ${exitCode}`);

/**
 * Why a lobby stops, in words, as decided at `now` (a ready timeout counts the seconds since the
 * lobby was created); `exitCode` is its container's, when the runtime reported one.
 *
 * @example
 * stopWhy('ready-timeout', lobby, lobby.createdAt + 50_000);
 * // 'not ready after 50 s: the game server must POST /matchmaker/lobbies/ready with its lobby token'
 */
export const stopWhy = (reason: StopReason, lobby: Lobby, now: number, exitCode?: number): string => {
  switch (reason) {
    case 'ready-timeout':
      return `not ready after ${Math.round((now - lobby.createdAt) / 1000)} s: the game server must POST /matchmaker/lobbies/ready with its lobby token`;
    case 'idle':
      return 'idle above the idle_lobbies maximum';
    case 'outdated':
      return 'it runs an outdated version and had no players';
    case 'exited':
      return `the game server exited${withCode(exitCode)}`;
    case 'crashed':
      return `the game server crashed${withCode(exitCode)}`;
    case 'lost':
      return 'the host running it was lost (its node is down or cut off): not a failure of the game server';
    case 'start-failed':
      return exitCode === undefined ? 'the game server could not be started' : `the game server exited${withCode(exitCode)} before it called ready`;
    case 'requested':
      return 'stopped on request';
  }
};

/**
 * `MATCHMAKER_LOBBY_STOPPED` for a lobby that stopped or is stopping for `reason`: its id and the
 * reason in the message and in `metadata` (with the exit code, when known).
 *
 * @example
 * lobbyStopped('6f1c…', 'crashed', 1);
 * // { code: 'MATCHMAKER_LOBBY_STOPPED', params: { lobby_id: '6f1c…', reason: 'crashed' }, metadata: { lobby_id: '6f1c…', reason: 'crashed', exit_code: 1 } }
 */
export const lobbyStopped = (lobbyId: string, reason: StopReason, exitCode?: number): MatchError =>
  matchError('MATCHMAKER_LOBBY_STOPPED', { lobby_id: lobbyId, reason }, {
    metadata: exitCode === undefined ? { lobby_id: lobbyId, reason } : { lobby_id: lobbyId, reason, exit_code: exitCode },
  });

/**
 * {@link lobbyStopped} with the lobby's own reason when it is stopping or stopped; undefined while
 * it is active (exactly when `isActive` holds).
 *
 * @example
 * const refusal = stoppedRefusal(lobby);
 * if (refusal !== undefined) return refusal;
 */
export const stoppedRefusal = (lobby: Lobby): MatchError | undefined => {
  const lc = lobby.lifecycle;
  return lc.status === 'stopping' || lc.status === 'stopped' ? lobbyStopped(lobby.id, lc.reason) : undefined;
};
