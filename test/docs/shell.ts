/**
 * Documented command lines run as written, by a real `sh`, the way a reader runs them one terminal
 * session after another: what one script exports the next one sees. `npx tavern` and `tavern` are
 * the repository's CLI (its sources, through tsx: the code `npm ci` compiles); `npx` runs nothing
 * else, so no line can fetch a package. A line may name a placeholder (`<lobby id>`), which the
 * caller fills in, and an origin the test's server replaces (the docs' `http://127.0.0.1:8080`).
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const TSX = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

export interface ShellRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Shell {
  /** Runs `lines` (one command a line) with `set -e` in `cwd`; rejects with the output when one fails. */
  run(lines: string, options?: { cwd?: string; fill?: Readonly<Record<string, string>> }): Promise<ShellRun>;
  /** Runs one long-running line until its output matches `until`, then interrupts it (as Ctrl-C would). */
  until(line: string, until: RegExp, options?: { cwd?: string; fill?: Readonly<Record<string, string>>; timeoutMs?: number }): Promise<string>;
}

const shim = (name: string, only: string): string => `#!/bin/sh
# ${name}: this test's ${only}, the repository's CLI from its sources.
${name === 'npx' ? '[ "$1" = tavern ] || { echo "npx in this test runs only tavern, not $1" >&2; exit 127; }\nshift\n' : ''}exec "${process.execPath}" --import "${TSX}" "${MAIN}" "$@"
`;

/** `text` with each key of `fill` replaced by its value. */
const filled = (text: string, fill: Readonly<Record<string, string>> = {}): string =>
  Object.entries(fill).reduce((t, [from, to]) => t.split(from).join(to), text);

/**
 * A shell session in `cwd` whose environment starts as `env` (with the `npx`/`tavern` shims, kept
 * in `cwd/.shell`, first on the PATH; nothing else of the test's own environment but PATH and
 * HOME unless given).
 *
 * @example
 * const sh = await createShell(dir, { TAVERN_API: server.origin, HOME: home });
 * await sh.run('export TAVERN_TOKEN=$(npx tavern admin token)\nnpx tavern game create hello');
 */
export async function createShell(cwd: string, env: Readonly<Record<string, string>>): Promise<Shell> {
  const bin = join(cwd, '.shell');
  await mkdir(bin, { recursive: true });
  for (const name of ['npx', 'tavern']) {
    await writeFile(join(bin, name), shim(name, name === 'npx' ? '`npx tavern`' : '`tavern`'));
    await chmod(join(bin, name), 0o755);
  }
  let session: Record<string, string> = { HOME: process.env['HOME'] ?? '/', ...env, PATH: `${bin}:${process.env['PATH'] ?? ''}` };
  const envFile = join(bin, 'env');

  const run: Shell['run'] = (lines, options = {}) =>
    new Promise((resolve, reject) => {
      const script = `set -e\n${filled(lines, options.fill)}\nenv -0 > '${envFile}'\n`;
      const child = spawn('sh', ['-c', script], { cwd: options.cwd ?? cwd, env: session, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => {
        if (code !== 0) {
          reject(new Error(`sh exited ${code} running:\n${lines}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
          return;
        }
        readFile(envFile, 'utf8').then((text) => {
          // What the script exported is the next script's environment, as in one terminal session.
          session = Object.fromEntries(text.split('\0').filter((kv) => kv.includes('=')).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
          resolve({ code, stdout, stderr });
        }, reject);
      });
    });

  const until: Shell['until'] = (line, pattern, options = {}) =>
    new Promise((resolve, reject) => {
      const child = spawn('sh', ['-c', `exec ${filled(line, options.fill)}`], { cwd: options.cwd ?? cwd, env: session, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`${line}: no ${String(pattern)} within ${options.timeoutMs ?? 30_000} ms:\n${output}`));
      }, options.timeoutMs ?? 30_000);
      const seen = (d: Buffer): void => {
        output += d.toString();
        if (pattern.test(output)) child.kill('SIGINT');
      };
      child.stdout.on('data', seen);
      child.stderr.on('data', seen);
      child.on('error', reject);
      child.on('close', () => {
        clearTimeout(timer);
        if (pattern.test(output)) resolve(output);
        else reject(new Error(`${line} ended before ${String(pattern)}:\n${output}`));
      });
    });

  return { run, until };
}
