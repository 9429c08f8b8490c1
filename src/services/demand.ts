/**
 * Recorded demand, read back: the export (one JSONL line per request, exactly the format
 * `tavern sim --recorded` reads, with no ids at all) and what the simulator's calibration fits
 * from (the server's answer time; per region: lobby start delays, crashes per lobby-hour, session
 * lengths, seat waits; per game mode and region: the requests' mix, party sizes and no-shows).
 */
import type { DemandLobbyFact, DemandRequestFact, DemandStore } from '../io/demand.js';
import { factPages, LOBBY_LOOKBACK_MS, SessionTracker, type DemandWindow, type Session } from './demand-sessions.js';
import { QuantileSketch, type Summary } from './quantiles.js';

export { facts, LOBBY_LOOKBACK_MS, OPEN_SESSION_HORIZON_MS, type DemandWindow } from './demand-sessions.js';
export type { Summary } from './quantiles.js';

/**
 * Refusals for naming what the namespace's version lacks: client mistakes, not demand the
 * simulator could replay (its scenario has only the version's modes and regions). Not exported.
 */
const NAMING_ERRORS: ReadonlySet<string> = new Set([
  'MATCHMAKER_GAME_MODE_NOT_FOUND',
  'MATCHMAKER_NO_GAME_MODE_PROVIDED',
  'MATCHMAKER_REGION_NOT_FOUND',
  'MATCHMAKER_REGION_NOT_ENABLED_FOR_GAME_MODE',
]);

/** How long a seat stayed connected (until `now` if it still is), or undefined if it never connected. */
const sessionMs = (s: Session | undefined, now: number): number | undefined =>
  s?.connectedAt === undefined ? undefined : Math.max(0, (s.removedAt ?? now) - s.connectedAt);

/** A request's line of the export, or undefined when it cannot be replayed (see {@link exportDemand}). */
function line(r: DemandRequestFact, from: number, seats: ReadonlyMap<string, Session>, now: number, regionOf: (mode: string) => string | undefined): string | undefined {
  if (r.gameMode === undefined || NAMING_ERRORS.has(r.outcome)) return undefined;
  const region = r.region ?? regionOf(r.gameMode);
  if (region === undefined) return undefined;
  const lengths = r.seats.map((k) => sessionMs(seats.get(k), now)).filter((ms) => ms !== undefined);
  const connections = r.seats.map((k) => seats.get(k)?.connectedAt).filter((at) => at !== undefined);
  const connects = lengths.length > 0;
  return JSON.stringify({
    at_ms: r.at - from,
    kind: r.kind,
    game_mode: r.gameMode,
    region,
    party: Math.max(1, r.party),
    session_ms: connects ? Math.max(...lengths) : 0,
    connects,
    // From the answer (arrival + wait) to the party's first connection: the client's own delay.
    ...(connects ? { connect_ms: Math.max(0, Math.min(...connections) - (r.at + r.waitMs)) } : {}),
    ...(r.outcome === 'ok' ? {} : { refused: true }),
  });
}

export interface ExportOptions {
  /** The store's present (sessions still open are counted up to it). */
  readonly now: number;
  /** A request that named no region (a find left to the closest one, then refused) is replayed in this one: the mode's first. */
  readonly regionOf: (gameMode: string) => string | undefined;
}

/**
 * The namespace's requests in the window as the simulator's recorded-demand JSONL, one line each
 * (with its `\n`), in time order; `at_ms` counts from the window's start. `session_ms` is how long
 * the request's seats stayed connected (the longest of a party; still connected: until now),
 * `connects` whether any did, `connect_ms` (when one did) how long after its answer the party's first
 * seat connected, `refused: true` on a refusal (its players' sessions are unknown). A refused join has its lobby's mode
 * and region. Left out: a join to an unknown lobby (no game mode) and refusals for
 * a game mode or region the version lacks.
 *
 * One pass over the facts: a request is written once its seats are removed (or
 * {@link OPEN_SESSION_HORIZON_MS} after it), so the export holds only the sessions open at a time,
 * whatever the window's length.
 *
 * @effects demand store (read)
 * @example
 * for await (const l of exportDemand(store, ns.id, { from, to }, { now, regionOf })) res.write(l);
 */
export async function* exportDemand(store: DemandStore, namespaceId: string, window: DemandWindow, options: ExportOptions): AsyncGenerator<string> {
  for await (const lines of exportDemandPages(store, namespaceId, window, options)) yield* lines;
}

/**
 * The lines of {@link exportDemand}, those of one store read at a time (none left out, none empty):
 * for a reader that takes them in batches (the deploy preview).
 *
 * @effects demand store (read)
 * @example
 * for await (const lines of exportDemandPages(store, ns.id, { from, to }, { now, regionOf })) console.log(lines.length);
 */
export async function* exportDemandPages(store: DemandStore, namespaceId: string, window: DemandWindow, options: ExportOptions): AsyncGenerator<readonly string[]> {
  if (window.to <= window.from) return;
  const tracker = new SessionTracker(window);
  let lines: string[] = [];
  const out = (request: DemandRequestFact, seats: ReadonlyMap<string, Session>): void => {
    const l = line(request, window.from, seats, options.now, options.regionOf);
    if (l !== undefined) lines.push(`${l}\n`);
  };
  for await (const page of factPages(store, namespaceId, { from: window.from, to: Math.max(window.to, options.now + 1) })) {
    for (const f of page) tracker.add(f, out);
    if (lines.length > 0) yield lines;
    lines = [];
  }
  tracker.end(out);
  if (lines.length > 0) yield lines;
}

/** What the server observed of one region in a window. */
export interface RegionObservation {
  /** From a lobby's creation to its ready call. */
  readonly lobbyStartDelayMs: Summary;
  /** Lobbies that stopped with reason `crashed` in the window. */
  readonly crashes: number;
  /** Hours lobbies ran in the window (from creation to stop, or to the window's end). */
  readonly lobbyHours: number;
  /** How long connected seats stayed (seats of requests in the window that connected and were removed). */
  readonly sessionMs: Summary;
  /** From an admitted request's arrival to its answer. */
  readonly seatWaitMs: Summary;
}

/** What the server observed of one game mode in one region. */
export interface ModeObservation {
  readonly requests: { readonly find: number; readonly join: number; readonly create: number };
  /** Party sizes of the requests (by size). */
  readonly parties: Readonly<Record<string, number>>;
  /** Seats given, and how many of them connected. */
  readonly seats: number;
  readonly connected: number;
  readonly sessionMs: Summary;
}

export interface Observation {
  readonly window: DemandWindow;
  /** The server's own answer time: the waits of admitted requests whose seat was ready at admission. */
  readonly answerMs: Summary;
  /** By region id, in order of first appearance. */
  readonly regions: Readonly<Record<string, RegionObservation>>;
  /** By game mode, then region. */
  readonly modes: Readonly<Record<string, Readonly<Record<string, ModeObservation>>>>;
}

interface LobbyTrace {
  gameMode?: string;
  region?: string;
  createdAt?: number;
  readyAt?: number;
  stoppedAt?: number;
  crashed: boolean;
}

/** What a region's lobbies came to. */
interface LobbyAcc {
  readonly startDelays: QuantileSketch;
  crashes: number;
  lobbyMs: number;
}

/** What a region's requests came to. */
interface RegionAcc {
  readonly sessions: QuantileSketch;
  readonly waits: QuantileSketch;
}

interface ModeAcc {
  find: number;
  join: number;
  create: number;
  parties: Record<string, number>;
  seats: number;
  connected: number;
  readonly sessions: QuantileSketch;
}

const lobbyAcc = (): LobbyAcc => ({ startDelays: new QuantileSketch(), crashes: 0, lobbyMs: 0 });
const regionAcc = (): RegionAcc => ({ sessions: new QuantileSketch(), waits: new QuantileSketch() });
const modeAcc = (): ModeAcc => ({ find: 0, join: 0, create: 0, parties: {}, seats: 0, connected: 0, sessions: new QuantileSketch() });

/** The entry of `key`, made by `make` (and kept in first-use order) when absent. */
const entry = <K, V>(map: Map<K, V>, key: K, make: () => V): V => {
  const found = map.get(key);
  if (found !== undefined) return found;
  const made = make();
  map.set(key, made);
  return made;
};

/** Folds one lobby into its region: hours inside the window, its start delay and its crash when inside it. */
function foldLobby(acc: LobbyAcc, l: LobbyTrace, window: DemandWindow): void {
  const inside = (t: number | undefined): t is number => t !== undefined && t >= window.from && t < window.to;
  const start = Math.max(l.createdAt ?? window.from, window.from);
  const end = Math.min(l.stoppedAt ?? window.to, window.to);
  if (end > start) acc.lobbyMs += end - start;
  if (inside(l.readyAt) && l.createdAt !== undefined) acc.startDelays.add(l.readyAt - l.createdAt);
  if (l.crashed && inside(l.stoppedAt)) acc.crashes += 1;
}

/**
 * The lobbies of a window (and of {@link LOBBY_LOOKBACK_MS} before it), folded into their regions as
 * they stop: only the lobbies running at a time are held. A region is listed when its first lobby
 * names it. The recorder writes a lobby's `stopped` fact last.
 */
class LobbyFold {
  readonly regions = new Map<string, LobbyAcc>();
  readonly #lobbies = new Map<string, LobbyTrace>();
  readonly #window: DemandWindow;

  constructor(window: DemandWindow) {
    this.#window = window;
  }

  add(f: DemandLobbyFact): void {
    const l = entry(this.#lobbies, f.lobbyId, (): LobbyTrace => ({ crashed: false }));
    if (f.gameMode !== undefined) l.gameMode ??= f.gameMode;
    if (f.region !== undefined && l.region === undefined) {
      l.region = f.region;
      entry(this.regions, f.region, lobbyAcc);
    }
    if (f.step === 'created') l.createdAt = f.at;
    else if (f.step === 'ready') l.readyAt ??= f.at;
    else if (f.step === 'stopped') {
      l.stoppedAt = f.at;
      l.crashed = f.reason === 'crashed';
      this.#fold(f.lobbyId, l);
    }
  }

  /** Folds the lobbies still running at the window's end. */
  end(): void {
    for (const [id, l] of this.#lobbies) this.#fold(id, l);
  }

  #fold(id: string, l: LobbyTrace): void {
    this.#lobbies.delete(id);
    if (l.region !== undefined) foldLobby(this.regions.get(l.region) as LobbyAcc, l, this.#window);
  }
}

function foldRequest(r: DemandRequestFact, seats: ReadonlyMap<string, Session>, region: RegionAcc, mode: ModeAcc, answers: QuantileSketch): void {
  mode[r.kind] += 1;
  const size = String(Math.max(1, r.party));
  mode.parties[size] = (mode.parties[size] ?? 0) + 1;
  if (r.outcome !== 'ok') return;
  region.waits.add(r.waitMs);
  if (r.seatReady === true) answers.add(r.waitMs);
  for (const k of r.seats) {
    mode.seats += 1;
    const s = seats.get(k);
    if (s?.connectedAt === undefined) continue;
    mode.connected += 1;
    if (s.removedAt === undefined) continue;
    region.sessions.add(s.removedAt - s.connectedAt);
    mode.sessions.add(s.removedAt - s.connectedAt);
  }
}

/**
 * What the server observed of a namespace in the window, for the simulator's calibration. Lobby
 * facts are read from {@link LOBBY_LOOKBACK_MS} before the window; sessions from the window's start
 * to `now`. One pass over the facts; its memory is bounded whatever the window's length (the
 * lobbies and sessions open at a time, and bounded summaries: {@link QuantileSketch}).
 *
 * @effects demand store (read)
 * @example
 * const seen = await observeDemand(store, ns.id, { from: now - 86_400_000, to: now }, now);
 * seen.regions['eu']?.crashes;
 */
export async function observeDemand(store: DemandStore, namespaceId: string, window: DemandWindow, now: number): Promise<Observation> {
  const lobbies = new LobbyFold(window);
  const regions = new Map<string, RegionAcc>();
  const modes = new Map<string, Map<string, ModeAcc>>();
  const answers = new QuantileSketch();
  const tracker = new SessionTracker(window);
  const out = (f: DemandRequestFact, seats: ReadonlyMap<string, Session>): void => {
    if (f.gameMode === undefined || f.region === undefined) return;
    const mode = entry(entry(modes, f.gameMode, () => new Map<string, ModeAcc>()), f.region, modeAcc);
    foldRequest(f, seats, entry(regions, f.region, regionAcc), mode, answers);
  };
  for await (const page of factPages(store, namespaceId, { from: window.from - LOBBY_LOOKBACK_MS, to: Math.max(window.to, now + 1) })) {
    for (const f of page) {
      if (f.type !== 'lobby') tracker.add(f, out);
      else if (f.at < window.to) lobbies.add(f);
    }
  }
  tracker.end(out);
  lobbies.end();
  // Regions in order of first appearance: by their requests, then by their lobbies.
  for (const id of lobbies.regions.keys()) entry(regions, id, regionAcc);
  const regionsOut: Record<string, RegionObservation> = {};
  for (const [id, r] of regions) {
    const l = lobbies.regions.get(id) ?? lobbyAcc();
    regionsOut[id] = {
      lobbyStartDelayMs: l.startDelays.summary(),
      crashes: l.crashes,
      lobbyHours: l.lobbyMs / 3_600_000,
      sessionMs: r.sessions.summary(),
      seatWaitMs: r.waits.summary(),
    };
  }
  const modesOut: Record<string, Record<string, ModeObservation>> = {};
  for (const [name, byRegion] of modes) {
    const modeOut: Record<string, ModeObservation> = {};
    for (const [region, m] of byRegion) {
      modeOut[region] = { requests: { find: m.find, join: m.join, create: m.create }, parties: m.parties, seats: m.seats, connected: m.connected, sessionMs: m.sessions.summary() };
    }
    modesOut[name] = modeOut;
  }
  return { window, answerMs: answers.summary(), regions: regionsOut, modes: modesOut };
}
