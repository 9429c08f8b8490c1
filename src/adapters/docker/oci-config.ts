/**
 * An OCI bundle's `config.json` (OCI runtime spec: `process.args`, `process.env`, `process.cwd`,
 * `process.user.uid/gid`, `root.path`), read into what an image needs, and written as the
 * Dockerfile instructions the engine's import applies (`ENTRYPOINT`, `ENV`, `WORKDIR`, `USER`).
 * The rest of the runtime config (mounts, capabilities, namespaces…) is the runtime's to decide,
 * so it is ignored. Every problem names its field.
 */
import { ArchiveError } from './archive-error.js';

/** What a bundle's config.json says about the process to run. */
export interface BundleProcess {
  /** The whole command line (it becomes the image's ENTRYPOINT; a version's args follow it). */
  readonly args: readonly string[];
  /** `NAME=value` pairs, in order. */
  readonly env: readonly string[];
  /** An absolute path. */
  readonly cwd: string;
  readonly uid: number;
  readonly gid: number;
  /** Where the root filesystem is inside the bundle (normalised, relative), `rootfs` by default. */
  readonly root: string;
}

const invalid = (field: string, should: string): ArchiveError => new ArchiveError(`config.json: ${field} ${should}`);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const LINE_BREAK = /[\r\n]/;
/** Names the engine's ENV takes without quoting surprises (what shells and images use). */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const MAX_ID = 2 ** 32 - 1;

const readArgs = (value: unknown): readonly string[] => {
  if (!Array.isArray(value) || value.length === 0 || !value.every((a) => typeof a === 'string')) {
    throw invalid('process.args', 'must be a non-empty list of strings (the command to run)');
  }
  return value;
};

const readEnv = (value: unknown): readonly string[] => {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid('process.env', "must be a list of 'NAME=value' strings");
  return value.map((pair: unknown, i) => {
    const at = `process.env[${i}]`;
    if (typeof pair !== 'string' || !pair.includes('=')) throw invalid(at, "must be a 'NAME=value' string");
    const name = pair.slice(0, pair.indexOf('='));
    if (!ENV_NAME.test(name)) throw invalid(at, `has a name the engine cannot take: '${name}' (letters, digits, '_', '.', '-'; not starting with a digit)`);
    if (LINE_BREAK.test(pair)) throw invalid(at, 'has a line break in its value, which an image cannot hold');
    return pair;
  });
};

const readCwd = (value: unknown): string => {
  if (value === undefined || value === null || value === '') return '/';
  if (typeof value !== 'string' || !value.startsWith('/') || LINE_BREAK.test(value)) throw invalid('process.cwd', 'must be an absolute path');
  return value;
};

const readId = (value: unknown, field: string): number => {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_ID) throw invalid(field, `must be a whole number from 0 to ${MAX_ID}`);
  return value;
};

const readRoot = (value: unknown): string => {
  const path = isRecord(value) ? value['path'] : undefined;
  if (path === undefined || path === null) return 'rootfs';
  const parts = typeof path === 'string' ? path.split('/').filter((p) => p !== '' && p !== '.') : ['..'];
  if (typeof path !== 'string' || path.startsWith('/') || parts.length === 0 || parts.includes('..')) {
    throw invalid('root.path', 'must be a relative path inside the bundle (e.g. "rootfs")');
  }
  return parts.join('/');
};

/**
 * Reads a bundle's config.json; an {@link ArchiveError} naming the field when it is not usable.
 *
 * @example
 * parseBundleConfig('{"process":{"args":["/server"],"cwd":"/srv","user":{"uid":1000,"gid":1000}}}')
 * // { args: ['/server'], env: [], cwd: '/srv', uid: 1000, gid: 1000, root: 'rootfs' }
 */
export const parseBundleConfig = (json: string): BundleProcess => {
  let config: unknown;
  try {
    config = JSON.parse(json);
  } catch (e) {
    throw new ArchiveError(`config.json is not valid JSON (${(e as Error).message})`);
  }
  if (!isRecord(config)) throw new ArchiveError('config.json must hold a JSON object (an OCI runtime config)');
  const process = config['process'];
  if (!isRecord(process)) throw invalid('process', 'must be an object with the command to run (process.args)');
  const user = process['user'] === undefined ? {} : process['user'];
  if (!isRecord(user)) throw invalid('process.user', 'must be an object ({ "uid": …, "gid": … })');
  return {
    args: readArgs(process['args']),
    env: readEnv(process['env']),
    cwd: readCwd(process['cwd']),
    uid: readId(user['uid'], 'process.user.uid'),
    gid: readId(user['gid'], 'process.user.gid'),
    root: readRoot(config['root']),
  };
};

/** A value in double quotes, as the engine's Dockerfile parser reads it back verbatim (no `$` expansion). */
const quoted = (value: string): string => `"${value.replace(/[\\"$]/g, (c) => `\\${c}`)}"`;

/**
 * The Dockerfile instructions that give an imported root filesystem the bundle's process: the
 * engine's import (`POST /images/create?fromSrc=-&changes=…`) applies them to the image config.
 *
 * @example
 * imageChanges({ args: ['/server', '--port', '7777'], env: ['MODE=a b'], cwd: '/srv', uid: 1000, gid: 1000, root: 'rootfs' })
 * // ['ENTRYPOINT ["/server","--port","7777"]', 'ENV MODE="a b"', 'WORKDIR "/srv"', 'USER 1000:1000']
 */
export const imageChanges = (p: BundleProcess): string[] => [
  `ENTRYPOINT ${JSON.stringify(p.args)}`,
  ...p.env.map((pair) => {
    const eq = pair.indexOf('=');
    return `ENV ${pair.slice(0, eq)}=${quoted(pair.slice(eq + 1))}`;
  }),
  `WORKDIR ${quoted(p.cwd)}`,
  `USER ${p.uid}:${p.gid}`,
];
