import type { Lobby } from './lobby.js';

/**
 * Each lobby flag is computed here, by exactly one function. Analytics, routing, the idle plan and
 * the HTTP edge all read flags through these.
 *
 * @example
 * isReady(lobby) && !isClosed(lobby) && isPublic(lobby)
 */

/** Routing closed by the lobby (`PUT /matchmaker/lobbies/closed`). */
export const isClosed = (lobby: Lobby): boolean => lobby.closed;

/** The lobby called ready and has not begun to stop. */
export const isReady = (lobby: Lobby): boolean => lobby.lifecycle.status === 'ready';

/** No player holds a seat (reserved or connected). */
export const isIdle = (lobby: Lobby): boolean => lobby.playerCount === 0;

/** The lobby runs a version other than its namespace's current one. */
export const isOutdated = (lobby: Lobby, currentVersionId: string | undefined): boolean =>
  lobby.versionId !== currentVersionId;

/** Created through `/lobbies/create` rather than by find or the idle pool. */
export const isCustom = (lobby: Lobby): boolean => lobby.origin === 'custom';

/** Public lobbies can be found; private ones only joined by id. */
export const isPublic = (lobby: Lobby): boolean => lobby.publicity === 'public';

/** Creating or ready: the lobby holds resources and can hold players. */
export const isActive = (lobby: Lobby): boolean =>
  lobby.lifecycle.status === 'creating' || lobby.lifecycle.status === 'ready';

/** `stopped`: gone for good. */
export const isStopped = (lobby: Lobby): boolean => lobby.lifecycle.status === 'stopped';

/**
 * Find may route players here: active, open, public and on the current version. (Whether it has a
 * free seat depends on the request's size and kind.)
 */
export const isFindable = (lobby: Lobby, currentVersionId: string | undefined): boolean =>
  isActive(lobby) && !isClosed(lobby) && isPublic(lobby) && !isOutdated(lobby, currentVersionId);
