/**
 * `parseVersionConfig`: the structural parse of a createGameVersion `config` (snake_case wire
 * JSON) into the camelCase {@link VersionConfig}, collecting every problem.
 */
import type { Problem, VersionConfig } from './types.js';
import { err, ok, type Result } from '../result.js';
import { emptyObject, mapOf, object, str, type Parser } from './parse-reader.js';
import { cdn, engine, identity } from './parse-cdn.js';
import { matchmaker } from './parse-matchmaker.js';
import { dedupeProblems, deepFreeze, defined } from './path.js';

const versionConfig: Parser<VersionConfig> = object((f) =>
  defined<VersionConfig>({
    cdn: f.opt('cdn', cdn),
    engine: f.opt('engine', engine),
    kv: f.opt('kv', emptyObject),
    identity: f.opt('identity', identity),
    matchmaker: f.opt('matchmaker', matchmaker),
    scripts: f.opt('scripts', mapOf(str)),
  }),
);

/**
 * Parses the wire `config` object. Accepts the superset of the interface spec and the 23.2
 * client (Rivet's CLI-only keys included); unknown keys (`unknown-key`, with the nearest known
 * key), Docker host options in a container block (`forbidden-key`), wrong types, out-of-range
 * numbers, alias conflicts and prototype-polluting map keys are problems. Never throws. The value is deep-frozen; maps (keyed
 * by user-chosen names) have a null prototype. Problem paths start with `'config'`.
 *
 * @example
 * const r = parseVersionConfig({ matchmaker: { game_modes: { default: { max_players: 8 } } } });
 * r.ok && r.value.matchmaker?.gameModes?.['default']?.maxPlayers; // 8
 * parseVersionConfig({ cdn: [] }); // err([{ path: ['config', 'cdn', 'invalid-type'] }])
 * parseVersionConfig({ matchmaker: { max_player: 8 } });
 * // err([{ path: ['config', 'matchmaker', '*max_player*', 'unknown-key'], message: 'unknown key `max_player`: did you mean `max_players`?' }])
 */
export function parseVersionConfig(input: unknown): Result<VersionConfig, readonly Problem[]> {
  const out: Problem[] = [];
  const config = versionConfig(input, ['config'], out);
  if (out.length > 0 || config === undefined) return err(dedupeProblems(out));
  return ok(deepFreeze(config));
}
