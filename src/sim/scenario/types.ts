/**
 * The simulator's scenario: a game version, synthetic (or recorded) player demand per game mode
 * and region, the infrastructure each region runs on, a duration and a seed. camelCase here; the
 * file format (snake_case JSON) is described by `scenario.schema.json` and read by `parseScenario`.
 *
 * Distributions and rate curves are the engine's own types (`src/sim/engine`), so a parsed
 * scenario feeds `sample` and `nextArrival` directly.
 */
import type { ResolvedVersion, VersionConfig } from '../../core/config/types.js';
import type { RegionInfo } from '../../core/world.js';
import type { RateCurve } from '../engine/curve.js';
import type { ChoiceDistribution, Distribution, NumericDistribution } from '../../core/distribution.js';

export type { ChoiceDistribution, Distribution, NumericDistribution, RateCurve };
export type { RatePoint } from '../engine/curve.js';

/** Party sizes: any distribution (rounded, at least 1) or an explicit choice of sizes. */
export type PartySizeDistribution = Distribution | ChoiceDistribution;

/** Relative weights of the three matchmaking requests; at least one is positive. */
export interface RequestMix {
  readonly find: number;
  readonly join: number;
  readonly create: number;
}

/** Demand for one game mode in one region. */
export interface RegionDemand {
  readonly arrivals: RateCurve;
  readonly partySize: PartySizeDistribution;
  readonly mix: RequestMix;
  readonly sessionMs: NumericDistribution;
  /** Share (0..1) of reserved players that never connect. */
  readonly noShowShare: number;
  /** Created lobbies ask for this max player count (the mode must allow dynamic max players). */
  readonly dynamicMaxPlayers?: NumericDistribution;
  /** Tags of created lobbies and find filters (the mode must be taggable). */
  readonly tags?: Readonly<Record<string, string>>;
}

/** Demand keyed by game mode, then by region id (null-prototype maps, configuration order). */
export type Demand = Readonly<Record<string, Readonly<Record<string, RegionDemand>>>>;

/** One region the simulated operator runs. */
export interface InfrastructureRegion {
  /** What the core's world is created from (`provider` defaults to `'Tavern'`). */
  readonly region: RegionInfo;
  /** Time from a lobby's start to its ready call (cold start). */
  readonly lobbyStartDelayMs: NumericDistribution;
  /** Crashes per lobby-hour (a Poisson rate, ≥ 0). */
  readonly lobbyCrashRatePerHour: number;
  /** Lobbies the region can run at once. */
  readonly lobbyCountMax: number;
  readonly costPerLobbyHour?: number;
}

/** The developer's verification endpoint, as the fake verifier plays it. */
export interface VerifierModel {
  readonly latencyMs: NumericDistribution;
  /** Share (0..1) of requests answered 403. */
  readonly denyShare: number;
  /** Share (0..1) of requests that never answer (the verifier gives up after 10 s). */
  readonly timeoutShare: number;
}

/** The captcha provider, as the fake one plays it (simulated clients always send an answer). */
export interface CaptchaModel {
  readonly latencyMs: NumericDistribution;
  /** Share (0..1) of answers the provider rejects. */
  readonly failShare: number;
}

/**
 * A window in which the container engine does not answer: starts fail from `atMs` for
 * `durationMs`, and the runtime reports itself unavailable once it noticed (`noticedAfterMs`
 * after the outage began, until as long after it ended). Running lobbies are not touched.
 */
export interface RuntimeOutageSpec {
  readonly atMs: number;
  readonly durationMs: number;
  readonly noticedAfterMs: number;
}

export interface Infrastructure {
  /** In configuration order; ids are unique. */
  readonly regions: readonly InfrastructureRegion[];
  /** The namespace's `lobby_count_max` (active lobbies); absent: the sum of the regions' capacities. */
  readonly lobbyCountMax?: number;
  /**
   * The server's own time to answer a request whose seat is ready at once (absent: at once). The
   * decision is not delayed by it: only the client learns of its seat that much later.
   */
  readonly answerMs?: NumericDistribution;
  /** Outages of the container engine (every region's), in the order given. */
  readonly runtimeOutages?: readonly RuntimeOutageSpec[];
  readonly verifier: VerifierModel;
  readonly captcha: CaptchaModel;
}

export interface Scenario {
  readonly name?: string;
  readonly description?: string;
  /** The createGameVersion `config`, parsed by the core. */
  readonly version: VersionConfig;
  /** The same, resolved (every default applied). */
  readonly resolved: ResolvedVersion;
  /** Empty when the demand is recorded. */
  readonly demand: Demand;
  /** Path of a recorded-demand JSONL file, as written (relative to the scenario file). */
  readonly recordedDemand?: string;
  readonly infrastructure: Infrastructure;
  readonly durationMs: number;
  /** A u32. */
  readonly seed: number;
}

/** One request of a recorded demand (a line of the JSONL file). */
export interface RecordedRequest {
  /** 1-based line number in the file. */
  readonly line: number;
  readonly atMs: number;
  readonly kind: 'find' | 'join' | 'create';
  readonly gameMode: string;
  readonly region: string;
  readonly party: number;
  readonly sessionMs: number;
  readonly connects: boolean;
  /** How long after its answer the client connected (absent: the replay draws it). */
  readonly connectMs?: number;
  /**
   * The server refused it: `session_ms` and `connects` say nothing of its players, so a replay that
   * seats them draws their sessions and no-shows from the scenario's demand for that mode and region.
   */
  readonly refused: boolean;
}
