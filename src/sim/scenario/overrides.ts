/**
 * Command-line edits of a scenario's JSON before it is parsed: `--set path=value` and
 * `--sweep path=v1,v2,...`. Pure: the input is never modified.
 */
import type { Problem } from '../../core/config/types.js';
import { err, ok, type Result } from '../../core/result.js';
import { cloneData, problem, type Path } from '../../core/config/path.js';
import { overrideValue, parseOverridePath, splitValues, type PathSegment } from './override-path.js';

type Container = Record<string, unknown> | unknown[];

const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null;

/** Reads or creates the child at `seg` of `container`, or names why it cannot. */
function step(container: Container, seg: PathSegment, next: PathSegment | undefined): Container | string {
  const { slot, failure } = slotOf(container, seg);
  if (failure !== undefined) return failure;
  const child = (container as Record<string, unknown>)[slot];
  if (child === undefined && next !== undefined) {
    const created: Container = next.index ? [] : {};
    (container as Record<string, unknown>)[slot] = created;
    return created;
  }
  return isContainer(child) ? child : 'not-a-container';
}

type Slot = { readonly slot: string | number; readonly failure?: undefined } | { readonly slot?: undefined; readonly failure: string };

/** The property `seg` addresses in `container` (an in-range or appending index for arrays), or why none. */
function slotOf(container: Container, seg: PathSegment): Slot {
  if (!Array.isArray(container)) return seg.index ? { failure: 'not-an-array' } : { slot: seg.key };
  if (!/^\d+$/.test(seg.key)) return { failure: 'not-an-object' };
  const index = Number(seg.key);
  return index > container.length ? { failure: 'index-out-of-range' } : { slot: index };
}

function setAt(root: Container, segments: readonly PathSegment[], value: unknown): string | undefined {
  let cursor: Container = root;
  for (let i = 0; i < segments.length - 1; i += 1) {
    const seg = segments[i];
    if (seg === undefined) return 'invalid';
    const next = step(cursor, seg, segments[i + 1]);
    if (typeof next === 'string') return next;
    cursor = next;
  }
  const last = segments[segments.length - 1];
  if (last === undefined) return 'invalid';
  const { slot, failure } = slotOf(cursor, last);
  if (failure !== undefined) return failure;
  (cursor as Record<string, unknown>)[slot] = value;
  return undefined;
}

function splitAssignment(text: string, at: Path, out: Problem[]): { readonly segments: readonly PathSegment[]; readonly rest: string } | undefined {
  const eq = text.indexOf('=');
  if (eq < 0) {
    out.push(problem(at, 'missing-equals'));
    return undefined;
  }
  const segments = parseOverridePath(text.slice(0, eq));
  if (typeof segments === 'string') {
    out.push(problem(at, 'path', segments));
    return undefined;
  }
  return { segments, rest: text.slice(eq + 1) };
}

/**
 * Applies `--set path=value` edits in order to a copy of `json`. The value is JSON when it
 * parses, else a string; missing intermediate objects are created (arrays for `[i]`); an array
 * index may append (`= length`). Problems, per edit index `i`: `set.<i>.missing-equals`,
 * `set.<i>.path.invalid|invalid-key|not-a-container|not-an-array|not-an-object|index-out-of-range`.
 *
 * @example
 * applyOverrides({ seed: 1 }, ['seed=7', 'demand.default.eu.mix.find=3']);
 * // ok({ seed: 7, demand: { default: { eu: { mix: { find: 3 } } } } })
 */
export function applyOverrides(json: unknown, sets: readonly string[]): Result<unknown, Problem[]> {
  const out: Problem[] = [];
  const root: unknown = cloneData(json);
  sets.forEach((text, i) => {
    const at = ['set', String(i)];
    const parsed = splitAssignment(text, at, out);
    if (parsed === undefined) return;
    if (!isContainer(root)) {
      out.push(problem(at, 'path', 'not-a-container'));
      return;
    }
    const failure = setAt(root, parsed.segments, overrideValue(parsed.rest));
    if (failure !== undefined) out.push(problem(at, 'path', failure));
  });
  return out.length > 0 ? err(out) : ok(root);
}

/** A parsed `--sweep`: the path to set and the values to run it with, in order. */
export interface Sweep {
  readonly path: string;
  readonly values: readonly unknown[];
}

/**
 * Parses `--sweep path=v1,v2,...` (commas inside JSON arrays, objects and strings do not split).
 * Problems: `sweep.missing-equals`, `sweep.path.invalid|invalid-key`, `sweep.values.<i>.empty`.
 * Each value then goes through {@link applyOverrides} as `path=<value>`.
 *
 * @example
 * sweepValues('infrastructure.regions[0].lobby_count_max=10,20'); // ok({ path: '…', values: [10, 20] })
 */
export function sweepValues(spec: string): Result<Sweep, Problem[]> {
  const out: Problem[] = [];
  const parsed = splitAssignment(spec, ['sweep'], out);
  if (parsed === undefined) return err(out);
  const texts = splitValues(parsed.rest);
  texts.forEach((t, i) => {
    if (t.trim() === '') out.push(problem(['sweep', 'values', String(i)], 'empty'));
  });
  if (out.length > 0) return err(out);
  return ok({ path: spec.slice(0, spec.indexOf('=')), values: texts.map((t) => overrideValue(t.trim())) });
}
