/**
 * The CLI's check of a project's keys before anything is built or uploaded: the core's version
 * config parser (the server's own) finds unknown and forbidden keys; each is named as the user
 * wrote it (`matchmaker.max_player`, not the wire path `matchmaker.*max_player*`), with the file
 * and line that set it (or the `-o` override), and the parser's words (the key it meant, or why
 * it is never allowed).
 */
import { extname } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import { parseVersionConfig, type Problem } from '../core/config/index.js';
import { ConfigError, type ConfigSource } from './project-config.js';
import { pathKey, tomlKeyLines } from './toml-lines.js';

const STRAY = new Set(['unknown-key', 'forbidden-key']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether `value` has a member at `keys` (array items by index). */
function hasPath(value: unknown, keys: readonly string[]): boolean {
  let node = value;
  for (const key of keys) {
    if (Array.isArray(node) ? !/^\d+$/.test(key) || Number(key) >= node.length : !isObject(node) || !Object.hasOwn(node, key)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

/**
 * The config's own keys along a problem's path (the segments between `config` and the problem
 * name): a `*name*` segment is the key as written, an index an array item, any other segment the
 * snake_case wire key it spells in kebab case. `undefined` when the path leaves the config.
 *
 * @example
 * configKeys({ matchmaker: { game_modes: { a: { max_player: 1 } } } }, ['matchmaker', 'game-modes', '*a*', '*max_player*']);
 * // ['matchmaker', 'game_modes', 'a', 'max_player']
 */
export function configKeys(config: unknown, segments: readonly string[]): string[] | undefined {
  const keys: string[] = [];
  let node = config;
  for (const segment of segments) {
    const written = segment.length >= 2 && segment.startsWith('*') && segment.endsWith('*') ? segment.slice(1, -1) : undefined;
    const key = Array.isArray(node) ? segment : written !== undefined && isObject(node) && Object.hasOwn(node, written) ? written : segment.replaceAll('-', '_');
    if (!hasPath(node, [key])) return undefined;
    keys.push(key);
    node = (node as Record<string, unknown>)[key];
  }
  return keys;
}

/** Where each key path of a YAML (or JSON) text is first written, keyed by {@link pathKey}. */
function yamlKeyLines(text: string): ReadonlyMap<string, number> {
  const counter = new LineCounter();
  const lines = new Map<string, number>();
  const mark = (path: readonly string[], offset: number | undefined): void => {
    if (offset !== undefined && !lines.has(pathKey(path))) lines.set(pathKey(path), counter.linePos(offset).line);
  };
  const walk = (node: unknown, path: readonly string[]): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isScalar(pair.key)) continue;
        const keyPath = [...path, String(pair.key.value)];
        mark(keyPath, pair.key.range?.[0]);
        walk(pair.value, keyPath);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        mark([...path, String(i)], isScalar(item) || isMap(item) || isSeq(item) ? item.range?.[0] : undefined);
        walk(item, [...path, String(i)]);
      });
    }
  };
  walk(parseDocument(text, { lineCounter: counter }).contents, []);
  return lines;
}

interface Place {
  /** `name:line` of each source that sets the key (a file's line when it can be found), in merge order. */
  readonly where: string;
  /** The first such source's index and line, to list the keys in file order. */
  readonly order: readonly [number, number];
}

function whereSet(sources: readonly ConfigSource[], keys: readonly string[], lines: (s: ConfigSource) => ReadonlyMap<string, number>): Place {
  const places = sources.flatMap((s, index) => {
    if (!hasPath(s.value, keys)) return [];
    const line = s.text === undefined ? undefined : lines(s).get(pathKey(keys));
    return [{ index, line, where: line === undefined ? s.name : `${s.name}:${line}` }];
  });
  const [first] = places;
  return { where: places.map((p) => p.where).join(', ') || 'config', order: [first?.index ?? sources.length, first?.line ?? 0] };
}

/**
 * Throws a {@link ConfigError} listing every unknown or forbidden key of the merged `config`, one
 * line each, in file order: `<file>:<line>: <key path as written>: <why>` (`-o …` for an override).
 *
 * @example
 * checkConfigKeys(project.config, project.sources);
 * // ConfigError: the version config has 1 key Tavern does not take (nothing was built or uploaded):
 * //   /game/rivet.toml:3: matchmaker.max_player: unknown key `max_player`: did you mean `max_players`?
 */
export function checkConfigKeys(config: unknown, sources: readonly ConfigSource[]): void {
  const parsed = parseVersionConfig(config);
  const stray = parsed.ok ? [] : parsed.error.filter((p) => STRAY.has(p.path[p.path.length - 1] ?? ''));
  if (stray.length === 0) return;
  const cache = new Map<ConfigSource, ReadonlyMap<string, number>>();
  const lines = (s: ConfigSource): ReadonlyMap<string, number> => {
    const text = s.text ?? '';
    const found = cache.get(s) ?? (extname(s.name) === '.toml' ? tomlKeyLines(text) : yamlKeyLines(text));
    cache.set(s, found);
    return found;
  };
  const describe = (p: Problem): { readonly text: string; readonly order: readonly [number, number] } => {
    const keys = configKeys(config, p.path.slice(1, -1));
    const place = keys === undefined ? { where: 'config', order: [sources.length, 0] as const } : whereSet(sources, keys, lines);
    return { text: `${place.where}: ${keys === undefined ? p.path.join('.') : keys.join('.')}: ${p.message ?? p.path[p.path.length - 1] ?? ''}`, order: place.order };
  };
  const listed = stray.map(describe).sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1]);
  const count = stray.length === 1 ? '1 key' : `${stray.length} keys`;
  throw new ConfigError(`the version config has ${count} Tavern does not take (nothing was built or uploaded):\n${listed.map((l) => `  ${l.text}`).join('\n')}`);
}
