/** A cdn block's site: the build command (with build_env), the files left after .rivet-cdn-ignore, types, hash. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectSite, runBuildCommand, SiteBuildFailed } from '../../src/cli/site.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tavern-site-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const sink = (): PassThrough & { text: () => string } => {
  const chunks: Buffer[] = [];
  const s = new PassThrough();
  s.on('data', (c: Buffer) => chunks.push(c));
  return Object.assign(s, { text: () => Buffer.concat(chunks).toString() });
};

describe('the site', () => {
  it('runs the build command in the project folder with build_env, its output passed on', async () => {
    const log = sink();
    await runBuildCommand('mkdir -p out && echo "$GREETING" > out/index.html && echo built', dir, log, { GREETING: 'hello' });
    expect(log.text()).toBe('built\n');
    const site = await collectSite(dir, 'out');
    expect(site.files.map((f) => [f.path, f.bytes, f.contentType])).toEqual([['index.html', 6, 'text/html']]);
  });

  it('says which command failed and how', async () => {
    await expect(runBuildCommand('echo broken >&2; exit 4', dir, sink())).rejects.toThrow(new SiteBuildFailed('cdn.build_command `echo broken >&2; exit 4` exited with 4 (its output is above)'));
    await expect(collectSite(dir, 'missing')).rejects.toThrow('cdn.build_output missing is not a folder');
  });

  it('leaves out what .rivet-cdn-ignore matches (and the file itself); the hash follows paths and contents', async () => {
    await mkdir(join(dir, 'dist', 'maps'), { recursive: true });
    await writeFile(join(dir, 'dist', 'index.html'), '<h1/>');
    await writeFile(join(dir, 'dist', 'app.js'), 'x');
    await writeFile(join(dir, 'dist', 'maps', 'app.js.map'), '{}');
    await writeFile(join(dir, 'dist', 'notes.txt'), 'n');
    await writeFile(join(dir, 'dist', '.rivet-cdn-ignore'), 'maps/\n*.txt\n');
    const first = await collectSite(dir, 'dist');
    expect(first.files.map((f) => [f.path, f.contentType])).toEqual([['app.js', 'text/javascript'], ['index.html', 'text/html']]);
    expect((await collectSite(dir, './dist/')).sha256).toBe(first.sha256);
    await writeFile(join(dir, 'dist', 'app.js'), 'y');
    expect((await collectSite(dir, 'dist')).sha256).not.toBe(first.sha256);
  });
});
