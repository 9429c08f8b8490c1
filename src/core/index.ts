/**
 * Tavern's matchmaking core: pure decisions over an immutable world. Nothing here performs I/O or
 * reads the clock or ambient randomness; time and a seed arrive in `Ctx`, fresh ids in commands.
 * Every decision returns the next world, the effects to perform and the events established (or an
 * error value from the closed catalog in `ERRORS`).
 *
 * @example
 * import { createWorld, addNamespace, parseVersion, makeVersion, publishVersion, find } from 'tavern';
 */
export * from './config/index.js';
export { ERRORS, errorMessage, matchError, validationError, type ErrorCode, type MatchError } from './errors.js';
export { ok, err, type Result } from './result.js';
export { createRng, shuffled, type Rng } from './rng.js';
export type { Ctx } from './context.js';
export { PMap, type Key } from './pmap.js';
export * from './world.js';
export { addNamespace, updateNamespaceSettings, publishVersion } from './namespace.js';
export type { Decision } from './tx.js';
export type * from './effects.js';
export type * from './events.js';
export type * from './lobby/lobby.js';
export * from './lobby/flags.js';
export {
  lobbyReady,
  setClosed,
  stopLobby,
  lobbyExited,
  playerConnected,
  playerDisconnected,
  seatWaitExpired,
  recordCaptcha,
  type LobbyRef,
  type PlayerRef,
} from './lobby/lifecycle.js';
export { stopWhy, lobbyStopped, stoppedRefusal } from './lobby/why.js';
export { STOPPED_PER_NAMESPACE, STOPPED_MAX_AGE_MS, STOPPED_LOG_LINES, lastLines, type TimedLine } from './lobby/stopped.js';
export { proxyRoutes, routeHostname } from './lobby/routes.js';
export * from './lobby/backoff.js';
export { canStart, startRefusal, type Hosting, type StartTarget } from './hosting.js';
export { lobbyStateRefusal, fitStates } from './lobby/state.js';
export { find, routeFind, chooseLobby, type FindCommand, type Route } from './matchmaker/find.js';
export { join, type JoinCommand } from './matchmaker/join.js';
export { create, type CreateCommand, MAX_LOBBY_CONFIG_BYTES } from './matchmaker/create.js';
export type { Seat } from './matchmaker/seat.js';
export { MAX_TAGS, MAX_TAG_NAME, MAX_TAG_VALUE, sourceCap, distanceKm, type Client } from './matchmaker/request.js';
export { type Admission, type Credentials, actionGate } from './admission/gate.js';
export * from './admission/captcha.js';
export * from './admission/verification.js';
export { tick, STOP_GRACE_MS, STOPPED_RETENTION_MS, TICK_INTERVAL_MS, type TickSummary } from './tick.js';
export { planIdle, idlePlanEmpty, applyIdlePlan, type IdlePlan, type IdleTarget, type IdleOutcome } from './idle.js';
export { summarize, foldLive, liveSummaries, EMPTY_LIVE, type LiveAnalytics, type LobbySummary } from './analytics.js';
export * from './ports/index.js';
export {
  dehydrateNamespace,
  dehydrateLobby,
  dehydrateWorld,
  hydrateWorld,
  diffWorld,
  playerFields,
  playerOf,
  type VersionRow,
  type CaptchaRow,
  type NamespaceRow,
  type LobbyDoc,
  type PlayerDoc,
  type PlayerFields,
  type WorldRows,
  type NamespaceChange,
  type WorldDiff,
} from './persist.js';
