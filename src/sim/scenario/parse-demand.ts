/**
 * Parser of the scenario's synthetic `demand` (game mode → region → arrivals, party sizes,
 * request mix, session lengths, no-shows) and its cross-checks against the version and the
 * infrastructure.
 */
import type { Problem, ResolvedVersion } from '../../core/config/types.js';
import type { Demand, RegionDemand, RequestMix } from './types.js';
import { defined, named, problem } from '../../core/config/path.js';
import { distribution } from '../../core/config/parse-distribution.js';
import { partySize, rateCurve } from './parse-arrivals.js';
import { isObject, mapOf, num, str, strictObject, type Parser } from '../../core/config/strict-reader.js';

export const REGION_DEMAND_KEYS: readonly string[] = Object.freeze([
  'arrivals', 'party_size', 'mix', 'session_ms', 'no_show_share', 'dynamic_max_players', 'tags',
]);
export const MIX_KEYS: readonly string[] = Object.freeze(['find', 'join', 'create']);

const mix: Parser<RequestMix> = (value, path, out) =>
  strictObject<RequestMix>(MIX_KEYS, (f) => {
    const weights = MIX_KEYS.map((key) => (isObject(value) && Object.hasOwn(value, key) ? f.opt(key, num()) : 0));
    const [find, join, create] = weights;
    if (find === undefined || join === undefined || create === undefined) return undefined;
    if (find + join + create <= 0) out.push(problem(path, 'empty'));
    return find + join + create <= 0 ? undefined : { find, join, create };
  })(value, path, out);

const regionDemand: Parser<RegionDemand> = strictObject(REGION_DEMAND_KEYS, (f) => {
  const required = {
    arrivals: f.req('arrivals', rateCurve),
    partySize: f.req('party_size', partySize),
    mix: f.req('mix', mix),
    sessionMs: f.req('session_ms', distribution),
    noShowShare: f.opt('no_show_share', num({ max: 1 })) ?? 0,
  };
  const optional = { dynamicMaxPlayers: f.opt('dynamic_max_players', distribution), tags: f.opt('tags', mapOf(str)) };
  const { arrivals, partySize: party, mix: weights, sessionMs } = required;
  if (arrivals === undefined || party === undefined || weights === undefined || sessionMs === undefined) return undefined;
  return defined<RegionDemand>({ ...required, arrivals, partySize: party, mix: weights, sessionMs, ...optional });
});

/**
 * `{<game mode>: {<region id>: {arrivals, party_size, mix, session_ms, no_show_share?,
 * dynamic_max_players?, tags?}}}`; paths `demand.*mode*.*region*.…`. `no_show_share` defaults to 0
 * and lies in 0..1 (`too-high`); an all-zero mix is `mix.empty`.
 *
 * @example
 * demand({ default: { eu: { ... mix: {} } } }, ['demand'], out); // out: [['demand', '*default*', '*eu*', 'mix', 'empty']]
 */
export const demand: Parser<Demand> = mapOf(mapOf(regionDemand));

/**
 * Checks the names used in a raw `demand` object: a game mode the version lacks is
 * `*mode*.not-found` (skipped when the version did not parse), a region outside the
 * infrastructure is `*mode*.*region*.not-found`, a region the mode is not offered in is
 * `*mode*.*region*.not-in-game-mode`.
 *
 * @example
 * checkDemandNames({ ctf: {} }, resolved, new Set(['eu']), out); // out: [['demand', '*ctf*', 'not-found']]
 */
export function checkDemandNames(raw: unknown, resolved: ResolvedVersion | undefined, regions: ReadonlySet<string>, out: Problem[]): void {
  if (!isObject(raw)) return;
  for (const [modeName, byRegion] of Object.entries(raw)) {
    const at = ['demand', named(modeName)];
    const mode = resolved?.gameModes.find((m) => m.name === modeName);
    if (resolved !== undefined && mode === undefined) out.push(problem(at, 'not-found'));
    if (!isObject(byRegion)) continue;
    for (const regionId of Object.keys(byRegion)) {
      const regionAt = [...at, named(regionId)];
      if (!regions.has(regionId)) out.push(problem(regionAt, 'not-found'));
      else if (mode !== undefined && !mode.regions.some((r) => r.name === regionId)) out.push(problem(regionAt, 'not-in-game-mode'));
    }
  }
}

/**
 * Checks what a mode must allow: `dynamic_max_players` needs `allow_dynamic_max_players`
 * (`dynamic-max-players.not-allowed`), `tags` need `taggable` (`tags.not-allowed`).
 *
 * @example
 * checkDemandModes(demand, resolved, out);
 */
export function checkDemandModes(parsed: Demand, resolved: ResolvedVersion, out: Problem[]): void {
  for (const mode of resolved.gameModes) {
    for (const [regionId, d] of Object.entries(parsed[mode.name] ?? {})) {
      const at = ['demand', named(mode.name), named(regionId)];
      if (d.dynamicMaxPlayers !== undefined && !mode.allowDynamicMaxPlayers) out.push(problem(at, 'dynamic-max-players', 'not-allowed'));
      if (d.tags !== undefined && !mode.taggable) out.push(problem(at, 'tags', 'not-allowed'));
    }
  }
}
