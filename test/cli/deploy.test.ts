/**
 * `tavern deploy` end to end: a real server process (Docker runtime, SQLite, regions named as in
 * Rivet's example game), the real CLI run in a sample game folder (game-folder.ts). The image is
 * built by the Docker Engine from the folder's Dockerfile, uploaded as a build, the site built by
 * the config's build_command and uploaded minus `.rivet-cdn-ignore`d files, the version created
 * and published; a player's find then starts a lobby from that build, whose lines `tavern logs`
 * prints. A second deploy (overlay + override) reuses the uploads; bad inputs fail clearly.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithDocker, docker, dockerProblem } from '../docker/engine.js';
import { api, getWithHost, ok, startServer, type Server } from '../server/process.js';
import { eventually } from '../wait.js';
import { CLIENT, writeGameFolder } from './game-folder.js';
import { spawnTavern, tavern } from './run.js';

const problem = await dockerProblem();
const ADMIN = `cli-admin-${randomUUID()}`;
const INSTANCE = `cli-${randomUUID().slice(0, 8)}`;

interface World {
  server: Server;
  dataDir: string;
  game: string;
  gameId: string;
  cloudToken: string;
  env: Record<string, string>;
}
const w = {} as World;

const noStack = (text: string): void => {
  expect(text).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/);
};

/** Every file under `dir`, recursively (the server's blob store). */
const filesUnder = async (dir: string): Promise<string[]> =>
  (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));

describeWithDocker('tavern deploy, end to end', problem, () => {
  beforeAll(async () => {
    w.dataDir = await mkdtemp(join(tmpdir(), 'tavern-cli-e2e-'));
    w.server = await startServer('tavern (cli e2e)', {
      TAVERN_RUNTIME: 'docker', TAVERN_ADMIN_TOKEN: ADMIN, TAVERN_HOST: '127.0.0.1', TAVERN_PORT: '0', TAVERN_DATA_DIR: w.dataDir,
      TAVERN_INSTANCE_ID: INSTANCE, TAVERN_REGIONS: 'lnd-sfo,lnd-fra', LOG_LEVEL: 'info',
      TAVERN_CDN_PORT: '0', TAVERN_CDN_DOMAIN: 'cdn.test',
    });
    w.game = `tanks-${randomUUID().slice(0, 6)}`;
    const admin = { TAVERN_API: w.server.origin, TAVERN_TOKEN: ADMIN };
    const created = await tavern(w.dataDir, admin, 'game', 'create', w.game, '--display-name', 'Tanks');
    expect(created.stderr).toBe('');
    w.gameId = created.stdout.trim();
    const cloud = await tavern(w.dataDir, admin, 'token', 'create', '--kind', 'cloud', '--game', w.game);
    expect(cloud.code).toBe(0);
    w.cloudToken = cloud.stdout.trim();
    w.env = { TAVERN_API: w.server.origin, RIVET_TOKEN: w.cloudToken };
  }, 120_000);

  afterAll(async () => {
    await w.server?.stop();
    const left = await docker.listContainers({ all: true, filters: { label: [`tavern.instance=${INSTANCE}`] } });
    for (const c of left) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
    for (const image of await docker.listImages({ filters: { reference: ['tavern-game'] } })) {
      await docker.getImage(image.Id).remove({ force: true }).catch(() => undefined);
    }
    if (w.dataDir !== undefined) await rm(w.dataDir, { recursive: true, force: true });
  }, 60_000);

  it('deploys the sample game: build, site, version live in prod; a find starts a lobby from the build; logs show its lines', async () => {
    const dir = await mkdtemp(join(w.dataDir, 'game-'));
    await writeGameFolder(dir);
    const ran = await tavern(dir, w.env, 'deploy');
    expect(ran.code, ran.stderr).toBe(0);
    const versionId = /^version (\S+) is live in prod$/m.exec(ran.stdout)?.[1];
    const buildId = /^build (\S+)$/m.exec(ran.stdout)?.[1];
    const siteId = /^site (\S+)$/m.exec(ran.stdout)?.[1];
    expect(versionId && buildId && siteId, ran.stdout).toBeTruthy();
    expect(ran.stderr).toMatch(/sent .* in .* s/);

    const token = { token: w.cloudToken };
    const game = ok('game', await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}`, token))['game'] as { namespaces: { name_id: string; version_id: string; namespace_id: string }[] };
    expect(game.namespaces.find((n) => n.name_id === 'prod')?.version_id).toBe(versionId);
    const { version } = ok('version', await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}/versions/${versionId}`, token)) as { version: { config: { matchmaker: { docker: Record<string, unknown> }; cdn: Record<string, unknown> } } };
    const mmDocker = version.config.matchmaker.docker;
    expect(mmDocker['image_id'] ?? (version.config.matchmaker as unknown as { game_modes: { default: { docker: { image_id: string } } } }).game_modes.default.docker.image_id).toBe(buildId);
    expect(JSON.stringify(version.config)).not.toContain('dockerfile');
    expect(version.config.cdn['site_id']).toBe(siteId);

    const { builds } = ok('builds', await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}/builds`, token)) as { builds: { build_id: string; complete: boolean }[] };
    expect(builds).toEqual([expect.objectContaining({ build_id: buildId, complete: true })]);
    const { sites } = ok('sites', await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}/cdn/sites`, token)) as { sites: { site_id: string; complete: boolean; content_length: number }[] };
    const apiTxt = w.server.origin;
    const served = Buffer.byteLength(CLIENT['index.html']) + Buffer.byteLength(CLIENT['app.js']) + Buffer.byteLength(apiTxt);
    expect(sites).toEqual([expect.objectContaining({ site_id: siteId, complete: true, content_length: served })]);
    // Deploy prints where the site answers; the CDN serves it there (the Host header, no DNS needed).
    const cdnUrl = /^cdn (\S+)$/m.exec(ran.stdout)?.[1] ?? '';
    const cdnOrigin = String(w.server.listening['cdnOrigin']);
    expect(cdnUrl).toBe(`http://${w.game}.cdn.test:${new URL(cdnOrigin).port}/`);
    expect(await getWithHost(cdnOrigin, new URL(cdnUrl).host, '/')).toEqual({ status: 200, body: CLIENT['index.html'] });
    // The stored files: both sent, the ignored source map not.
    const stored = await filesUnder(join(w.dataDir, 'blobs'));
    const named = (name: string): string[] => stored.filter((f) => f.endsWith(`/${name}`));
    expect(named('index.html')).toHaveLength(1);
    expect(await readFile(named('index.html')[0] as string, 'utf8')).toBe(CLIENT['index.html']);
    expect(await readFile(named('app.js')[0] as string, 'utf8')).toBe(CLIENT['app.js']);
    expect(await readFile(named('api.txt')[0] as string, 'utf8')).toBe(apiTxt);
    expect(named('app.js.map')).toEqual([]);
    expect(named('.rivet-cdn-ignore')).toEqual([]);

    // A player finds a lobby: it runs the uploaded image and says it is ready.
    const pub = await tavern(dir, w.env, 'token', 'create', '--kind', 'public');
    expect(pub.code, pub.stderr).toBe(0);
    const found = ok('find', await api(w.server.origin, 'POST', '/matchmaker/lobbies/find', { token: pub.stdout.trim(), body: { game_modes: ['default'] } }));
    const lobbyId = (found['lobby'] as { lobby_id: string }).lobby_id;
    const listed = await tavern(dir, w.env, 'lobbies', 'list');
    expect(listed.stdout).toContain(lobbyId);
    expect(listed.stdout).toMatch(new RegExp(`${lobbyId}\\s+lnd-(sfo|fra)\\s+default\\s+\\d+/32\\s+ready`));
    const logs = await eventually('the game server to log that it listens', async () => {
      const got = await tavern(dir, w.env, 'logs', lobbyId);
      return got.stdout.includes('sample game server listening') && got;
    }, { timeoutMs: 30_000, everyMs: 500 });
    expect(logs.stdout).toContain('lobby ready');
    expect(logs.stdout).toContain('sample game server listening on');
  }, 240_000);

  it('a second deploy (staging overlay, -o override) reuses the build and the site and publishes their new config', async () => {
    const dir = await mkdtemp(join(w.dataDir, 'game-'));
    await writeGameFolder(dir);
    const before = ok('builds', await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}/builds`, { token: w.cloudToken }))['builds'] as unknown[];
    const again = await tavern(dir, w.env, 'deploy', '-n', 'staging', '-o', 'matchmaker.tier=basic-1d2', '--name', 'staging one');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/already holds this image .*not uploaded again/);
    expect(again.stderr).toMatch(/already holds these 3 files: not uploaded again/);
    const after = ok('builds', await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}/builds`, { token: w.cloudToken }))['builds'] as unknown[];
    expect(after).toHaveLength(before.length);
    const versionId = /^version (\S+) is live in staging$/m.exec(again.stdout)?.[1];
    const { version } = ok('version', await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}/versions/${versionId}`, { token: w.cloudToken })) as { version: { display_name: string; config: { matchmaker: Record<string, unknown> } } };
    expect(version.display_name).toBe('staging one');
    expect(JSON.stringify(version.config.matchmaker)).toContain('"max_players":8');
    expect(JSON.stringify(version.config.matchmaker)).toContain('basic-1d2');
    const versions = await tavern(dir, w.env, 'version', 'list');
    expect(versions.stdout).toMatch(/staging one .* staging/);
    expect((await tavern(dir, w.env, 'namespace', 'create', 'qa', '--display-name', 'QA')).code).toBe(0);
    expect((await tavern(dir, w.env, 'version', 'publish', 'staging one', '-n', 'qa')).stdout).toContain('is live in qa');
    expect((await tavern(dir, w.env, 'namespace', 'list')).stdout).toMatch(/\bqa\s+staging one/);
  }, 240_000);

  it('bad input: a malformed rivet.toml names file, line and column; a wrong token shows the code; an unknown game is a usage error; none prints a stack', async () => {
    // Each command in a folder of its own, all started together (each is a tsx start of a few seconds).
    const folder = async (name: string, toml?: string): Promise<string> => {
      const dir = await mkdtemp(join(w.dataDir, `bad-${name}-`));
      await writeGameFolder(dir);
      if (toml !== undefined) await writeFile(join(dir, 'rivet.toml'), toml);
      return dir;
    };
    const [malformedDir, wrongTypeDir, dir, sampleDir] = await Promise.all([
      folder('malformed', '[matchmaker]\nmax_players = 32\ntier = = "basic-1d1"\n'),
      folder('type', '[matchmaker.docker]\ndockerfile = 7\n'),
      folder('privileged', '[matchmaker]\nmax_players = 32\n\n[matchmaker.docker]\ndockerfile = "Dockerfile"\nprivileged = true\n'),
      folder('sample'),
    ]);
    const [malformed, wrongType, refused, badToken, noToken, badOption, unknownGame, badVersion, unknownRegion] = await Promise.all([
      tavern(malformedDir, w.env, 'deploy'),
      tavern(wrongTypeDir, w.env, 'deploy'),
      tavern(dir, w.env, 'deploy', '-o', 'matchmaker.max_player=8'),
      tavern(dir, { TAVERN_API: w.server.origin, TAVERN_TOKEN: 'nope' }, 'game', 'list'),
      tavern(dir, { TAVERN_API: w.server.origin }, 'game', 'list'),
      tavern(dir, w.env, 'deploy', '--concurrency', '0'),
      tavern(dir, { TAVERN_API: w.server.origin, TAVERN_TOKEN: ADMIN }, 'version', 'list', '--game', 'no-such-game'),
      // The server checks the whole config before anything is built or uploaded.
      tavern(dir, w.env, 'deploy', '-o', 'matchmaker.max_players=-3', '-c', join(dir, 'rivet.staging.toml')),
      tavern(sampleDir, w.env, 'deploy', '-o', 'matchmaker.regions={"lnd-atl":{}}'),
    ]);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(/rivet\.toml:3:\d+: /);
    noStack(malformed.stderr);

    expect(wrongType.code).toBe(1);
    expect(wrongType.stderr).toContain('matchmaker.docker.dockerfile must be a non-empty string');

    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/rivet\.toml:6: matchmaker\.docker\.privileged: `privileged` is never allowed: lobbies run unprivileged/);
    expect(refused.stderr).toContain('-o matchmaker.max_player=8: matchmaker.max_player: unknown key `max_player`: did you mean `max_players`?');
    expect(refused.stderr).toContain('nothing was built or uploaded');
    noStack(refused.stderr);

    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toMatch(/^tavern: [A-Z_]+: /);
    noStack(badToken.stderr);

    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('no token');

    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toContain('expected a whole number from 1 to 64');

    expect(unknownGame.code).toBe(2);
    expect(unknownGame.stderr).toContain('no game named no-such-game');

    expect(badVersion.code).toBe(1);
    expect(badVersion.stderr).toMatch(/^tavern: checking the config with the server failed: the server refuses this config, so nothing was built:\n {2}- config\.matchmaker\.max-players\.\S+/m);
    expect(badVersion.stderr).toContain('nothing was uploaded');

    expect(unknownRegion.code).toBe(1);
    expect(unknownRegion.stderr).toContain('config.matchmaker.regions.*lnd-atl*.not-found: this server has no region lnd-atl; it runs: lnd-sfo, lnd-fra (an operator adds regions with TAVERN_REGIONS)');
    expect(unknownRegion.stderr).not.toContain('building');
  }, 120_000);

  it('login: a device link completed by an admin saves a cloud token the next commands use', async () => {
    const dir = await mkdtemp(join(w.dataDir, 'login-'));
    const login = spawnTavern(dir, { TAVERN_API: w.server.origin }, 'login');
    let err = '';
    let out = '';
    login.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    const linkToken = await new Promise<string>((resolve, reject) => {
      login.stderr?.on('data', (c: Buffer) => {
        err += c.toString();
        const m = /tavern login --complete (\S+)/.exec(err);
        if (m?.[1] !== undefined) resolve(m[1]);
      });
      login.once('exit', () => reject(new Error(`login exited: ${err}`)));
    });
    const done = new Promise<number | null>((resolve) => login.once('exit', resolve));
    const completed = await tavern(dir, { TAVERN_API: w.server.origin, TAVERN_TOKEN: ADMIN }, 'login', '--complete', linkToken, '--game', w.game);
    expect(completed.code, completed.stderr).toBe(0);
    expect(await done).toBe(0);
    expect(out).toContain('.tavern/cloud_token');
    // No token and no API given: both come from the saved login.
    const listed = await tavern(dir, {}, 'game', 'list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(w.game);
  }, 60_000);

  it('a Dockerfile that fails to build shows its output, names the step, and leaves no build behind', async () => {
    const dir = await mkdtemp(join(w.dataDir, 'broken-'));
    await writeGameFolder(dir);
    await writeFile(join(dir, 'Dockerfile'), 'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "sh", "-c", "echo compiling the game; exit 3"]\n');
    const before = ok('builds', await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}/builds`, { token: w.cloudToken }))['builds'] as unknown[];
    const ran = await tavern(dir, w.env, 'deploy');
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('the image of matchmaker.docker (Dockerfile) failed');
    expect(ran.stderr).toContain('compiling the game');
    expect(ran.stderr).toContain('nothing was uploaded');
    noStack(ran.stderr);
    const after = ok('builds', await api(w.server.origin, 'GET', `/cloud/games/${w.gameId}/builds`, { token: w.cloudToken }))['builds'] as unknown[];
    expect(after).toHaveLength(before.length);
  }, 120_000);
});
