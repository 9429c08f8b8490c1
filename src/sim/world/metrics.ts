/**
 * What a run measures, folded from the services' events and the simulated clients' outcomes:
 * players served and refused, waits, lobby fill, active and idle lobbies over time, lobby-hours and
 * their cost, CCU, ports. Also the conservation checks: every seat within its lobby's limit and
 * counters that never go negative.
 */
import type { MatchEvent } from '../../core/events.js';
import type { ErrorCode } from '../../core/errors.js';
import { binOf, emptyHistogram, percentiles, ValueCounts, type Histogram, type HistogramSpec } from '../engine/stats.js';

const HOUR_MS = 3_600_000;

/** Per region (or game mode): lobbies running and idle now, and their lobby-milliseconds so far. */
interface RegionTrack {
  readonly region: string;
  running: number;
  idle: number;
  lobbyMs: number;
  idleMs: number;
  /** Most lobbies running at once, ports in use now and at most. */
  peakRunning: number;
  ports: number;
  peakPorts: number;
}

interface LobbyTrack {
  readonly region: RegionTrack;
  readonly mode: RegionTrack;
  readonly maxNormal: number;
  readonly limit: number;
  readonly ports: number;
  players: number;
  active: boolean;
  ready: boolean;
}

/** One sample of the run's state (every `sampleEveryMs` of virtual time). */
export interface Sample {
  /** Virtual ms since the start. */
  readonly t: number;
  readonly ccu: number;
  readonly seated: number;
  readonly lobbiesActive: number;
  readonly lobbiesIdle: number;
  readonly portsInUse: number;
  /** Players who arrived and hold no ready seat yet: request in flight, or seated in a lobby still starting. */
  readonly waiting: number;
  /** Time-to-ready percentiles of the players who got a ready seat since the previous sample (NaN if none). */
  readonly waitP50: number;
  readonly waitP95: number;
  readonly waitP99: number;
}

/** One region's or game mode's share of a run: its peaks and its lobby-hours. */
export interface GroupFigures {
  readonly peakLobbies: number;
  readonly peakPorts: number;
  readonly lobbyHours: number;
  readonly idleLobbyHours: number;
}

/** The run's lobbies by region, and by game mode then region (kept apart from {@link RunMetrics}, whose JSON golden files hold). */
export interface RunBreakdown {
  readonly regions: Readonly<Record<string, GroupFigures>>;
  readonly gameModes: Readonly<Record<string, Readonly<Record<string, GroupFigures>>>>;
}

export interface Percentiles {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
}

/** The metrics of a run, as plain JSON (durations in ms). */
export interface RunMetrics {
  readonly durationMs: number;
  readonly arrivals: { readonly requests: number; readonly players: number };
  /** Players who got a seat, who were refused, and whose request was still in flight at the end. */
  readonly served: number;
  readonly rejected: number;
  readonly waiting: number;
  readonly rejections: Readonly<Partial<Record<ErrorCode, number>>>;
  /** Seats lost before their lobby was ready (it stopped), by code. */
  readonly seatFailures: Readonly<Partial<Record<ErrorCode, number>>>;
  readonly timeToSeatMs: Percentiles;
  readonly timeToReadyMs: Percentiles;
  /** Mean of seated/max_players over ready lobbies, sampled. */
  readonly fillRatio: number;
  readonly lobbies: { readonly created: number; readonly crashed: number; readonly peakActive: number };
  readonly lobbyHours: number;
  readonly idleLobbyHours: number;
  /** Lobby-hours times the region's `cost_per_lobby_hour` (regions without one cost 0). */
  readonly cost: number;
  readonly idleCost: number;
  readonly peakCcu: number;
  /** Connected players averaged over the run's time. */
  readonly meanCcu: number;
  readonly peakPortsInUse: number;
  readonly verificationCalls: number;
  readonly captchaCalls: number;
}

/** Lobby fill (seated / max players) in tenths; a full lobby counts in the last bin. */
const FILL_SPEC: HistogramSpec = { min: 0, max: 1.0000001, bins: 10 };

const round = (n: number, digits = 3): number => (Number.isFinite(n) ? Math.round(n * 10 ** digits) / 10 ** digits : n);

const percentilesOf = (values: readonly number[]): Percentiles => {
  const [p50 = NaN, p95 = NaN, p99 = NaN] = percentiles(values, [50, 95, 99]);
  return { p50, p95, p99 };
};

const countedPercentiles = (values: ValueCounts): Percentiles => {
  const [p50 = NaN, p95 = NaN, p99 = NaN] = values.percentiles([50, 95, 99]);
  return { p50, p95, p99 };
};

/**
 * @example
 * const m = new MetricsCollector(costs, 0);
 * hub.subscribe((events) => m.onEvents(events, clock.now()));
 */
export class MetricsCollector {
  readonly #lobbies = new Map<string, LobbyTrack>();
  readonly #costs: ReadonlyMap<string, number>;
  /** In the order their first lobby appeared (the order the totals are summed in). */
  readonly #regions: RegionTrack[] = [];
  readonly #regionByName = new Map<string, RegionTrack>();
  /** By game mode and region (keyed `mode\u0001region`). */
  readonly #modes: RegionTrack[] = [];
  readonly #modeByName = new Map<string, RegionTrack>();
  #last: number;
  #active = 0;
  #idle = 0;
  #ccu = 0;
  #seated = 0;
  #ports = 0;
  /** Waits by value, not one entry per player: a day at 100k CCU seats millions. */
  readonly #seatWaits = new ValueCounts();
  readonly #readyWaits = new ValueCounts();
  /** Connected-player milliseconds so far (the mean CCU's numerator). */
  #ccuMs = 0;
  readonly #start: number;
  #windowWaits: number[] = [];
  #fillSum = 0;
  #fillCount = 0;
  readonly #fillBins: number[] = emptyHistogram(FILL_SPEC).counts.slice();
  /** The samples kept: every one, or with `maxSamples` every `#stride`-th (see the constructor). */
  readonly samples: Sample[] = [];
  readonly #maxSamples: number;
  #stride = 1;
  #sampled = 0;
  readonly violations: string[] = [];
  readonly rejections: Partial<Record<ErrorCode, number>> = {};
  readonly seatFailures: Partial<Record<ErrorCode, number>> = {};
  requests = 0;
  players = 0;
  served = 0;
  rejected = 0;
  created = 0;
  crashed = 0;
  peakActive = 0;
  peakCcu = 0;
  peakPorts = 0;

  /**
   * `maxSamples` bounds the samples kept, whatever the run's length: past it, every other one is
   * dropped and from then on only every second (then fourth, ...) sample is kept. A kept sample
   * is unchanged (its wait percentiles cover the interval before it only); the figures count
   * every sample.
   */
  constructor(costs: ReadonlyMap<string, number>, start: number, maxSamples = Number.POSITIVE_INFINITY) {
    this.#costs = costs;
    this.#maxSamples = Math.max(2, maxSamples);
    this.#last = start;
    this.#start = start;
  }

  #advance(now: number): void {
    const dt = now - this.#last;
    if (dt <= 0) return;
    this.#ccuMs += this.#ccu * dt;
    for (const r of this.#regions) {
      r.lobbyMs += r.running * dt;
      r.idleMs += r.idle * dt;
    }
    for (const r of this.#modes) {
      r.lobbyMs += r.running * dt;
      r.idleMs += r.idle * dt;
    }
    this.#last = now;
  }

  #group(name: string, byName: Map<string, RegionTrack>, list: RegionTrack[]): RegionTrack {
    let r = byName.get(name);
    if (r === undefined) {
      r = { region: name, running: 0, idle: 0, lobbyMs: 0, idleMs: 0, peakRunning: 0, ports: 0, peakPorts: 0 };
      byName.set(name, r);
      list.push(r);
    }
    return r;
  }

  #idleDelta(lobby: LobbyTrack, delta: number): void {
    this.#idle += delta;
    lobby.region.idle += delta;
    lobby.mode.idle += delta;
  }

  /** A lobby starts (+1) or stops (−1) running with `ports` ports, in its region and game mode. */
  #runningDelta(lobby: LobbyTrack, delta: number): void {
    for (const g of [lobby.region, lobby.mode]) {
      g.running += delta;
      g.ports += delta * lobby.ports;
      g.peakRunning = Math.max(g.peakRunning, g.running);
      g.peakPorts = Math.max(g.peakPorts, g.ports);
    }
  }

  /** Fold committed events (in commit order) at virtual time `now`. */
  onEvents(events: readonly MatchEvent[], now: number): void {
    this.#advance(now);
    for (const e of events) this.#onEvent(e);
  }

  #onEvent(e: MatchEvent): void {
    switch (e.type) {
      case 'lobby-created': {
        const { lobby } = e;
        const limit = Math.max(lobby.maxPlayers.normal, lobby.maxPlayers.direct, lobby.maxPlayers.party);
        const region = this.#group(lobby.region, this.#regionByName, this.#regions);
        const mode = this.#group(`${lobby.gameMode}\u0001${lobby.region}`, this.#modeByName, this.#modes);
        const track: LobbyTrack = { region, mode, maxNormal: lobby.maxPlayers.normal, limit, ports: lobby.ports.length, players: 0, active: true, ready: false };
        this.#lobbies.set(lobby.id, track);
        this.created += 1;
        this.#active += 1;
        this.peakActive = Math.max(this.peakActive, this.#active);
        this.#idleDelta(track, 1);
        this.#runningDelta(track, 1);
        this.#ports += track.ports;
        this.peakPorts = Math.max(this.peakPorts, this.#ports);
        return;
      }
      case 'lobby-ready': {
        const track = this.#lobbies.get(e.lobbyId);
        if (track !== undefined) track.ready = true;
        return;
      }
      case 'player-reserved': {
        const track = this.#lobbies.get(e.player.lobbyId);
        if (track === undefined) return this.#violate(`seat in unknown lobby ${e.player.lobbyId}`);
        track.players += 1;
        this.#seated += 1;
        if (track.players === 1 && track.active) this.#idleDelta(track, -1);
        if (track.players > track.limit) this.#violate(`lobby ${e.player.lobbyId} holds ${track.players} seats, above its limit ${track.limit}`);
        return;
      }
      case 'player-connected':
        this.#ccu += 1;
        this.peakCcu = Math.max(this.peakCcu, this.#ccu);
        return;
      case 'player-removed': {
        const track = this.#lobbies.get(e.lobbyId);
        if (track === undefined) return this.#violate(`removal from unknown lobby ${e.lobbyId}`);
        track.players -= 1;
        this.#seated -= 1;
        if (e.wasConnected) this.#ccu -= 1;
        if (track.players < 0 || this.#ccu < 0) this.#violate(`negative count after removing ${e.playerId}`);
        if (track.players === 0 && track.active) this.#idleDelta(track, 1);
        return;
      }
      case 'lobby-stopping': {
        const track = this.#lobbies.get(e.lobbyId);
        if (track === undefined || !track.active) return;
        track.active = false;
        track.ready = false;
        this.#active -= 1;
        if (track.players === 0) this.#idleDelta(track, -1);
        if (e.reason === 'crashed') this.crashed += 1;
        return;
      }
      case 'lobby-stopped': {
        const track = this.#lobbies.get(e.lobbyId);
        if (track === undefined) return;
        this.#ports -= track.ports;
        this.#runningDelta(track, -1);
        this.#lobbies.delete(e.lobbyId);
        return;
      }
      case 'lobby-closed-set':
      case 'seat-ready':
      case 'seat-failed':
      case 'version-published':
      case 'captcha-verified':
        return;
    }
  }

  #violate(message: string): void {
    if (this.violations.length < 100) this.violations.push(message);
  }

  arrival(players: number): void {
    this.requests += 1;
    this.players += players;
  }

  refuse(code: ErrorCode, players: number): void {
    this.rejected += players;
    this.rejections[code] = (this.rejections[code] ?? 0) + players;
  }

  seat(players: number, waitMs: number): void {
    this.served += players;
    this.#seatWaits.add(waitMs, players);
  }

  ready(waitMs: number): void {
    this.#readyWaits.add(waitMs);
    this.#windowWaits.push(waitMs);
  }

  seatFailed(code: ErrorCode): void {
    this.seatFailures[code] = (this.seatFailures[code] ?? 0) + 1;
  }

  /** Players seated in lobbies now (reserved or connected). */
  get seated(): number {
    return this.#seated;
  }

  get ports(): number {
    return this.#ports;
  }

  /** The fill of every ready lobby at every sample, in tenths. */
  get fillHistogram(): Histogram {
    return { spec: FILL_SPEC, counts: this.#fillBins.slice(), under: 0, over: 0 };
  }

  /** Record a sample at virtual time `t` (ms since start); `now` is the services' clock; `waiting` players have no ready seat yet. */
  sample(t: number, now: number, waiting: number): void {
    this.#advance(now);
    for (const track of this.#lobbies.values()) {
      if (!track.ready || !track.active) continue;
      const fill = Math.min(1, track.players / Math.max(1, track.maxNormal));
      this.#fillSum += fill;
      this.#fillCount += 1;
      const bin = binOf(FILL_SPEC, fill);
      this.#fillBins[bin] = (this.#fillBins[bin] ?? 0) + 1;
    }
    const w = percentilesOf(this.#windowWaits);
    this.#windowWaits = [];
    const index = this.#sampled;
    this.#sampled += 1;
    if (index % this.#stride !== 0) return;
    if (this.samples.length >= this.#maxSamples) {
      this.#thin();
      if (index % this.#stride !== 0) return;
    }
    this.samples.push({
      t,
      ccu: this.#ccu,
      seated: this.#seated,
      lobbiesActive: this.#active,
      lobbiesIdle: this.#idle,
      portsInUse: this.#ports,
      waiting,
      waitP50: w.p50,
      waitP95: w.p95,
      waitP99: w.p99,
    });
  }

  /** Drops every other sample kept (the odd places) and keeps every other one from now on. */
  #thin(): void {
    let j = 0;
    for (let i = 0; i < this.samples.length; i += 2) this.samples[j++] = this.samples[i] as Sample;
    this.samples.length = j;
    this.#stride *= 2;
  }

  /** Each region's and game mode's peaks and lobby-hours (after {@link finish}, which counts time up to its end). */
  breakdown(): RunBreakdown {
    const figures = (g: RegionTrack): GroupFigures => ({ peakLobbies: g.peakRunning, peakPorts: g.peakPorts, lobbyHours: round(g.lobbyMs / HOUR_MS), idleLobbyHours: round(g.idleMs / HOUR_MS) });
    const regions: Record<string, GroupFigures> = {};
    for (const g of this.#regions) regions[g.region] = figures(g);
    const gameModes: Record<string, Record<string, GroupFigures>> = {};
    for (const g of this.#modes) {
      const [mode = '', region = ''] = g.region.split('\u0001');
      (gameModes[mode] ??= {})[region] = figures(g);
    }
    return { regions, gameModes };
  }

  /** The run's figures; `waiting` players were still in flight when it ended. */
  finish(now: number, durationMs: number, extra: { readonly waiting: number; readonly verificationCalls: number; readonly captchaCalls: number }): RunMetrics {
    this.#advance(now);
    let lobbyMs = 0;
    let idleMs = 0;
    let cost = 0;
    let idleCost = 0;
    for (const r of this.#regions) {
      lobbyMs += r.lobbyMs;
      cost += (r.lobbyMs / HOUR_MS) * (this.#costs.get(r.region) ?? 0);
    }
    for (const r of this.#regions) {
      idleMs += r.idleMs;
      idleCost += (r.idleMs / HOUR_MS) * (this.#costs.get(r.region) ?? 0);
    }
    return {
      durationMs,
      arrivals: { requests: this.requests, players: this.players },
      served: this.served,
      rejected: this.rejected,
      waiting: extra.waiting,
      rejections: { ...this.rejections },
      seatFailures: { ...this.seatFailures },
      timeToSeatMs: countedPercentiles(this.#seatWaits),
      timeToReadyMs: countedPercentiles(this.#readyWaits),
      fillRatio: round(this.#fillCount === 0 ? 0 : this.#fillSum / this.#fillCount),
      lobbies: { created: this.created, crashed: this.crashed, peakActive: this.peakActive },
      lobbyHours: round(lobbyMs / HOUR_MS),
      idleLobbyHours: round(idleMs / HOUR_MS),
      cost: round(cost, 2),
      idleCost: round(idleCost, 2),
      peakCcu: this.peakCcu,
      meanCcu: round(now > this.#start ? this.#ccuMs / (now - this.#start) : 0, 1),
      peakPortsInUse: this.peakPorts,
      verificationCalls: extra.verificationCalls,
      captchaCalls: extra.captchaCalls,
    };
  }
}
