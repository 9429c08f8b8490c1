/**
 * Recorded demand, read back: the export (one JSONL line per request, exactly the format
 * `tavern sim --recorded` reads, with no ids at all) and what the simulator's calibration fits
 * from (the server's answer time; per region: lobby start delays, crashes per lobby-hour, session
 * lengths, seat waits; per game mode and region: the requests' mix, party sizes and no-shows).
 */
import type { DemandFact, DemandLobbyFact, DemandRequestFact, DemandStore } from '../io/demand.js';

/** `[from, to)` in epoch ms. */
export interface DemandWindow {
  readonly from: number;
  readonly to: number;
}

/** Facts per read. */
const PAGE = 5_000;

/** Lobby facts are read from this long before the window, so a lobby created before it still counts its hours and its region. */
export const LOBBY_LOOKBACK_MS = 24 * 60 * 60 * 1000;

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

/**
 * Every fact of a namespace in the window, in time order, read a page at a time.
 *
 * @example
 * for await (const f of facts(store, namespaceId, { from, to })) console.log(f.type);
 */
export async function* facts(store: DemandStore, namespaceId: string, window: DemandWindow): AsyncGenerator<DemandFact> {
  let after: { at: number; seq: number } | undefined;
  for (;;) {
    const page = await store.readDemand(namespaceId, window, after, PAGE);
    for (const r of page) yield r.fact;
    const last = page[page.length - 1];
    if (last === undefined || page.length < PAGE) return;
    after = { at: last.fact.at, seq: last.seq };
  }
}

interface Session {
  connectedAt?: number;
  removedAt?: number;
}

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
 * How long a request waits in the export for its seats' sessions to end: one still open this long
 * after its request (by the facts' time) is counted as still open (up to now). A player's session
 * is minutes to hours; the bound keeps the export's memory to this much of the recording.
 */
export const OPEN_SESSION_HORIZON_MS = LOBBY_LOOKBACK_MS;

interface Waiting {
  readonly request: DemandRequestFact;
  /** Its seats not removed yet. */
  open: number;
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
  for await (const { request, seats } of withSessions(store, namespaceId, window, options.now)) {
    const l = line(request, window.from, seats, options.now, options.regionOf);
    if (l !== undefined) yield `${l}\n`;
  }
}

/**
 * The requests of the window in time order, each with its seats' sessions as the facts up to
 * `now` tell them: one pass, a request handed over once its seats are removed (or
 * {@link OPEN_SESSION_HORIZON_MS} after it), so only the sessions open at a time are held.
 */
async function* withSessions(store: DemandStore, namespaceId: string, window: DemandWindow, now: number): AsyncGenerator<{ request: DemandRequestFact; seats: ReadonlyMap<string, Session> }> {
  if (window.to <= window.from) return;
  const seats = new Map<string, Session>();
  const queue: Waiting[] = [];
  const bySeat = new Map<string, Waiting>();
  let head = 0;
  function* ready(until: number): Generator<{ request: DemandRequestFact; seats: ReadonlyMap<string, Session> }> {
    for (; head < queue.length; head += 1) {
      const w = queue[head] as Waiting;
      if (w.open > 0 && w.request.at + OPEN_SESSION_HORIZON_MS > until) break;
      yield { request: w.request, seats };
      for (const k of w.request.seats) {
        seats.delete(k);
        bySeat.delete(k);
      }
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
  }
  for await (const f of facts(store, namespaceId, { from: window.from, to: Math.max(window.to, now + 1) })) {
    if (f.type === 'request' && f.at < window.to) {
      const w: Waiting = { request: f, open: f.seats.length };
      queue.push(w);
      for (const k of f.seats) {
        seats.set(k, {});
        bySeat.set(k, w);
      }
    } else if (f.type === 'seat') {
      const s = seats.get(f.seat);
      const w = bySeat.get(f.seat);
      if (s === undefined || w === undefined) continue;
      if (f.step === 'connected') s.connectedAt ??= f.at;
      else if (s.removedAt === undefined) {
        s.removedAt = f.at;
        w.open -= 1;
      }
    }
    yield* ready(f.at);
  }
  yield* ready(Number.POSITIVE_INFINITY);
}

/** How many values a summary came from, and their median and 95th percentile (nearest rank). */
export interface Summary {
  readonly samples: number;
  readonly median?: number;
  readonly p95?: number;
}

/**
 * @example
 * summarize([1, 2, 3, 4]); // { samples: 4, median: 2, p95: 4 }
 */
export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return { samples: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (q: number): number => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number;
  return { samples: sorted.length, median: rank(0.5), p95: rank(0.95) };
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

interface RegionAcc {
  startDelays: number[];
  crashes: number;
  lobbyMs: number;
  sessions: number[];
  waits: number[];
}

interface ModeAcc {
  find: number;
  join: number;
  create: number;
  parties: Record<string, number>;
  seats: number;
  connected: number;
  sessions: number[];
}

const regionAcc = (): RegionAcc => ({ startDelays: [], crashes: 0, lobbyMs: 0, sessions: [], waits: [] });

function lobbyStep(lobbies: Map<string, LobbyTrace>, f: DemandLobbyFact): void {
  const l = lobbies.get(f.lobbyId) ?? { crashed: false };
  if (f.gameMode !== undefined) l.gameMode ??= f.gameMode;
  if (f.region !== undefined) l.region ??= f.region;
  if (f.step === 'created') l.createdAt = f.at;
  else if (f.step === 'ready') l.readyAt ??= f.at;
  else if (f.step === 'stopped') {
    l.stoppedAt ??= f.at;
    l.crashed ||= f.reason === 'crashed';
  }
  lobbies.set(f.lobbyId, l);
}

/** Folds one lobby into its region: hours inside the window, its start delay and its crash when inside it. */
function foldLobby(acc: RegionAcc, l: LobbyTrace, window: DemandWindow): void {
  const inside = (t: number | undefined): t is number => t !== undefined && t >= window.from && t < window.to;
  const start = Math.max(l.createdAt ?? window.from, window.from);
  const end = Math.min(l.stoppedAt ?? window.to, window.to);
  if (end > start) acc.lobbyMs += end - start;
  if (inside(l.readyAt) && l.createdAt !== undefined) acc.startDelays.push(l.readyAt - l.createdAt);
  if (l.crashed && inside(l.stoppedAt)) acc.crashes += 1;
}

function foldRequest(r: DemandRequestFact, seats: ReadonlyMap<string, Session>, region: RegionAcc, mode: ModeAcc, answers: number[]): void {
  mode[r.kind] += 1;
  const size = String(Math.max(1, r.party));
  mode.parties[size] = (mode.parties[size] ?? 0) + 1;
  if (r.outcome !== 'ok') return;
  region.waits.push(r.waitMs);
  if (r.seatReady === true) answers.push(r.waitMs);
  for (const k of r.seats) {
    mode.seats += 1;
    const s = seats.get(k);
    if (s?.connectedAt === undefined) continue;
    mode.connected += 1;
    if (s.removedAt === undefined) continue;
    region.sessions.push(s.removedAt - s.connectedAt);
    mode.sessions.push(s.removedAt - s.connectedAt);
  }
}

/**
 * What the server observed of a namespace in the window, for the simulator's calibration. Lobby
 * facts are read from {@link LOBBY_LOOKBACK_MS} before the window; sessions from the window's start
 * to `now`.
 *
 * @effects demand store (read)
 * @example
 * const seen = await observeDemand(store, ns.id, { from: now - 86_400_000, to: now }, now);
 * seen.regions['eu']?.crashes;
 */
export async function observeDemand(store: DemandStore, namespaceId: string, window: DemandWindow, now: number): Promise<Observation> {
  const lobbies = new Map<string, LobbyTrace>();
  const regions = new Map<string, RegionAcc>();
  const modes = new Map<string, Map<string, ModeAcc>>();
  const answers: number[] = [];
  const regionOf = (id: string): RegionAcc => {
    const found = regions.get(id) ?? regionAcc();
    regions.set(id, found);
    return found;
  };
  for await (const f of facts(store, namespaceId, { from: window.from - LOBBY_LOOKBACK_MS, to: window.to })) if (f.type === 'lobby') lobbyStep(lobbies, f);
  for await (const { request: f, seats } of withSessions(store, namespaceId, window, now)) {
    if (f.gameMode === undefined || f.region === undefined) continue;
    const byRegion = modes.get(f.gameMode) ?? new Map<string, ModeAcc>();
    modes.set(f.gameMode, byRegion);
    const mode = byRegion.get(f.region) ?? { find: 0, join: 0, create: 0, parties: {}, seats: 0, connected: 0, sessions: [] };
    byRegion.set(f.region, mode);
    foldRequest(f, seats, regionOf(f.region), mode, answers);
  }
  for (const l of lobbies.values()) if (l.region !== undefined) foldLobby(regionOf(l.region), l, window);
  const regionsOut: Record<string, RegionObservation> = {};
  for (const [id, r] of regions) {
    regionsOut[id] = {
      lobbyStartDelayMs: summarize(r.startDelays),
      crashes: r.crashes,
      lobbyHours: r.lobbyMs / 3_600_000,
      sessionMs: summarize(r.sessions),
      seatWaitMs: summarize(r.waits),
    };
  }
  const modesOut: Record<string, Record<string, ModeObservation>> = {};
  for (const [name, byRegion] of modes) {
    const out: Record<string, ModeObservation> = {};
    for (const [region, m] of byRegion) {
      out[region] = { requests: { find: m.find, join: m.join, create: m.create }, parties: m.parties, seats: m.seats, connected: m.connected, sessionMs: summarize(m.sessions) };
    }
    modesOut[name] = out;
  }
  return { window, answerMs: summarize(answers), regions: regionsOut, modes: modesOut };
}
