/**
 * Analytics history: this server process counts, per namespace and minute, the requests it
 * answered (refusals by code), the lobbies it saw created and how long each took to be ready, and
 * the lobbies that stopped for a failure; when a minute ends it rolls each namespace's counts and
 * its lobbies at that moment into one row (`core/history/minute.ts`) and keeps it. Starts are
 * counted from `lobby-created` events only, so lobbies that already ran when counting began (a
 * restart) are never counted as started. Rows older than the retention are pruned.
 */
import { summarize } from '../core/analytics.js';
import { isActive } from '../core/lobby/flags.js';
import { EMPTY_TALLY, MINUTE_MS, minuteOf, rollupMinute, type AnalyticsMinute, type RequestCounts } from '../core/history/minute.js';
import { historySeries, rangeWindow, type HistoryRange, type HistorySeries } from '../core/history/series.js';
import type { MatchEvent } from '../core/events.js';
import type { World } from '../core/world.js';
import type { AnalyticsHistoryStore } from '../io/analytics-history.js';
import type { Clock, Timers } from '../io/index.js';
import type { EventHub } from './hub.js';

/** Seven days: how long history is kept by default (`TAVERN_ANALYTICS_RETENTION`). */
export const DEFAULT_ANALYTICS_RETENTION_MS = 7 * 24 * 60 * MINUTE_MS;

/** Lobbies whose creation time is remembered at most, to time their start. */
const MAX_STARTING = 100_000;

/** How long after a minute ends its rows are written (lets the minute's last answers land). */
const CLOSE_DELAY_MS = 1_000;

export interface AnalyticsHistoryDeps {
  readonly store: AnalyticsHistoryStore;
  readonly world: { snapshot(): Promise<World> };
  readonly clock: Clock;
  readonly timers: Timers;
  /** This process's id in the rows (a fresh one per start: rows of a restart in the same minute add up). */
  readonly instanceId: string;
  readonly retentionMs?: number;
  /** A write or a prune failed (the minute's counts are kept to retry with the next). */
  readonly onError?: (error: unknown) => void;
}

/** A minute's tally (`MinuteTally`) being counted. */
interface Counts {
  readonly requests: { find: number; join: number; create: number };
  readonly refusals: Record<string, number>;
  starts: number;
  readonly startMs: number[];
  readonly failures: Record<string, number>;
}

const freshCounts = (): Counts => ({ requests: { find: 0, join: 0, create: 0 }, refusals: {}, starts: 0, startMs: [], failures: {} });

/**
 * @example
 * const history = new AnalyticsHistory({ store: stores.history, world: matchmaker, clock, timers, instanceId: randomUUID() });
 * history.attach(matchmaker.hub);
 * history.start();
 * const series = await history.read(nsId, '24h');
 */
export class AnalyticsHistory {
  readonly #deps: AnalyticsHistoryDeps;
  /** The minute being counted. */
  #minute: number;
  #counts = new Map<string, Counts>();
  /** Ended minutes not written yet (a failed write keeps them). */
  #ended: { minute: number; counts: Map<string, Counts> }[] = [];
  readonly #createdAt = new Map<string, number>();
  #cancel: (() => void) | undefined;
  #writing: Promise<void> | undefined;

  constructor(deps: AnalyticsHistoryDeps) {
    this.#deps = deps;
    this.#minute = minuteOf(deps.clock.now());
  }

  get retentionMs(): number {
    return this.#deps.retentionMs ?? DEFAULT_ANALYTICS_RETENTION_MS;
  }

  #of(namespaceId: string): Counts {
    this.#roll();
    let c = this.#counts.get(namespaceId);
    if (c === undefined) this.#counts.set(namespaceId, (c = freshCounts()));
    return c;
  }

  /** Moves the counts of an ended minute aside for the next write. */
  #roll(): void {
    const minute = minuteOf(this.#deps.clock.now());
    if (minute <= this.#minute) return;
    this.#ended.push({ minute: this.#minute, counts: this.#counts });
    this.#counts = new Map();
    this.#minute = minute;
  }

  /** Counts an answered find, join or create (`outcome`: `ok` or the refusal's code). */
  request(namespaceId: string, kind: keyof RequestCounts, outcome: string): void {
    const c = this.#of(namespaceId);
    c.requests[kind]++;
    if (outcome !== 'ok') c.refusals[outcome] = (c.refusals[outcome] ?? 0) + 1;
  }

  #event(e: MatchEvent): void {
    if (e.type === 'lobby-created') {
      this.#of(e.lobby.namespaceId).starts++;
      if (this.#createdAt.size >= MAX_STARTING) this.#createdAt.clear();
      this.#createdAt.set(e.lobby.id, e.lobby.createdAt);
    } else if (e.type === 'lobby-ready') {
      const created = this.#createdAt.get(e.lobbyId);
      this.#createdAt.delete(e.lobbyId);
      if (created !== undefined) this.#of(e.namespaceId).startMs.push(Math.max(0, e.at - created));
    } else if (e.type === 'lobby-stopped') {
      this.#createdAt.delete(e.lobbyId);
      if (!e.failed) return;
      const f = this.#of(e.namespaceId).failures;
      f[e.reason] = (f[e.reason] ?? 0) + 1;
    }
  }

  /** Counts the lobby events of every decision the hub publishes; returns the unsubscribe. */
  attach(hub: EventHub): () => void {
    return hub.subscribe((events) => {
      for (const e of events) this.#event(e);
    });
  }

  /** The rows of counted minutes, each namespace's lobbies read from `world` (every namespace with lobbies or counts). */
  #rows(world: World, minute: number, counts: ReadonlyMap<string, Counts>): AnalyticsMinute[] {
    const ids = new Set(counts.keys());
    for (const [id, ns] of world.namespaces) if ([...ns.lobbies.values()].some(isActive)) ids.add(id);
    return [...ids].map((namespaceId) => {
      const ns = world.namespaces.get(namespaceId);
      const lobbies = [...(ns?.lobbies.values() ?? [])].filter(isActive).map((l) => summarize(l, ns?.currentVersionId));
      return rollupMinute({ namespaceId, minute, instanceId: this.#deps.instanceId, tally: counts.get(namespaceId) ?? EMPTY_TALLY, lobbies });
    });
  }

  /**
   * Writes the rows of every ended minute (lobbies as they are now, at the minute's end).
   *
   * @effects matchmaker (snapshot), history store (putMinutes)
   */
  flush(): Promise<void> {
    this.#writing ??= (async () => {
      try {
        this.#roll();
        if (this.#ended.length === 0) return;
        const world = await this.#deps.world.snapshot();
        const ended = this.#ended;
        await this.#deps.store.putMinutes(ended.flatMap((m) => this.#rows(world, m.minute, m.counts)));
        this.#ended = this.#ended.slice(ended.length);
      } finally {
        this.#writing = undefined;
      }
    })();
    return this.#writing;
  }

  /** Writes each minute's rows a second after it ends, until {@link close}. */
  start(): void {
    const schedule = (): void => {
      const now = this.#deps.clock.now();
      this.#cancel = this.#deps.timers.after(minuteOf(now) + MINUTE_MS + CLOSE_DELAY_MS - now, () => {
        this.flush().catch((e: unknown) => this.#deps.onError?.(e)).finally(schedule);
      });
    };
    schedule();
  }

  /**
   * Forgets rows older than the retention.
   *
   * @effects history store (pruneMinutes)
   */
  prune(): Promise<number> {
    return this.#deps.store.pruneMinutes(this.#deps.clock.now() - this.retentionMs);
  }

  /**
   * A namespace's history over a range, the minute being counted included (as it stands now).
   *
   * @effects history store (minutes), matchmaker (snapshot)
   */
  async read(namespaceId: string, range: HistoryRange): Promise<HistorySeries> {
    const now = this.#deps.clock.now();
    const { from, to } = rangeWindow(range, now);
    this.#roll();
    const [rows, world] = await Promise.all([this.#deps.store.minutes(namespaceId, from, to), this.#deps.world.snapshot()]);
    const pending = [...this.#ended, { minute: this.#minute, counts: this.#counts }].flatMap((m) => {
      const c = m.counts.get(namespaceId);
      return this.#rows(world, m.minute, new Map(c === undefined ? [] : [[namespaceId, c]])).filter((r) => r.namespaceId === namespaceId);
    });
    return historySeries([...rows, ...pending], range, now);
  }

  /** Stops the timer and writes the minute being counted as it stands. */
  async close(): Promise<void> {
    this.#cancel?.();
    this.#cancel = undefined;
    await this.#writing;
    this.#ended.push({ minute: this.#minute, counts: this.#counts });
    this.#counts = new Map();
    this.#minute = Number.POSITIVE_INFINITY;
    await this.flush();
  }
}
