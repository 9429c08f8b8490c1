/**
 * Start backoff: when lobbies of one version's game mode keep failing to start (the container
 * could not start, or went away before calling ready), new lobbies of it wait longer and longer,
 * so a broken build never makes Tavern create containers in a tight loop. A lobby of it that
 * becomes ready ends the backoff.
 *
 * The back-off is this instance's (each runs its own containers, and a runtime that fails here may
 * work on another host): the services keep it in memory, hand it to every decision in the context
 * (`Hosting`), and fold each committed decision's events into it with {@link followStarts}.
 */
import type { AppendLog } from '../effects.js';
import type { MatchEvent } from '../events.js';
import type { World } from '../world.js';

/** Consecutive failed starts of one (version, game mode), and when the next start may be tried. */
export interface StartBackoff {
  readonly failures: number;
  /** Epoch ms: no new lobby of this version and mode before then. */
  readonly until: number;
  /** Epoch ms of the last failure. */
  readonly lastFailureAt: number;
}

/** Failures in a row tolerated before backing off at all (one failure may be bad luck). */
export const BACKOFF_AFTER_FAILURES = 2;
/** The first wait; each further failure doubles it. */
export const BACKOFF_BASE_MS = 2_000;
/** The longest wait. */
export const BACKOFF_MAX_MS = 300_000;

/**
 * The wait after `failures` failures in a row: none up to {@link BACKOFF_AFTER_FAILURES} - 1, then
 * 2 s, 4 s, 8 s, ... up to 5 min.
 *
 * @example
 * backoffDelay(1); // 0
 * backoffDelay(2); // 2000
 * backoffDelay(3); // 4000
 */
export const backoffDelay = (failures: number): number => {
  if (failures < BACKOFF_AFTER_FAILURES) return 0;
  const doublings = failures - BACKOFF_AFTER_FAILURES;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a fast path; from 8 doublings on, Math.min gives the maximum too (and Infinity past 1023)
  return doublings >= 20 ? BACKOFF_MAX_MS : Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** doublings);
};

/**
 * The backoff after one more failed start at `now`.
 *
 * @example
 * let b = recordStartFailure(undefined, 1000); // { failures: 1, until: 1000, lastFailureAt: 1000 }
 * b = recordStartFailure(b, 2000); // { failures: 2, until: 4000, lastFailureAt: 2000 }
 */
export const recordStartFailure = (previous: StartBackoff | undefined, now: number): StartBackoff => {
  const failures = (previous?.failures ?? 0) + 1;
  return { failures, until: now + backoffDelay(failures), lastFailureAt: now };
};

/**
 * Whether a new lobby must wait at `now`.
 *
 * @example
 * startBlocked({ failures: 2, until: 4000, lastFailureAt: 2000 }, 3000); // true
 */
export const startBlocked = (backoff: StartBackoff | undefined, now: number): boolean => backoff !== undefined && now < backoff.until;

/** A (version, game mode) of a namespace whose lobbies keep failing to start. */
export interface BackoffEntry extends StartBackoff {
  readonly versionId: string;
  readonly gameMode: string;
  /** The lobby that failed last (its log says why: `tavern logs <id>`). */
  readonly lastLobbyId: string;
}

/**
 * The start back-off of one Tavern instance (each runs its own containers): per namespace, then per
 * `<version id> <game mode>`. A value: {@link followStarts} returns the next one, sharing the
 * namespaces it did not touch.
 */
export type StartBackoffs = ReadonlyMap<string, ReadonlyMap<string, BackoffEntry>>;

/** No (version, game mode) ever failed to start. */
export const NO_BACKOFF: StartBackoffs = new Map();

const keyOf = (versionId: string, gameMode: string): string => `${versionId} ${gameMode}`;

/**
 * The back-off a new lobby of this version's game mode is under at `now`, if any.
 *
 * @example
 * backoffOf(backoffs, 'ns-1', 'v1', 'default', now)?.until // when the next start may be tried
 */
export const backoffOf = (backoffs: StartBackoffs, namespaceId: string, versionId: string, gameMode: string, now: number): BackoffEntry | undefined => {
  const entry = backoffs.get(namespaceId)?.get(keyOf(versionId, gameMode));
  return startBlocked(entry, now) ? entry : undefined;
};

/**
 * The (version, game mode) pairs of a namespace under back-off at `now` (live analytics shows them).
 *
 * @example
 * activeBackoffs(backoffs, 'ns-1', now).map((b) => b.gameMode) // ['default']
 */
export const activeBackoffs = (backoffs: StartBackoffs, namespaceId: string, now: number): BackoffEntry[] =>
  [...(backoffs.get(namespaceId)?.values() ?? [])].filter((b) => startBlocked(b, now));

/** What {@link followStarts} decided: the next back-off, and the log lines that announce a wait. */
export interface StartsFollowed {
  readonly backoffs: StartBackoffs;
  /** One per failure that starts or lengthens a wait, for the failed lobby's log. */
  readonly effects: readonly AppendLog[];
}

/** `backoffs` with one namespace's entries replaced (none left: the namespace goes). */
const withNamespace = (backoffs: StartBackoffs, namespaceId: string, entries: ReadonlyMap<string, BackoffEntry>): StartBackoffs => {
  const next = new Map(backoffs);
  if (entries.size === 0) next.delete(namespaceId);
  else next.set(namespaceId, entries);
  return next;
};

/**
 * The back-off after a committed decision (`world`, its `events`): a lobby that failed to start
 * (`lobby-stopped`, reason `start-failed`) counts against its version's game mode, one that became
 * ready clears it. Undefined when the back-off stays as it was (the common case).
 *
 * @example
 * const followed = followStarts(backoffs, decision.world, decision.events);
 * if (followed !== undefined) { backoffs = followed.backoffs; effects.push(...followed.effects); }
 */
export const followStarts = (backoffs: StartBackoffs, world: World, events: readonly MatchEvent[]): StartsFollowed | undefined => {
  let next = backoffs;
  const effects: AppendLog[] = [];
  for (const event of events) {
    if (event.type !== 'lobby-ready' && !(event.type === 'lobby-stopped' && event.reason === 'start-failed')) continue;
    const lobby = world.namespaces.get(event.namespaceId)?.lobbies.get(event.lobbyId);
    if (lobby === undefined) continue;
    const key = keyOf(lobby.versionId, lobby.gameMode);
    const entries = next.get(lobby.namespaceId);
    if (event.type === 'lobby-ready') {
      if (entries?.has(key) !== true) continue;
      const left = new Map(entries);
      left.delete(key);
      next = withNamespace(next, lobby.namespaceId, left);
      continue;
    }
    const entry: BackoffEntry = { versionId: lobby.versionId, gameMode: lobby.gameMode, lastLobbyId: lobby.id, ...recordStartFailure(entries?.get(key), event.at) };
    next = withNamespace(next, lobby.namespaceId, new Map(entries).set(key, entry));
    if (entry.until > event.at) {
      const line = `game mode ${lobby.gameMode} failed to start ${entry.failures} times in a row: no new lobby of it for ${Math.ceil((entry.until - event.at) / 1000)} s`;
      effects.push({ type: 'append-log', lobbyId: lobby.id, at: event.at, line });
    }
  }
  return next === backoffs ? undefined : { backoffs: next, effects };
};
