/**
 * The simulator as the dashboard runs it (`POST /dashboard/sim`): the server never imports the
 * simulator; its composition root hands this in (`src/sim/dashboard.ts` implements it).
 */
import type { MatchError } from '../core/errors.js';
import type { Result } from '../core/result.js';

/** A run's summary table (text) and its charts (SVG by name). */
export interface SimulationReport {
  readonly summary: string;
  readonly charts: Readonly<Record<string, string>>;
}

export interface Simulator {
  /**
   * Runs the built-in scenario `name` for `minutes` of virtual time. Errors: a validation error
   * at `scenario.not-builtin` (no such scenario) or `scenario.invalid`.
   */
  runBuiltin(name: string, minutes: number): Promise<Result<SimulationReport, MatchError>>;
}
