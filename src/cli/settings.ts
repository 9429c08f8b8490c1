/**
 * Where the CLI's token and API origin come from: `--token`, then `TAVERN_TOKEN`/`RIVET_TOKEN`,
 * then the file `tavern login` saved (`.tavern/cloud_token` in the project folder, beside
 * `rivet.toml`, like Rivet's `.rivet/cloud_token`); `--api`, then `TAVERN_API`/`RIVET_API_ENDPOINT`,
 * then the origin saved with the token, then `http://127.0.0.1:8080` (`npm start`'s default).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from './errors.js';

export const DEFAULT_API = 'http://127.0.0.1:8080';

export interface Saved {
  readonly token?: string;
  readonly api?: string;
}

export interface GlobalOptions {
  readonly token?: string;
  readonly api?: string;
}

const savedPath = (cwd: string): string => join(cwd, '.tavern', 'cloud_token');

/** The saved login (`{token, api}` as JSON), or nothing when there is none. */
export async function readSaved(cwd: string): Promise<Saved> {
  let text: string;
  try {
    text = await readFile(savedPath(cwd), 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed = JSON.parse(text) as Saved;
    return { ...(typeof parsed.token === 'string' ? { token: parsed.token } : {}), ...(typeof parsed.api === 'string' ? { api: parsed.api } : {}) };
  } catch {
    throw new UsageError(`${savedPath(cwd)} is not the JSON \`tavern login\` writes: run \`tavern login\` again`);
  }
}

/** Saves a login (owner-only file mode: it is a credential). Returns the file's path. */
export async function saveLogin(cwd: string, saved: Required<Saved>): Promise<string> {
  const path = savedPath(cwd);
  await mkdir(join(cwd, '.tavern'), { recursive: true, mode: 0o700 });
  await writeFile(path, `${JSON.stringify(saved)}\n`, { mode: 0o600 });
  return path;
}

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);

/**
 * @example
 * resolveApi({}, { TAVERN_API: 'http://10.0.0.2:8080' }, {}); // 'http://10.0.0.2:8080'
 */
export function resolveApi(options: GlobalOptions, env: NodeJS.ProcessEnv, saved: Saved): string {
  const api = nonEmpty(options.api) ?? nonEmpty(env['TAVERN_API']) ?? nonEmpty(env['RIVET_API_ENDPOINT']) ?? saved.api ?? DEFAULT_API;
  let url: URL;
  try {
    url = new URL(api);
  } catch {
    throw new UsageError(`the API origin ${JSON.stringify(api)} is not a URL (e.g. http://127.0.0.1:8080)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`the API origin ${api} must be http:// or https://`);
  return api;
}

/** The token, or undefined (commands that need one say so with {@link requireToken}). */
export const resolveToken = (options: GlobalOptions, env: NodeJS.ProcessEnv, saved: Saved): string | undefined =>
  nonEmpty(options.token) ?? nonEmpty(env['TAVERN_TOKEN']) ?? nonEmpty(env['RIVET_TOKEN']) ?? saved.token;

export function requireToken(token: string | undefined): string {
  if (token === undefined) throw new UsageError('no token: pass --token, set TAVERN_TOKEN (or RIVET_TOKEN), or run `tavern login`');
  return token;
}
