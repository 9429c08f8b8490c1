/**
 * The simulator as the server runs it (`POST /dashboard/sim`, and the deploy preview `POST
 * …/namespaces/{ns}/preview`): the server never imports the simulator; its composition root hands
 * this in (`src/sim/dashboard.ts` implements it).
 */
import type { MatchError } from '../core/errors.js';
import type { Result } from '../core/result.js';
import type { DemandStore } from './demand.js';

/** A run's summary table (text) and its charts (SVG by name). */
export interface SimulationReport {
  readonly summary: string;
  readonly charts: Readonly<Record<string, string>>;
}

/** What a deploy preview replays: a namespace's recorded demand, under its live config and a new one. */
export interface PreviewRequest {
  readonly store: DemandStore;
  readonly namespaceId: string;
  /** The server's present (epoch ms): the window ends here. */
  readonly now: number;
  /** How far back the window starts. */
  readonly sinceMs: number;
  /** The live version's config (as stored), and the new one (a createGameVersion `config`). */
  readonly live: unknown;
  readonly next: unknown;
  /** The server's regions, and the namespace's `lobby_count_max`. */
  readonly regions: readonly { readonly id: string; readonly display_name: string; readonly coords?: { readonly latitude: number; readonly longitude: number } }[];
  readonly lobbyCountMax: number;
  /** Price per lobby-hour by tier (`TAVERN_TIER_PRICES`); absent: no cost figures. */
  readonly prices?: Readonly<Record<string, number>>;
  readonly seed: number;
}

export interface Simulator {
  /** The longest window a preview replays (ms). */
  readonly maxPreviewWindowMs: number;
  /** The preview of `request` as the API answers it (the `preview` object: figures side by side, notes, error bound). */
  preview(request: PreviewRequest): Promise<unknown>;
  /**
   * Runs the built-in scenario `name` for `minutes` of virtual time. Errors: a validation error
   * at `scenario.not-builtin` (no such scenario) or `scenario.invalid`.
   */
  runBuiltin(name: string, minutes: number): Promise<Result<SimulationReport, MatchError>>;
}
