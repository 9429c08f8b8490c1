/**
 * A project's version config as `tavern deploy` reads it (wire.md §6.4 step 2): `rivet.toml`
 * (or `.yaml`/`.yml`/`.json`, legacy `rivet.version.toml`, or `tavern.*`), then the namespace's
 * overlay `rivet.<ns>.*` merged over it, then `-o key=json` overrides. Syntax errors name the
 * file, line and column; type errors name the file and the field.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import type { Json } from './api.js';
import { UsageError } from './errors.js';

const EXTENSIONS = ['.toml', '.yaml', '.yml', '.json'];
const BASES = ['rivet', 'tavern'];

/** A config file that cannot be read, or says something wrong: file, line and column or field, and why (exit code 1). */
export class ConfigError extends Error {}

/** One layer of the config: a file or a `-o` override. */
export interface ConfigSource {
  /** How messages name it: the file's path, or `-o key=json` as given. */
  readonly name: string;
  /** The file's text (absent for an override). */
  readonly text?: string;
  readonly value: Json;
}

export interface ProjectConfig {
  /** The merged config (CLI-only keys such as `dockerfile` still in it). */
  readonly config: Json;
  /** The files read, base first. */
  readonly files: readonly string[];
  /** Every layer merged, in order: the base file, overlays, then overrides. */
  readonly sources: readonly ConfigSource[];
  /** The folder paths in the config are relative to. */
  readonly root: string;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The line (1-based) of a character offset. */
const lineAt = (text: string, offset: number): { line: number; column: number } => {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: (before[before.length - 1]?.length ?? 0) + 1 };
};

/**
 * Parses one config file's text by its extension.
 *
 * @example
 * parseConfigText('rivet.toml', '[matchmaker]\nmax_players = 8\n'); // { matchmaker: { max_players: 8 } }
 */
export function parseConfigText(file: string, text: string): Json {
  let value: unknown;
  const ext = extname(file);
  try {
    if (ext === '.toml') value = parseToml(text);
    else if (ext === '.yaml' || ext === '.yml') value = parseYaml(text) ?? {};
    else value = JSON.parse(text);
  } catch (e) {
    if (e instanceof TomlError) throw new ConfigError(`${file}:${e.line}:${e.column}: ${e.message.split('\n')[0] ?? ''}`);
    if (e instanceof YAMLParseError) {
      const at = e.linePos?.[0];
      throw new ConfigError(`${file}:${at?.line ?? '?'}:${at?.col ?? '?'}: ${e.message.split('\n')[0] ?? ''}`);
    }
    const offset = /position (\d+)/.exec((e as Error).message)?.[1];
    const at = offset === undefined ? undefined : lineAt(text, Number(offset));
    throw new ConfigError(`${file}${at === undefined ? '' : `:${at.line}:${at.column}`}: ${(e as Error).message}`);
  }
  if (!isObject(value)) throw new ConfigError(`${file}: the config must be a table/object at its top level`);
  return value;
}

/** `over` merged into `base`: objects key by key, anything else replaced. */
export function deepMerge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}

/**
 * One `-o key=json` override as the object it merges: `key` is a dotted path, the value JSON (a
 * bare word that is not JSON is taken as a string, as in `-o matchmaker.tier=basic-1d2`).
 *
 * @example
 * overrideValue('matchmaker.max_players=8'); // { matchmaker: { max_players: 8 } }
 */
export function overrideValue(override: string): Json {
  const eq = override.indexOf('=');
  if (eq <= 0) throw new UsageError(`-o ${override}: expected key=json, e.g. -o matchmaker.max_players=16`);
  const path = override.slice(0, eq).split('.');
  if (path.some((p) => p === '')) throw new UsageError(`-o ${override}: the key has an empty segment`);
  const raw = override.slice(eq + 1);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    if (/^[\w.:/-]+$/.test(raw)) value = raw;
    else throw new UsageError(`-o ${override}: the value is not JSON`);
  }
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Json;
}

const readConfigFile = async (file: string): Promise<ConfigSource> => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return { name: file, text, value: parseConfigText(file, text) };
};

/** The base config file in `dir`, if any (`rivet.toml` first). */
async function findBase(dir: string): Promise<string | undefined> {
  const names = new Set(await readdir(dir));
  for (const base of BASES) {
    for (const ext of EXTENSIONS) if (names.has(`${base}${ext}`)) return join(dir, `${base}${ext}`);
  }
  return names.has('rivet.version.toml') ? join(dir, 'rivet.version.toml') : undefined;
}

/**
 * Reads the project's config: `configPath` (`-c`) or the base file found in `cwd`, the overlay of
 * `namespace` beside it, then `overrides`.
 */
export async function loadProjectConfig(cwd: string, options: { configPath?: string; namespace?: string; overrides?: readonly string[] }): Promise<ProjectConfig> {
  const base = options.configPath === undefined ? await findBase(cwd) : resolve(cwd, options.configPath);
  if (base === undefined) throw new ConfigError(`no rivet.toml (or rivet.yaml, rivet.json, tavern.toml) in ${cwd}: pass -c <file>`);
  const root = dirname(base);
  const sources = [await readConfigFile(base)];
  if (options.namespace !== undefined) {
    const stem = basename(base, extname(base)).replace(/\.version$/, '');
    const names = new Set(await readdir(root));
    for (const ext of EXTENSIONS) {
      const overlay = `${stem}.${options.namespace}${ext}`;
      if (names.has(overlay)) sources.push(await readConfigFile(join(root, overlay)));
    }
  }
  const files = sources.map((s) => s.name);
  for (const o of options.overrides ?? []) sources.push({ name: `-o ${o}`, value: overrideValue(o) });
  const config = sources.reduce<Json>((merged, s) => deepMerge(merged, s.value), {});
  return { config, files, sources, root };
}
