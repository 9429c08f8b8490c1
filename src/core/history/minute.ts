/**
 * Analytics history: one row per namespace, per minute and per server instance, rolled up from
 * what the instance counted during the minute and the namespace's lobbies at its end. The rows of
 * several instances for one minute merge ({@link mergeMinutes}): counts add, gauges (lobbies and
 * players, read from the one shared world) take the largest, start latencies merge as histograms.
 */
import type { LobbySummary } from '../analytics.js';
import { latencyBucket } from './latency.js';

export const MINUTE_MS = 60_000;

/** The namespace's active lobbies by state at a minute's end: each lobby in exactly one. */
export interface LobbiesByState {
  /** Not ready yet. */
  readonly starting: number;
  /** Ready and with players, open to more. */
  readonly active: number;
  /** Ready, no players. */
  readonly idle: number;
  /** Ready and closed to new players. */
  readonly closed: number;
}

/** The requests a namespace answered in a minute, by kind. */
export interface RequestCounts {
  readonly find: number;
  readonly join: number;
  readonly create: number;
}

/** One namespace's minute as one instance saw it. */
export interface AnalyticsMinute {
  readonly namespaceId: string;
  /** The minute's start (epoch ms, a multiple of {@link MINUTE_MS}). */
  readonly minute: number;
  readonly instanceId: string;
  readonly lobbies: LobbiesByState;
  /** Players holding a seat at the minute's end. */
  readonly players: number;
  /** Requests answered (admitted or refused). */
  readonly requests: RequestCounts;
  /** Refused requests by error code. */
  readonly refusals: Readonly<Record<string, number>>;
  /** Lobbies created in the minute (never the ones that were there when counting began). */
  readonly starts: number;
  /** Start latencies (creation to ready) as a histogram: bucket index ({@link latencyBucket}) → count. */
  readonly startLatency: Readonly<Record<string, number>>;
  /** Lobbies that stopped for a failure in the minute, by reason (`crashed`, `start-failed`, `ready-timeout`). */
  readonly failures: Readonly<Record<string, number>>;
}

/** What an instance counted for one namespace during a minute. */
export interface MinuteTally {
  readonly requests: RequestCounts;
  readonly refusals: Readonly<Record<string, number>>;
  readonly starts: number;
  /** Each lobby that became ready: how long it took from creation (ms). */
  readonly startMs: readonly number[];
  readonly failures: Readonly<Record<string, number>>;
}

export const EMPTY_TALLY: MinuteTally = Object.freeze({
  requests: Object.freeze({ find: 0, join: 0, create: 0 }),
  refusals: Object.freeze({}),
  starts: 0,
  startMs: Object.freeze([]),
  failures: Object.freeze({}),
});

/**
 * The start of the minute `at` falls in.
 *
 * @example
 * minuteOf(90_500); // 60_000
 */
export const minuteOf = (at: number): number => Math.floor(at / MINUTE_MS) * MINUTE_MS;

/**
 * The lobbies by state, each in one: starting (not ready), closed, idle (no players), active.
 *
 * @example
 * lobbiesByState(liveSummaries(live, nsId)).idle
 */
export function lobbiesByState(lobbies: readonly LobbySummary[]): LobbiesByState {
  let starting = 0, active = 0, idle = 0, closed = 0;
  for (const l of lobbies) {
    if (!l.isReady) starting++;
    else if (l.isClosed) closed++;
    else if (l.totalPlayerCount === 0) idle++;
    else active++;
  }
  return { starting, active, idle, closed };
}

/**
 * A namespace's minute row from what was counted and its lobbies at the minute's end.
 *
 * @example
 * rollupMinute({ namespaceId, minute: minuteOf(now - MINUTE_MS), instanceId, tally, lobbies: liveLobbies })
 */
export function rollupMinute(input: {
  readonly namespaceId: string;
  readonly minute: number;
  readonly instanceId: string;
  readonly tally: MinuteTally;
  readonly lobbies: readonly LobbySummary[];
}): AnalyticsMinute {
  const { tally } = input;
  const startLatency: Record<string, number> = {};
  for (const ms of tally.startMs) {
    const b = String(latencyBucket(ms));
    startLatency[b] = (startLatency[b] ?? 0) + 1;
  }
  return {
    namespaceId: input.namespaceId,
    minute: minuteOf(input.minute),
    instanceId: input.instanceId,
    lobbies: lobbiesByState(input.lobbies),
    players: input.lobbies.reduce((n, l) => n + l.totalPlayerCount, 0),
    requests: { ...tally.requests },
    refusals: { ...tally.refusals },
    starts: tally.starts,
    startLatency,
    failures: { ...tally.failures },
  };
}

const addCounts = (a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): Record<string, number> => {
  const out: Record<string, number> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
};

const maxState = (a: LobbiesByState, b: LobbiesByState): LobbiesByState =>
  ({ starting: Math.max(a.starting, b.starting), active: Math.max(a.active, b.active), idle: Math.max(a.idle, b.idle), closed: Math.max(a.closed, b.closed) });

/**
 * Two rows of one namespace's minute (two instances', or two minutes' of a wider bucket) as one:
 * counts and histograms add, gauges take the larger. The result keeps `a`'s keys.
 *
 * @example
 * rows.reduce(mergeMinutes)
 */
export const mergeMinutes = (a: AnalyticsMinute, b: AnalyticsMinute): AnalyticsMinute => ({
  namespaceId: a.namespaceId,
  minute: a.minute,
  instanceId: a.instanceId,
  lobbies: maxState(a.lobbies, b.lobbies),
  players: Math.max(a.players, b.players),
  requests: { find: a.requests.find + b.requests.find, join: a.requests.join + b.requests.join, create: a.requests.create + b.requests.create },
  refusals: addCounts(a.refusals, b.refusals),
  starts: a.starts + b.starts,
  startLatency: addCounts(a.startLatency, b.startLatency),
  failures: addCounts(a.failures, b.failures),
});
