/**
 * The deploy preview on the command line: `tavern deploy --preview`, `tavern version preview
 * <config>` and `tavern deploy --gate ...` share these flags (`--since`, `--seed`, `--json`,
 * `--gate`) and this output (the table of `src/sim/preview/report.ts`, or one JSON object).
 */
import { parseDuration } from '../core/duration.js';
import { parseGate, type GateCondition } from '../sim/preview/gate.js';
import { previewLines, type PreviewWire } from '../sim/preview/report.js';
import type { CommandIo } from './commands.js';
import { UsageError } from './errors.js';

/** The flags of `tavern deploy` (commander's parse). */
export interface DeployFlags {
  readonly namespace: string;
  readonly config?: string;
  readonly override: string[];
  readonly name?: string;
  readonly concurrency: number;
  readonly preview?: boolean;
  readonly gate?: string;
  readonly since?: string;
  readonly seed?: string;
  readonly json?: boolean;
}

/**
 * `--gate`, `--since` and `--seed` checked (every problem in words, exit 2) and ready for the deploy.
 *
 * @example
 * previewFlags({ gate: 'wait_p95<=+10%', since: '24h' }); // { gate: [...], since: '24h' }
 */
export function previewFlags(flags: Pick<DeployFlags, 'gate' | 'since' | 'seed' | 'preview' | 'json'>): { gate?: readonly GateCondition[]; since?: string; seed?: number } {
  if (flags.preview === true && flags.gate !== undefined) throw new UsageError('--preview and --gate go apart: --preview only shows the table; --gate publishes when it holds');
  if (flags.json === true && flags.preview !== true) throw new UsageError('--json goes with --preview (or tavern version preview)');
  let gate: readonly GateCondition[] | undefined;
  if (flags.gate !== undefined) {
    const parsed = parseGate(flags.gate);
    if (!parsed.ok) throw new UsageError(`--gate ${flags.gate}:\n${parsed.error.map((e) => `  - ${e}`).join('\n')}`);
    gate = parsed.value;
  }
  if (flags.since !== undefined && parseDuration(flags.since) === undefined) throw new UsageError(`--since ${flags.since}: expected a duration such as 24h or 7d`);
  if (flags.seed !== undefined && (!/^\d{1,10}$/.test(flags.seed) || Number(flags.seed) > 0xffffffff)) throw new UsageError(`--seed must be an integer in 0..4294967295, got ${flags.seed}`);
  return {
    ...(gate === undefined ? {} : { gate }),
    ...(flags.since === undefined ? {} : { since: flags.since }),
    ...(flags.seed === undefined ? {} : { seed: Number(flags.seed) }),
  };
}

/** The preview on stdout: the table, or one JSON object. */
export function printPreview(preview: PreviewWire, json: boolean, io: CommandIo): void {
  if (json) io.out(JSON.stringify(preview));
  else for (const line of previewLines(preview)) io.out(line);
}
