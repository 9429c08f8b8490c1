/**
 * The `tavern` command itself: its version, a reader that stops early, the admin token shown
 * again from the data folder, and failures with a known cause that say what to do.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/cli/api.js';
import { report, StepError } from '../../src/cli/errors.js';
import { startServer } from '../server/process.js';
import { spawnTavern, tavern } from './run.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tavern-cli-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('tavern', () => {
  it('--version prints the package version', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const ran = await tavern(dir, {}, '--version');
    expect(ran).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('ends quietly when its reader stops early (`tavern … | head -1`)', async () => {
    const child = spawnTavern(dir, {}, 'sim', 'steady', '--json');
    child.stdout?.destroy();
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('admin token: TAVERN_ADMIN_TOKEN, or the one the server generated, read from its data folder; none yet says why', async () => {
    const data = join(dir, 'data');
    // SQLite in the data folder: not a PostgreSQL the environment may name.
    const none = await tavern(dir, { TAVERN_DATA_DIR: data, DATABASE_URL: '' }, 'admin', 'token');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("the admin token is made on the server's first start");
    const server = await startServer('admin-token', { TAVERN_DATA_DIR: data, TAVERN_PORT: '0', TAVERN_RUNTIME: 'none', TAVERN_PROXY: 'off', TAVERN_CDN_PORT: 'off' });
    await server.stop();
    const printed = /Tavern admin token: (\S+)/.exec(server.tail())?.[1];
    expect(printed).toMatch(/^tavern_admin_/);
    expect(await tavern(dir, { TAVERN_DATA_DIR: data, DATABASE_URL: '' }, 'admin', 'token')).toMatchObject({ code: 0, stdout: `${printed ?? ''}\n` });
    expect(await tavern(dir, { TAVERN_DATA_DIR: data, DATABASE_URL: '', TAVERN_ADMIN_TOKEN: 'mine' }, 'admin', 'token')).toMatchObject({ code: 0, stdout: 'mine\n' });
  });
});

describe('failures with a known cause say what to do', () => {
  it('a public token where a cloud token is needed, and no server', () => {
    expect(report(new ApiError('CLAIMS_MISSING_ENTITLEMENT', 'Missing "GameCloud" entitlement.', 401)).text).toContain('tavern token create --kind cloud');
    expect(report(new ApiError('NETWORK', 'cannot reach http://127.0.0.1:8080: ECONNREFUSED', 0)).text).toContain('Start it with `npm start`');
  });

  it("the Docker Engine's raw errors", () => {
    const deployStep = (message: string): string => report(new StepError('building the image of docker', new Error(message), [])).text;
    expect(deployStep('connect ENOENT /var/run/docker.sock')).toContain('no Docker Engine answers at /var/run/docker.sock');
    expect(deployStep('connect EACCES /var/run/docker.sock')).toContain('add it to the docker group');
    expect(deployStep('(HTTP code 500) server error - Cannot locate specified Dockerfile: game.Dockerfile')).toContain('there is no game.Dockerfile in the project folder: set docker.dockerfile');
    expect(deployStep('docker build of Dockerfile failed: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 10.0.0.53:53: no such host')).toContain('the Docker Engine cannot reach registry-1.docker.io to pull an image the Dockerfile needs (its FROM)');
    expect(deployStep('Get "https://registry.example/v2/": dial tcp 1.2.3.4:443: i/o timeout')).toContain('cannot reach registry.example');
    expect(deployStep('something else')).toBe('tavern: building the image of docker failed: something else\nnothing was uploaded');
  });
});
