/**
 * The deploy preview: a namespace's recorded demand over a window (default the last 7 days, or
 * whatever is recorded when less) replayed through the simulator twice, calibrated from the same
 * recording (`tavern sim calibrate`'s fit): under the live version's config and under a new one.
 * The recording is streamed from the store (`source.ts`): once for the calibration, once for both
 * runs, which go side by side in two worker threads (`workers.ts`; or one after the other in this
 * thread, with the same result), so memory does not grow with its length; the result is
 * deterministic for a seed. It says how far it can be trusted
 * (`bound.ts`), when the recording is too short, and what it assumed for a game mode or region the
 * recording cannot speak for.
 */
import { parseVersionConfig, resolveVersion } from '../../core/config/index.js';
import type { ResolvedVersion } from '../../core/config/types.js';
import type { DemandStore } from '../../io/demand.js';
import { exportDemandPages, observeDemand, type Observation, type Summary } from '../../services/demand.js';
import { calibrateScenario, type Observed, type RegionDescription } from '../scenario/calibrate.js';
import type { RunResult } from '../world/run.js';
import { boundText, ERROR_BOUND, type ErrorBound } from './bound.js';
import { compareFigures, figuresOf, type FigureRow, type Figures, type TierPrices } from './figures.js';
import { previewSeries, type PreviewSeries } from './series.js';
import { jobScenario, replayRecorded, type ReplayJob, type ReplayOutcome, type RequestCount } from './replay.js';
import { textBatches } from './source.js';
import { replayInWorkers } from './workers.js';

const HOUR_MS = 3_600_000;
/** The window a preview replays unless asked otherwise. */
export const DEFAULT_SINCE_MS = 7 * 24 * HOUR_MS;
/** A recording shorter than a day misses a daily cycle: the preview says so. */
export const SHORT_RECORDING_MS = 24 * HOUR_MS;

export interface PreviewInput {
  readonly store: DemandStore;
  readonly namespaceId: string;
  /** The server's present (epoch ms): the window ends here. */
  readonly now: number;
  /** How far back the window starts (default {@link DEFAULT_SINCE_MS}). */
  readonly sinceMs?: number;
  /** The live version's config (as stored), and the new one (a createGameVersion `config`). */
  readonly live: unknown;
  readonly next: unknown;
  /** The server's regions, and its namespace's `lobby_count_max`. */
  readonly regions: readonly RegionDescription[];
  readonly lobbyCountMax: number;
  /** Price per lobby-hour by tier (`TAVERN_TIER_PRICES`); absent: no cost figures. */
  readonly prices?: TierPrices;
  readonly seed?: number;
  /**
   * Run the two replays side by side in worker threads on one read of the recording (default), or
   * one after the other in this thread, each reading it: the same result either way.
   */
  readonly threads?: boolean;
}

export interface PreviewResult {
  /** The window replayed (epoch ms) and the one asked for. */
  readonly window: { readonly from: number; readonly to: number; readonly askedFrom: number };
  /** Requests replayed (each run replays all of them). */
  readonly requests: number;
  readonly seed: number;
  readonly live: Figures;
  readonly next: Figures;
  readonly rows: readonly FigureRow[];
  /** What the reader must know: a short recording, assumed demand, removed modes, unpriced tiers. */
  readonly notes: readonly string[];
  readonly errorBound: ErrorBound & { readonly text: string };
  /** Both runs over time, bounded in size (the dashboard's charts). */
  readonly series: PreviewSeries;
  /** The two runs, for charts (not in the JSON). */
  readonly runs: { readonly live: RunResult; readonly next: RunResult };
}

const wireSummary = (s: Summary): { samples: number; median?: number; p95?: number } =>
  s.median === undefined ? { samples: s.samples } : { samples: s.samples, median: s.median, ...(s.p95 === undefined ? {} : { p95: s.p95 }) };

/** What the observed endpoint answers, from the service's observation (calibration reads that shape). */
export function observedWire(seen: Observation): Observed {
  const iso = (ms: number): string => new Date(ms).toISOString();
  return {
    start_ts: iso(seen.window.from),
    end_ts: iso(seen.window.to),
    answer_ms: wireSummary(seen.answerMs),
    regions: Object.fromEntries(Object.entries(seen.regions).map(([id, r]) => [id, {
      lobby_start_delay_ms: wireSummary(r.lobbyStartDelayMs), crashes: r.crashes, lobby_hours: r.lobbyHours,
      session_ms: wireSummary(r.sessionMs), seat_wait_ms: wireSummary(r.seatWaitMs),
    }])),
    game_modes: Object.fromEntries(Object.entries(seen.modes).map(([mode, regions]) => [mode, Object.fromEntries(Object.entries(regions).map(([region, m]) => [region, {
      requests: m.requests, parties: m.parties, seats: m.seats, connected: m.connected, session_ms: wireSummary(m.sessionMs),
    }]))])),
  };
}

const resolved = (config: unknown, which: string): ResolvedVersion => {
  const parsed = parseVersionConfig(config);
  if (!parsed.ok) throw new Error(`the ${which} config does not parse: ${parsed.error.map((p) => p.path.join('.')).join(', ')}`);
  return resolveVersion(parsed.value);
};

/** Both replays' jobs, fitted to one observation; both run in the union of the two versions' regions. */
function jobs(input: PreviewInput, observed: Observed, durationMs: number, seed: number): { live: ReplayJob; next: ReplayJob } {
  const fit = (version: unknown, name: string): Record<string, unknown> =>
    calibrateScenario({ version, observed, regions: input.regions, lobbyCountMax: input.lobbyCountMax, name, seed }).scenario;
  const live = fit(input.live, 'live');
  const next = fit(input.next, 'new');
  type Infra = { regions: { id: string }[] };
  const liveRegions = (live['infrastructure'] as Infra).regions;
  const nextRegions = (next['infrastructure'] as Infra).regions;
  const union = [...liveRegions, ...nextRegions.filter((r) => !liveRegions.some((l) => l.id === r.id))];
  const job = (json: Record<string, unknown>, which: string): ReplayJob => {
    const full: ReplayJob = { scenario: { ...json, duration_ms: Math.max(1, durationMs), infrastructure: { ...(json['infrastructure'] as object), regions: union } }, seed };
    jobScenario(full, which);
    return full;
  };
  return { live: job(live, 'live'), next: job(next, 'new') };
}

/** What the recording cannot speak for: the new config's modes and regions without recorded demand. */
function unrecorded(next: ResolvedVersion, live: ResolvedVersion, observed: Observed): string[] {
  const notes: string[] = [];
  for (const mode of next.gameModes) {
    const wasLive = live.gameModes.find((m) => m.name === mode.name);
    const silent = mode.regions.filter((r) => observed.game_modes[mode.name]?.[r.name] === undefined);
    if (wasLive === undefined) {
      notes.push(`game mode ${mode.name} is new: nothing recorded asks for it, so the preview assumes no players for it; its idle lobbies (${mode.regions.map((r) => `${r.idleLobbies.min} in ${r.name}`).join(', ')}) are counted`);
      continue;
    }
    for (const r of silent) {
      if (wasLive.regions.some((x) => x.name === r.name)) continue;
      notes.push(`region ${r.name} is new for ${mode.name}: nothing recorded asks for it there, so the preview assumes its players keep to the regions they asked for; its ${r.idleLobbies.min} idle lobbies are counted`);
    }
  }
  return notes;
}

/** Recorded requests the new config does not offer (its mode or region is gone), as the new run counted them. */
function offeredNotes(next: ResolvedVersion, replayed: readonly RequestCount[]): string[] {
  const gone = new Map<string, number>();
  for (const r of replayed) {
    const mode = next.gameModes.find((m) => m.name === r.gameMode);
    if (mode !== undefined && mode.regions.some((x) => x.name === r.region)) continue;
    const key = mode === undefined ? `game mode ${r.gameMode}` : `${r.gameMode} in ${r.region}`;
    gone.set(key, (gone.get(key) ?? 0) + r.count);
  }
  return [...gone].map(([what, n]) => `${n} recorded requests ask for ${what}, which the new config does not offer: the new version refuses them`);
}

const hours = (ms: number): string => `${(ms / HOUR_MS).toFixed(1)} h`;

/**
 * Replays the namespace's recording under both configs and compares them.
 *
 * @effects demand store (read)
 * @example
 * const p = await previewDeploy({ store, namespaceId, now, live, next, regions, lobbyCountMax: 128, seed: 1 });
 * p.rows.find((r) => r.name === 'lobby_hours')?.changePct;
 */
export async function previewDeploy(input: PreviewInput): Promise<PreviewResult> {
  const seed = (input.seed ?? 1) >>> 0;
  const askedFrom = input.now - (input.sinceMs ?? DEFAULT_SINCE_MS);
  const to = input.now;
  const first = await input.store.readDemand(input.namespaceId, { from: askedFrom, to }, undefined, 1);
  const from = Math.max(askedFrom, first[0]?.fact.at ?? askedFrom);
  const notes: string[] = [];
  if (first.length === 0) notes.push(`nothing is recorded since ${new Date(askedFrom).toISOString()}: the preview shows both versions without players (idle lobbies only)`);
  else if (from - askedFrom > (to - askedFrom) / 100) notes.push(`the recording starts at ${new Date(from).toISOString()}: the preview covers ${hours(to - from)}, not the ${hours(to - askedFrom)} asked for`);
  if (first.length > 0 && to - from < SHORT_RECORDING_MS) notes.push(`the recording is short (${hours(to - from)}; a day at least holds a daily cycle): the figures speak for this window only`);

  const liveVersion = resolved(input.live, 'live');
  const nextVersion = resolved(input.next, 'new');
  const observed = observedWire(await observeDemand(input.store, input.namespaceId, { from, to }, input.now));
  const { live, next } = jobs(input, observed, to - from, seed);
  notes.push(...unrecorded(nextVersion, liveVersion, observed));

  const regionOf = (mode: string): string | undefined => liveVersion.gameModes.find((m) => m.name === mode)?.regions[0]?.name;
  const texts = (): AsyncIterable<string> => textBatches(exportDemandPages(input.store, input.namespaceId, { from, to }, { now: input.now, regionOf }));
  let outcomes: ReplayOutcome[];
  if (input.threads === false) outcomes = [await replayRecorded(live, texts()), await replayRecorded(next, texts())];
  else outcomes = await replayInWorkers([live, next], texts());
  const [liveOut, nextOut] = outcomes as [ReplayOutcome, ReplayOutcome];
  const requests = liveOut.requests.reduce((n, r) => n + r.count, 0);
  notes.push(...offeredNotes(nextVersion, nextOut.requests));

  const liveRun = liveOut.run;
  const nextRun = nextOut.run;
  const a = figuresOf(liveRun, liveVersion, input.prices);
  const b = figuresOf(nextRun, nextVersion, input.prices);
  const unpriced = [...new Set([...a.unpriced, ...b.unpriced])];
  if (input.prices === undefined) notes.push('no cost: the operator has set no tier prices (TAVERN_TIER_PRICES)');
  else if (unpriced.length > 0) notes.push(`the cost leaves out lobbies of tiers without a price: ${unpriced.join(', ')}`);
  return {
    window: { from, to, askedFrom },
    requests,
    seed,
    live: a.figures,
    next: b.figures,
    rows: compareFigures(a.figures, b.figures),
    notes,
    errorBound: { ...ERROR_BOUND, text: boundText(ERROR_BOUND) },
    series: previewSeries(from, to, liveRun.samples, nextRun.samples),
    runs: { live: liveRun, next: nextRun },
  };
}
