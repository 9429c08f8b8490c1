/**
 * Calibration: a scenario fitted to what a Tavern server observed of a namespace (`GET
 * .../analytics/matchmaker/demand/observed`). Its version is the namespace's current config; the
 * server's answer time (the waits of seats ready at admission: median and p95 → lognormal); per
 * region, its infrastructure's lobby start delay (median and p95 → lognormal), crash rate per
 * lobby-hour (its containers unbounded, as Tavern leaves them; the namespace's `lobby_count_max`
 * bounds the active lobbies); per game mode and region, a synthetic demand (arrival rate, request mix, party sizes,
 * no-shows, session lengths). A figure with too few samples keeps the default and says so.
 */
import { parseVersionConfig, resolveVersion } from '../../core/config/index.js';
import type { NumericDistribution } from './types.js';

/** Samples a quantile fit needs. */
export const MIN_SAMPLES = 20;
/** Lobby-hours a crash rate needs. */
export const MIN_LOBBY_HOURS = 1;
/**
 * The containers a calibrated region can run: Tavern bounds no region's containers, only the
 * namespace's active lobbies (`lobby_count_max`, at most 32,768), which the scenario keeps apart.
 */
export const CALIBRATED_REGION_CAPACITY = 32_768;
/** z of the 95th percentile of a standard normal (the scenario's lognormal is given by median and p95). */
const Z95 = 1.6448536269514722;

/**
 * The figures kept when the server saw too few samples (those of the built-in `steady`; an answer at
 * once, as a scenario without `answer_ms` has it).
 */
export const CALIBRATION_DEFAULTS: {
  readonly answerMs: NumericDistribution;
  readonly lobbyStartDelayMs: NumericDistribution;
  readonly lobbyCrashRatePerHour: number;
  readonly sessionMs: NumericDistribution;
} = Object.freeze({
  answerMs: Object.freeze({ kind: 'constant', value: 0 }),
  lobbyStartDelayMs: Object.freeze({ kind: 'lognormal', median: 3_000, p95: 8_000 }),
  lobbyCrashRatePerHour: 0,
  sessionMs: Object.freeze({ kind: 'lognormal', median: 900_000, p95: 2_700_000 }),
});

/** A summary as the server sends it. */
export interface ObservedSummary {
  readonly samples: number;
  readonly median?: number;
  readonly p95?: number;
}

/** The observed endpoint's answer (snake_case, as on the wire). */
export interface Observed {
  readonly start_ts: string;
  readonly end_ts: string;
  /** The waits of admitted requests whose seat was ready at once (absent from a server before it). */
  readonly answer_ms?: ObservedSummary;
  readonly regions: Readonly<Record<string, {
    readonly lobby_start_delay_ms: ObservedSummary;
    readonly crashes: number;
    readonly lobby_hours: number;
    readonly session_ms: ObservedSummary;
    readonly seat_wait_ms: ObservedSummary;
  }>>;
  readonly game_modes: Readonly<Record<string, Readonly<Record<string, {
    readonly requests: { readonly find: number; readonly join: number; readonly create: number };
    readonly parties: Readonly<Record<string, number>>;
    readonly seats: number;
    readonly connected: number;
    readonly session_ms: ObservedSummary;
  }>>>>;
}

/** A region as the server describes it (`GET /matchmaker/regions`-like). */
export interface RegionDescription {
  readonly id: string;
  readonly display_name: string;
  readonly coords?: { readonly latitude: number; readonly longitude: number };
}

export interface CalibrationInput {
  /** The namespace's current version config (as `GET .../versions/{id}` returns it). */
  readonly version: unknown;
  readonly observed: Observed;
  /** The server's regions (display names, coordinates); a version region missing here is named by its id. */
  readonly regions: readonly RegionDescription[];
  /** Lobbies each region may run (the namespace's `lobby_count_max`). */
  readonly lobbyCountMax: number;
  readonly name: string;
  readonly seed?: number;
}

/** A fitted figure, or why the default was kept. */
export type Fit<T> = { readonly fitted: true; readonly value: T; readonly samples: number } | { readonly fitted: false; readonly value: T; readonly samples: number; readonly reason: string };

/** The log-space parameters of a lognormal given by its median and p95. */
export const lognormalParams = (median: number, p95: number): { mu: number; sigma: number } => {
  const mu = Math.log(median);
  return { mu, sigma: (Math.log(p95) - mu) / Z95 };
};

/**
 * A distribution from a summary: lognormal through its median and p95 (a constant when they are
 * equal), or the default when there are fewer than {@link MIN_SAMPLES} samples or none positive.
 *
 * @example
 * fitQuantiles({ samples: 50, median: 2000, p95: 6000 }, fallback); // { fitted: true, value: { kind: 'lognormal', median: 2000, p95: 6000 }, samples: 50 }
 */
export function fitQuantiles(s: ObservedSummary, fallback: NumericDistribution): Fit<NumericDistribution> {
  const { samples, median, p95 } = s;
  if (samples < MIN_SAMPLES || median === undefined || p95 === undefined) {
    return { fitted: false, value: fallback, samples, reason: `${samples} samples, at least ${MIN_SAMPLES} needed` };
  }
  if (median <= 0) return { fitted: false, value: fallback, samples, reason: 'the median is 0 ms' };
  return { fitted: true, samples, value: p95 > median ? { kind: 'lognormal', median, p95 } : { kind: 'constant', value: median } };
}

/**
 * Crashes per lobby-hour, or the default below {@link MIN_LOBBY_HOURS}.
 *
 * @example
 * fitCrashRate(3, 150); // { fitted: true, value: 0.02, samples: 3 }
 */
export function fitCrashRate(crashes: number, lobbyHours: number): Fit<number> {
  if (lobbyHours < MIN_LOBBY_HOURS) {
    return { fitted: false, value: CALIBRATION_DEFAULTS.lobbyCrashRatePerHour, samples: crashes, reason: `${lobbyHours.toFixed(2)} lobby-hours, at least ${MIN_LOBBY_HOURS} needed` };
  }
  return { fitted: true, value: crashes / lobbyHours, samples: crashes };
}

const describe = (d: NumericDistribution): string => {
  switch (d.kind) {
    case 'lognormal': {
      const { mu, sigma } = lognormalParams(d.median, d.p95);
      return `lognormal median ${Math.round(d.median)} ms, p95 ${Math.round(d.p95)} ms (mu ${mu.toFixed(3)}, sigma ${sigma.toFixed(3)})`;
    }
    case 'constant':
      return `constant ${Math.round(d.value)} ms`;
    case 'uniform':
      return `uniform ${Math.round(d.min)}..${Math.round(d.max)} ms`;
    case 'exponential':
      return `exponential mean ${Math.round(d.mean)} ms`;
  }
};

const reportLine = (what: string, fit: Fit<NumericDistribution> | Fit<number>, show: (v: never) => string, from: string): string =>
  fit.fitted ? `  ${what}: ${show(fit.value as never)} (from ${fit.samples} ${from})` : `  ${what}: not fitted (${fit.reason}): kept ${show(fit.value as never)}`;

/** The regions each game mode of the version is offered in, in order, and the modes. */
function versionRegions(version: unknown): { modes: readonly { name: string; regions: readonly string[] }[] } {
  const parsed = parseVersionConfig(version);
  if (!parsed.ok) throw new Error(`the namespace's version does not parse: ${parsed.error.map((p) => p.path.join('.')).join(', ')}`);
  const resolved = resolveVersion(parsed.value);
  return { modes: resolved.gameModes.map((m) => ({ name: m.name, regions: m.regions.map((r) => r.name) })) };
}

/**
 * The fitted scenario (snake_case JSON, ready for `tavern sim`) and the report lines that say
 * what was fitted from how many samples, and what kept its default and why.
 *
 * @example
 * const { scenario, report } = calibrateScenario({ version, observed, regions, lobbyCountMax: 128, name: 'prod' });
 */
export function calibrateScenario(input: CalibrationInput): { readonly scenario: Record<string, unknown>; readonly report: readonly string[] } {
  const { observed } = input;
  const from = Date.parse(observed.start_ts);
  const durationMs = Date.parse(observed.end_ts) - from;
  const { modes } = versionRegions(input.version);
  const used = new Set(modes.flatMap((m) => m.regions));
  const described = new Map(input.regions.map((r) => [r.id, r]));
  const order = [...input.regions.map((r) => r.id).filter((id) => used.has(id)), ...[...used].filter((id) => !described.has(id))];
  const report: string[] = [`window ${observed.start_ts} .. ${observed.end_ts} (${Math.round(durationMs / 60_000)} min)`];
  const answer = fitQuantiles(observed.answer_ms ?? { samples: 0 }, CALIBRATION_DEFAULTS.answerMs);
  report.push(reportLine('answer time', answer, describe, 'seats ready at once').trimStart());

  const regions = order.map((id) => {
    const seen = observed.regions[id];
    const delay = fitQuantiles(seen?.lobby_start_delay_ms ?? { samples: 0 }, CALIBRATION_DEFAULTS.lobbyStartDelayMs);
    const crash = fitCrashRate(seen?.crashes ?? 0, seen?.lobby_hours ?? 0);
    const session = fitQuantiles(seen?.session_ms ?? { samples: 0 }, CALIBRATION_DEFAULTS.sessionMs);
    report.push(`region ${id}:`);
    report.push(reportLine('lobby start delay', delay, describe, 'lobbies made ready'));
    report.push(reportLine('crash rate', crash, (v: number) => `${v.toFixed(4)} per lobby-hour`, `crashes in ${(seen?.lobby_hours ?? 0).toFixed(2)} lobby-hours`));
    report.push(reportLine('session length', session, describe, 'sessions'));
    const d = described.get(id);
    return {
      id,
      display_name: d?.display_name ?? id,
      ...(d?.coords === undefined ? {} : { coords: d.coords }),
      lobby_start_delay_ms: delay.value,
      lobby_crash_rate_per_hour: crash.value,
      lobby_count_max: CALIBRATED_REGION_CAPACITY,
    };
  });

  const minutes = durationMs / 60_000;
  const demand: Record<string, Record<string, unknown>> = {};
  for (const mode of modes) {
    for (const region of mode.regions) {
      const seen = observed.game_modes[mode.name]?.[region];
      const total = seen === undefined ? 0 : seen.requests.find + seen.requests.join + seen.requests.create;
      if (seen === undefined || total === 0) continue;
      const session = fitQuantiles(seen.session_ms, CALIBRATION_DEFAULTS.sessionMs);
      report.push(`demand ${mode.name} in ${region}: ${total} requests (${(total / minutes).toFixed(2)} per minute), ${seen.connected} of ${seen.seats} seats connected`);
      report.push(reportLine('session length', session, describe, 'sessions'));
      (demand[mode.name] ??= {})[region] = {
        arrivals: { kind: 'constant', per_minute: total / minutes },
        party_size: { kind: 'choice', weights: seen.parties },
        mix: seen.requests,
        session_ms: session.value,
        no_show_share: seen.seats === 0 ? 0 : 1 - seen.connected / seen.seats,
      };
    }
  }
  if (Object.keys(demand).length === 0) report.push('no requests in the window: the scenario has no synthetic demand (replay one with --recorded)');

  const scenario: Record<string, unknown> = {
    name: input.name,
    description: `Calibrated from ${observed.start_ts} .. ${observed.end_ts}.`,
    version: input.version,
    ...(Object.keys(demand).length === 0 ? {} : { demand }),
    infrastructure: { regions, lobby_count_max: input.lobbyCountMax, answer_ms: answer.value },
    duration_ms: durationMs,
    seed: input.seed ?? 1,
  };
  return { scenario, report };
}
