/**
 * A `cdn` block's site: its `build_command` run (through the shell, in the project folder, with
 * `build_env` added to the environment, its output shown on stderr), then the files of `build_output` minus those `.rivet-cdn-ignore`
 * (gitignore syntax, in the output folder) excludes, with their MIME types and one SHA-256 over
 * paths and contents (the re-run check).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import ignore from 'ignore';
import { lookup } from 'mime-types';
import { listFiles } from './files.js';
import { forDestination } from './terminal.js';

export const CDN_IGNORE = '.rivet-cdn-ignore';

export class SiteBuildFailed extends Error {}

export interface SiteFile {
  readonly path: string;
  readonly file: string;
  readonly bytes: number;
  readonly contentType: string;
}

export interface SiteFiles {
  readonly files: readonly SiteFile[];
  readonly sha256: string;
}

/** Runs `command` with `sh -c` in `cwd` (`env` added to the environment); its output goes to `log`; rejects naming the exit code. */
export function runBuildCommand(command: string, cwd: string, log: NodeJS.WritableStream, env: Readonly<Record<string, string>> = {}): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn('sh', ['-c', command], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(forDestination(log)).pipe(log, { end: false });
    child.stderr.pipe(forDestination(log)).pipe(log, { end: false });
    child.on('error', (e) => fail(new SiteBuildFailed(`cdn.build_command could not start: ${e.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) done();
      else fail(new SiteBuildFailed(`cdn.build_command \`${command}\` exited with ${code ?? signal} (its output is above)`));
    });
  });
}

/**
 * @example
 * const site = await collectSite('/game', './dist/');
 */
export async function collectSite(root: string, buildOutput: string): Promise<SiteFiles> {
  const dir = resolve(root, buildOutput);
  const isDir = await stat(dir).then((s) => s.isDirectory(), () => false);
  if (!isDir) throw new SiteBuildFailed(`cdn.build_output ${buildOutput} is not a folder (${dir})`);
  const rules = ignore();
  const ignoreText = await readFile(join(dir, CDN_IGNORE), 'utf8').catch(() => undefined);
  if (ignoreText !== undefined) rules.add(ignoreText);
  const paths = (await listFiles(dir)).filter((p) => p !== CDN_IGNORE && !rules.ignores(p));
  const hash = createHash('sha256');
  const files: SiteFile[] = [];
  for (const path of paths) {
    const file = join(dir, path);
    const content = await readFile(file);
    hash.update(`${path}\0${content.length}\0`).update(content);
    files.push({ path, file, bytes: content.length, contentType: lookup(path) || 'application/octet-stream' });
  }
  return { files, sha256: hash.digest('hex') };
}
