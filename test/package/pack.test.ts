/**
 * The npm package as a user gets it: `npm pack` (its prepare script compiles to dist/), installed into
 * an empty folder with production dependencies only. Install scripts are skipped and better-sqlite3
 * gets the native addon this checkout already built when the versions match (its build from source
 * is its own, and takes minutes on a small machine); otherwise it is rebuilt there. Then, with no
 * TypeScript runner installed:
 * `tavern --help`, `tavern sim`, `tavern serve` (until it listens, its dashboard served), and `tavern deploy` of a
 * site-only project against that server. And the repository itself after `npm ci` (whose prepare
 * script builds dist/ too): `npx tavern` and `npm start` run the compiled code, never tsx.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, ok } from '../server/process.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const ADMIN = 'pack-test-admin-token';

let dir: string;
let app: string;
let bin: string;

const env = (): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TAVERN_') && !k.startsWith('RIVET_') && !k.startsWith('npm_')));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tavern-pack-'));
  app = join(dir, 'app');
  await mkdir(app);
  await run('npm', ['pack', '--pack-destination', dir], { cwd: ROOT, env: env(), timeout: 300_000 });
  const tgz = (await readdir(dir)).find((f) => f.endsWith('.tgz'));
  if (tgz === undefined) throw new Error('npm pack wrote no .tgz');
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, allowScripts: { 'better-sqlite3': true } }));
  await run('npm', ['i', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, tgz)], { cwd: app, env: env(), timeout: 900_000 });
  const sqlite = join(app, 'node_modules', 'better-sqlite3');
  const version = async (pkg: string): Promise<unknown> => (JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8')) as { version?: unknown }).version;
  const built = join(ROOT, 'node_modules', 'better-sqlite3');
  if ((await version(sqlite)) === (await version(built))) await cp(join(built, 'build'), join(sqlite, 'build'), { recursive: true });
  else await run('npm', ['rebuild', 'better-sqlite3'], { cwd: app, env: env(), timeout: 900_000 });
  bin = join(app, 'node_modules', '.bin', 'tavern');
}, 1_200_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the npm package', () => {
  it('ships compiled JavaScript, no TypeScript runner', async () => {
    expect(existsSync(join(app, 'node_modules', 'tavern', 'dist', 'cli', 'main.js'))).toBe(true);
    // The schema the built-in scenarios name in their $schema, and the licence package.json names.
    expect(existsSync(join(app, 'node_modules', 'tavern', 'dist', 'sim', 'scenario', 'scenario.schema.json'))).toBe(true);
    expect(await readFile(join(app, 'node_modules', 'tavern', 'LICENSE'), 'utf8')).toContain('Apache License');
    // Of src/, only the dashboard's static files ship: no TypeScript.
    expect(await readdir(join(app, 'node_modules', 'tavern', 'src'))).toEqual(['dashboard']);
    expect((await readdir(join(app, 'node_modules', 'tavern', 'src', 'dashboard'))).sort()).toEqual(['access.js', 'app.js', 'charts.js', 'dom.js', 'index.html', 'lobby.js', 'preview.js', 'style.css', 'versions.js', 'words.js']);
    expect(existsSync(join(app, 'node_modules', 'tsx'))).toBe(false);
    expect(existsSync(join(app, 'node_modules', 'typescript'))).toBe(false);
    const { stdout } = await run('npx', ['tavern', '--help'], { cwd: app, env: env() });
    expect(stdout).toMatch(/Usage: tavern/);
    for (const command of ['serve', 'sim', 'deploy', 'login', 'logs']) expect(stdout).toContain(command);
  });

  it('in the repository, `npx tavern` and `npm start` run the compiled code (dist/, built by prepare), not tsx', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
    expect(pkg.scripts['prepare']).toBe('npm run build');
    // With the young generation `tavern`'s shebang gives node (docs/hosting.md).
    expect(pkg.scripts['start']).toBe('node --max-semi-space-size=64 dist/cli/main.js serve');
    expect((await readFile(join(ROOT, 'src/cli/main.ts'), 'utf8')).split('\n')[0]).toBe('#!/usr/bin/env -S node --max-semi-space-size=64');
    expect(pkg.bin['tavern']).toBe('dist/cli/main.js');
    const { stdout } = await run('npx', ['--no-install', 'tavern', '--version'], { cwd: ROOT, env: env() });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const server = spawn('npm', ['start'], { cwd: ROOT, env: { ...env(), TAVERN_PORT: '0', TAVERN_DATA_DIR: join(dir, 'start-data'), TAVERN_RUNTIME: 'none' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    try {
      const listening = await new Promise<string>((resolve, reject) => {
        server.once('exit', (code) => reject(new Error(`npm start exited with ${code}`)));
        createInterface({ input: server.stdout }).on('line', (line) => {
          if (line.includes('tavern listening')) resolve(line);
        });
      });
      expect(JSON.parse(listening)).toMatchObject({ msg: 'tavern listening' });
      const { stdout: tree } = await run('ps', ['-o', 'args=', '-g', String(server.pid)]);
      expect(tree).toContain('dist/cli/main.js serve');
      expect(tree).not.toContain('tsx');
    } finally {
      if (server.pid !== undefined) process.kill(-server.pid, 'SIGTERM');
    }
  }, 120_000);

  it('tavern sim runs a scenario', async () => {
    const { stdout } = await run(bin, ['sim', 'steady', '--set', 'duration_ms=60000', '--json'], { cwd: app, env: env(), timeout: 120_000 });
    expect(JSON.parse(stdout)).toMatchObject({ scenario: 'steady', violations: [] });
  });

  it('tavern serve listens and serves the dashboard, and tavern deploy publishes a site-only project to it', async () => {
    const data = join(dir, 'data');
    const output: string[] = [];
    const server = spawn(bin, ['serve'], { cwd: app, env: { ...env(), TAVERN_PORT: '0', TAVERN_DATA_DIR: data, TAVERN_RUNTIME: 'fake', TAVERN_ADMIN_TOKEN: ADMIN }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const origin = await new Promise<string>((resolve, reject) => {
        server.once('exit', (code) => reject(new Error(`tavern serve exited with ${code}`)));
        createInterface({ input: server.stderr }).on('line', (line) => output.push(line));
        createInterface({ input: server.stdout }).on('line', (line) => {
          output.push(line);
          if (line.includes('tavern listening')) resolve((JSON.parse(line) as { publicOrigin: string }).publicOrigin);
        });
      });
      const page = await fetch(`${origin}/dashboard`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('/dashboard/app.js');
      const admin = { ...env(), TAVERN_API: origin, TAVERN_TOKEN: ADMIN };
      // A name of its own per run; a refusal says what the server already had, and what it logged.
      const name = `packed-${randomUUID().slice(0, 8)}`;
      const created = await run(bin, ['game', 'create', name], { cwd: app, env: admin }).catch(async (e: unknown) => {
        const games = await api(origin, 'GET', '/cloud/games', { token: ADMIN });
        throw new Error(`${String(e)}\ngames on ${origin}: ${JSON.stringify(games.body)}\nserver output:\n${output.join('\n')}`);
      });
      const gameId = created.stdout.trim();
      const project = join(dir, 'project');
      await mkdir(join(project, 'public'), { recursive: true });
      await writeFile(join(project, 'public', 'index.html'), '<h1>packed</h1>\n');
      await writeFile(join(project, 'rivet.yaml'), 'cdn:\n  build_output: public\n');
      const { stdout } = await run(bin, ['deploy', '--game', name, '--name', 'packed one'], { cwd: project, env: admin, timeout: 120_000 });
      expect(stdout).toMatch(/^version \S+ is live in prod$/m);
      const { sites } = ok('sites', await api(origin, 'GET', `/cloud/games/${gameId}/cdn/sites`, { token: ADMIN })) as { sites: { complete: boolean; content_length: number }[] };
      expect(sites).toEqual([expect.objectContaining({ complete: true, content_length: 16 })]);
    } finally {
      server.kill('SIGTERM');
    }
  }, 120_000);
});
