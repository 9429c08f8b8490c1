/**
 * A deploy gate: `tavern deploy --gate 'wait_p95<=+10%,refused<=+0.5pp'` publishes only when every
 * condition holds on the preview. A condition is `<figure><op><bound>`, op one of `<= < >= >`, and
 * the bound one of:
 *
 * - `+10%` / `-5%`: the change relative to the live version, in percent;
 * - `+0.5pp`: the change in percentage points (shares only: `refused`, `fill`);
 * - `+200` / `-3`: the change in the figure's own unit (ms, hours, players, …);
 * - `2500` (no sign): the new version's figure itself.
 *
 * Figures are those of the preview table (`figures.ts`), also per region or refusal code
 * (`peak_lobbies.eu`, `refused.MATCHMAKER_LOBBY_FULL`).
 */
import { err, ok, type Result } from '../../core/result.js';
import { describeFigure, FIGURES, type FigureRow } from './figures.js';

export type GateOp = '<=' | '<' | '>=' | '>';

/** What a bound is measured on. */
export type GateMeasure = 'relative' | 'points' | 'delta' | 'value';

export interface GateCondition {
  /** As written (trimmed). */
  readonly text: string;
  readonly figure: string;
  readonly op: GateOp;
  readonly measure: GateMeasure;
  readonly bound: number;
}

/** One condition checked: the measured number and whether it held. */
export interface GateCheck {
  readonly condition: GateCondition;
  /** `null`: a relative change from a live figure of 0 (no ratio): it holds only for a bound that allows anything up. */
  readonly measured: number | null;
  readonly holds: boolean;
}

const CONDITION = /^([a-z][a-z0-9_]*(?:\.[A-Za-z0-9_-]+)?)\s*(<=|>=|<|>)\s*([+-])?(\d+(?:\.\d+)?)\s*(%|pp)?$/;

const EXAMPLE = "e.g. 'wait_p95<=+10%,refused<=+0.5pp'";

function parseCondition(raw: string): Result<GateCondition, string> {
  const text = raw.trim();
  if (text === '') return err(`an empty condition (two commas, or one at an end): ${EXAMPLE}`);
  const m = CONDITION.exec(text);
  if (m === null) return err(`"${text}" is not a condition: expected a figure, one of <= < >= >, then a bound such as +10%, +0.5pp, +200 or 2500 (${EXAMPLE})`);
  const [, figure = '', op = '<=', sign, number = '0', unit] = m;
  const d = describeFigure(figure);
  if (d === undefined) return err(`"${text}": unknown figure ${figure}; the figures are ${Object.keys(FIGURES).join(', ')} (and per region or refusal code, e.g. peak_lobbies.eu)`);
  if (unit === 'pp' && d.kind !== 'share') return err(`"${text}": pp (percentage points) is for a share (refused, fill); ${figure} changes in % or in its own unit`);
  if (unit !== undefined && sign === undefined) return err(`"${text}": a change needs its sign (+${number}${unit} or -${number}${unit}); a bound without a sign is the new figure itself`);
  const magnitude = Number(number);
  const bound = sign === '-' ? -magnitude : magnitude;
  const measure: GateMeasure = unit === '%' ? 'relative' : unit === 'pp' ? 'points' : sign === undefined ? 'value' : 'delta';
  return ok({ text, figure, op: op as GateOp, measure, bound });
}

/**
 * Parses a gate: conditions separated by commas; every problem in words.
 *
 * @example
 * parseGate('wait_p95<=+10%,refused<=+0.5pp'); // ok([{ figure: 'wait_p95', op: '<=', measure: 'relative', bound: 10, ... }, ...])
 * parseGate('wait<=10%'); // err(['"wait<=10%": unknown figure wait; ...'])
 */
export function parseGate(text: string): Result<GateCondition[], string[]> {
  const problems: string[] = [];
  const conditions: GateCondition[] = [];
  if (text.trim() === '') return err([`the gate is empty: ${EXAMPLE}`]);
  for (const part of text.split(',')) {
    const c = parseCondition(part);
    if (c.ok) conditions.push(c.value);
    else problems.push(c.error);
  }
  return problems.length > 0 ? err(problems) : ok(conditions);
}

const compare = (a: number, op: GateOp, b: number): boolean => (op === '<=' ? a <= b : op === '<' ? a < b : op === '>=' ? a >= b : a > b);

/**
 * Checks each condition on the preview's rows (a figure neither run has is 0 on both sides).
 *
 * @example
 * checkGate(conditions, rows).every((c) => c.holds); // publish?
 */
export function checkGate(conditions: readonly GateCondition[], rows: readonly FigureRow[]): GateCheck[] {
  return conditions.map((condition) => {
    const row = rows.find((r) => r.name === condition.figure);
    const live = row?.live ?? 0;
    const next = row?.next ?? 0;
    const measured = condition.measure === 'value' ? next
      : condition.measure === 'relative' ? (live === 0 ? (next === 0 ? 0 : null) : (100 * (next - live)) / live)
      : next - live;
    // A rise from nothing has no ratio: it breaks any upper bound, and meets any lower one.
    const holds = measured === null ? condition.op === '>=' || condition.op === '>' : compare(measured, condition.op, condition.bound);
    return { condition, measured: measured === null ? null : Math.round(measured * 1000) / 1000, holds };
  });
}
