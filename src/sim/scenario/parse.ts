/**
 * `parseScenario`: a scenario file (snake_case JSON, see `scenario.schema.json`) into the typed
 * camelCase {@link Scenario}, collecting every problem with its path.
 */
import type { Problem } from '../../core/config/types.js';
import type { Demand, Infrastructure, Scenario } from './types.js';
import { err, ok, type Result } from '../../core/result.js';
import { dedupeProblems, deepFreeze, defined, problem } from '../../core/config/path.js';
import { checkDemandModes, checkDemandNames, demand } from './parse-demand.js';
import { infrastructure } from './parse-infrastructure.js';
import { isObject, num, str, strictObject, u32, type Parser } from '../../core/config/strict-reader.js';
import { parseScenarioVersion } from './parse-version.js';

/** 31 days, the longest simulated run. */
export const MAX_DURATION_MS = 31 * 24 * 60 * 60 * 1000;

export const SCENARIO_KEYS: readonly string[] = Object.freeze([
  '$schema', 'name', 'description', 'version', 'demand', 'recorded_demand', 'infrastructure', 'duration_ms', 'seed',
]);

export interface ParseScenarioOptions {
  /** The demand comes from elsewhere (a recorded file given on the command line): `demand` may be absent. */
  readonly externalDemand?: boolean;
}

const nonEmpty: Parser<string> = (value, path, out) => {
  const s = str(value, path, out);
  if (s === '') out.push(problem(path, 'empty'));
  return s === '' ? undefined : s;
};

/** Region ids as written, even when their region failed to parse (so the version is not also blamed). */
function rawRegionIds(raw: unknown): ReadonlySet<string> {
  const regions = isObject(raw) ? raw['regions'] : undefined;
  const items: readonly unknown[] = Array.isArray(regions) ? regions : [];
  return new Set(items.flatMap((item) => (isObject(item) && typeof item['id'] === 'string' ? [item['id']] : [])));
}

const EMPTY_DEMAND: Demand = Object.freeze(Object.create(null) as Demand);

function build(input: Readonly<Record<string, unknown>>, options: ParseScenarioOptions, out: Problem[]): Scenario | undefined {
  return strictObject<Scenario>(SCENARIO_KEYS, (f) => {
    const infra: Infrastructure | undefined = f.req('infrastructure', infrastructure);
    const regions = rawRegionIds(input['infrastructure']);
    if (!Object.hasOwn(input, 'version')) out.push(problem(['version'], 'missing'));
    const version = Object.hasOwn(input, 'version') ? parseScenarioVersion(input['version'], regions, out) : undefined;
    const recordedDemand = f.opt('recorded_demand', nonEmpty);
    const hasDemand = Object.hasOwn(input, 'demand');
    if (hasDemand && Object.hasOwn(input, 'recorded_demand')) out.push(problem(['recorded-demand'], 'conflicts-with-demand'));
    if (!hasDemand && !Object.hasOwn(input, 'recorded_demand') && options.externalDemand !== true) out.push(problem(['demand'], 'missing'));
    const parsedDemand = f.opt('demand', demand);
    checkDemandNames(input['demand'], version?.resolved, regions, out);
    if (parsedDemand !== undefined && version !== undefined) checkDemandModes(parsedDemand, version.resolved, out);
    const rest = {
      name: f.opt('name', str),
      description: f.opt('description', str),
      durationMs: f.req('duration_ms', num({ above: 0, max: MAX_DURATION_MS, integer: true })),
      seed: f.req('seed', u32),
    };
    const { durationMs, seed } = rest;
    if (infra === undefined || version === undefined || durationMs === undefined || seed === undefined) return undefined;
    const demandValue = parsedDemand ?? EMPTY_DEMAND;
    return defined<Scenario>({ ...rest, durationMs, seed, version: version.config, resolved: version.resolved, demand: demandValue, recordedDemand, infrastructure: infra });
  })(input, [], out);
}

/**
 * Parses a scenario. Every problem is reported, each as a kebab path ending in the problem's name:
 * `['demand', '*default*', '*eu*', 'party-size', 'weights', 'invalid']`,
 * `['version', 'matchmaker', 'game-modes', '*default*', 'regions', '*mars*', 'not-found']`,
 * `['duration-ms', 'too-high']`, `['seed', 'not-an-integer']`. Never throws; the value is
 * deep-frozen.
 *
 * @example
 * const r = parseScenario(builtinScenarioJson('steady'));
 * if (r.ok) r.value.durationMs; else r.error.map((p) => p.path.join('.'));
 */
export function parseScenario(input: unknown, options: ParseScenarioOptions = {}): Result<Scenario, readonly Problem[]> {
  if (!isObject(input)) return err([problem([], 'invalid-type')]);
  const out: Problem[] = [];
  const scenario = build(input, options, out);
  if (out.length > 0 || scenario === undefined) return err(dedupeProblems(out));
  return ok(deepFreeze(scenario));
}
