/**
 * The parts of a version config only the CLI reads (Rivet marks them "Configures Rivet CLI
 * behavior"): `docker.dockerfile`, `docker.image`, `docker.build_args` on the matchmaker and on
 * each game mode, `cdn.build_command`, `cdn.build_output`, `cdn.build_env`, `matchmaker.dev_hostname`.
 * They are checked here (file and field named) and removed before the config is sent.
 */
import type { Json } from './api.js';
import { ConfigError } from './project-config.js';

export interface DockerBlock {
  /** For messages: `matchmaker.docker` or `matchmaker.game_modes.<mode>.docker`. */
  readonly path: string;
  readonly mode?: string;
  readonly value: Json;
  /** The same block inside a copy (an immer draft) of the config. */
  readonly locate: (config: Json) => Json;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const child = (o: Json, key: string): Json => o[key] as Json;

/** The matchmaker's docker block and each game mode's, in that order. */
export function dockerBlocks(config: Json): DockerBlock[] {
  const mm = config['matchmaker'];
  if (!isObject(mm)) return [];
  const out: DockerBlock[] = [];
  if (isObject(mm['docker'])) out.push({ path: 'matchmaker.docker', value: mm['docker'], locate: (c) => child(child(c, 'matchmaker'), 'docker') });
  const modes = mm['game_modes'];
  if (isObject(modes)) {
    for (const [mode, value] of Object.entries(modes)) {
      if (isObject(value) && isObject(value['docker'])) {
        out.push({ path: `matchmaker.game_modes.${mode}.docker`, mode, value: value['docker'], locate: (c) => child(child(child(child(c, 'matchmaker'), 'game_modes'), mode), 'docker') });
      }
    }
  }
  return out;
}

/** Throws a {@link ConfigError} naming `file` and the field when a CLI-only key has the wrong type. */
export function cliOnlyProblems(config: Json, file: string): void {
  const wrong: string[] = [];
  const expect = (o: Json, key: string, path: string, ok: (v: unknown) => boolean, what: string): void => {
    if (o[key] !== undefined && !ok(o[key])) wrong.push(`${path}.${key} must be ${what}`);
  };
  const str = (v: unknown): boolean => typeof v === 'string' && v !== '';
  const strMap = (v: unknown): boolean => isObject(v) && Object.values(v).every((x) => typeof x === 'string');
  for (const [key, value] of Object.entries({ matchmaker: config['matchmaker'], cdn: config['cdn'] })) {
    if (value !== undefined && !isObject(value)) wrong.push(`${key} must be a table`);
  }
  for (const b of dockerBlocks(config)) {
    expect(b.value, 'dockerfile', b.path, str, 'a non-empty string (a path relative to the config file)');
    expect(b.value, 'image', b.path, str, 'a non-empty string (a local image name)');
    expect(b.value, 'build_args', b.path, strMap, 'a table of strings');
    if (b.value['dockerfile'] !== undefined && b.value['image'] !== undefined) wrong.push(`${b.path}: give dockerfile or image, not both`);
  }
  const cdn = config['cdn'];
  if (isObject(cdn)) {
    expect(cdn, 'build_command', 'cdn', str, 'a non-empty string (a shell command)');
    expect(cdn, 'build_output', 'cdn', str, 'a non-empty string (a folder relative to the config file)');
    expect(cdn, 'build_env', 'cdn', strMap, 'a table of strings');
  }
  if (wrong.length > 0) throw new ConfigError(`${file}: ${wrong.join('; ')}`);
}

const omit = (o: Json, keys: readonly string[]): Json => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
const DOCKER_CLI_KEYS = ['dockerfile', 'image', 'build_args'];

/**
 * The config without CLI-only keys.
 *
 * @example
 * stripCliKeys({ cdn: { build_output: 'dist', site_id: 'x' } }); // { cdn: { site_id: 'x' } }
 */
export function stripCliKeys(config: Json): Json {
  const out: Json = { ...config };
  const mm = config['matchmaker'];
  if (isObject(mm)) {
    const next: Json = omit(mm, ['dev_hostname']);
    if (isObject(mm['docker'])) next['docker'] = omit(mm['docker'], DOCKER_CLI_KEYS);
    const modes = mm['game_modes'];
    if (isObject(modes)) {
      next['game_modes'] = Object.fromEntries(Object.entries(modes).map(([k, v]) => [k, isObject(v) && isObject(v['docker']) ? { ...v, docker: omit(v['docker'], DOCKER_CLI_KEYS) } : v]));
    }
    out['matchmaker'] = next;
  }
  if (isObject(config['cdn'])) out['cdn'] = omit(config['cdn'], ['build_command', 'build_output', 'build_env']);
  return out;
}
