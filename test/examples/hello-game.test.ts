/**
 * The sample game (examples/hello-game) deployed and played on the defaults, as a reader of the
 * README does it: a real server with no setting but its own ports, data folder and instance id
 * (the game proxy on HAProxy, names under localhost, the CDN, HTTPS from the local CA made at its
 * first start, the admin token it generates), then the README's own commands, verbatim, run by a
 * shell in a temporary copy of the repository's layout (test/docs/shell.ts: `npx tavern` is the
 * repository's CLI; the README's `http://127.0.0.1:8080` is this server's origin; `<lobby id>` the
 * lobby the players joined). The copy's Dockerfile stands in for the sample's `FROM node` with an
 * image built FROM scratch with the host's node, since nothing can be pulled (the sample's
 * server.js and package.json, and the `ws` package as `npm install` would put it). Two Chromium
 * pages trust the local CA through the NSS database the README's certutil line makes, not by
 * ignoring certificate errors: each loads the page from the CDN over https, finds a lobby through
 * the API, connects with wss through the proxy, and sees what the other says. Then the README's
 * watch, find and CLI cheat-sheet commands against the same server.
 * test/docs/commands.test.ts checks that this file holds each README command it covers verbatim.
 * Under CI a missing engine, HAProxy, Chromium or certutil fails (see .ci/run).
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { docker, dockerProblem, removeBuildImages } from '../docker/engine.js';
import { importNodeBase } from '../docker/images.js';
import { createShell, type Shell } from '../docs/shell.js';
import { describeNeeding } from '../needs.js';
import { haproxyProblem } from '../proxy/helpers.js';
import { startServer, type Server } from '../server/process.js';

const CHROMIUM = '/usr/bin/chromium';
const EXAMPLE = fileURLToPath(new URL('../../examples/hello-game/', import.meta.url));
const WS = fileURLToPath(new URL('../../node_modules/ws/', import.meta.url));
const INSTANCE = `hello-${randomUUID().slice(0, 8)}`;
const BASE = `tavern-node-base:${randomUUID().slice(0, 8)}`;

/** README, "Play the sample game" (after `npm start`, and the line that needs sudo). */
const SAMPLE_GAME = `mkdir -p $HOME/.pki/nssdb && certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n tavern -i .tavern/tls/ca.crt
export TAVERN_TOKEN=$(npx tavern admin token)
npx tavern game create hello
export TAVERN_TOKEN=$(npx tavern token create --kind cloud --game hello)
npx tavern deploy -c examples/hello-game/rivet.toml`;
/** README: watching the lobby the players joined. */
const WATCH = `npx tavern lobbies list
npx tavern logs <lobby id>`;
/** README, "Find a lobby from your game". */
const FIND = `export PUBLIC_TOKEN=$(npx tavern token create --kind public)
curl -s -X POST http://127.0.0.1:8080/matchmaker/lobbies/find -H "authorization: Bearer $PUBLIC_TOKEN" -H 'content-type: application/json' -d '{"game_modes": ["default"]}'`;
/** README, "CLI cheat sheet", in the game's folder (`tavern login` is test/cli/deploy.test.ts's; `tavern sim` runs in the docs test). */
const FOLLOW = 'tavern logs <lobby id> --follow';
const CHEAT_SHEET = `tavern game list
tavern namespace create qa
tavern deploy -n staging -o matchmaker.max_players=16 --name "beta 2"
tavern version list
tavern version publish "beta 2" -n prod
tavern token create --kind public -n staging
tavern lobbies list --all
tavern logs <lobby id> --stream std_err --all`;
/** README, "CLI cheat sheet": on the server's machine. */
const ADMIN_TOKEN = 'tavern admin token';

const certutilProblem = (): string | undefined => (spawnSync('certutil', ['-H']).error === undefined ? undefined : 'certutil is missing (apt-get install libnss3-tools)');
const problem = (await dockerProblem()) ?? haproxyProblem() ?? (existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (apt-get install chromium)`) ?? certutilProblem();

/** The sample's Dockerfile as this machine can build it: the same files on a node image made FROM scratch. */
const TEST_DOCKERFILE = `FROM ${BASE}
WORKDIR /app
COPY package.json server.js ./
COPY node_modules/ws ./node_modules/ws
CMD ["/usr/bin/node", "server.js"]
`;

describeNeeding({ what: 'the Docker Engine, HAProxy, Chromium and certutil', start: 'start dockerd and apt-get install haproxy chromium libnss3-tools' }, 'the sample game on the defaults, as the README runs it', problem, () => {
  /** The temporary copy of the repository's layout: examples/hello-game, and the server's data folder .tavern. */
  let root: string;
  let game: string;
  let server: Server;
  let sh: Shell;
  let browser: Browser;
  let cdnUrl: string;
  const buildIds: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tavern-hello-game-'));
    await importNodeBase(docker, BASE);
    game = join(root, 'examples', 'hello-game');
    await cp(EXAMPLE, game, { recursive: true });
    await cp(WS, join(game, 'node_modules', 'ws'), { recursive: true, dereference: true });
    await writeFile(join(game, 'Dockerfile'), TEST_DOCKERFILE);
    server = await startServer('tavern (defaults)', { TAVERN_PORT: '0', TAVERN_DATA_DIR: join(root, '.tavern'), TAVERN_INSTANCE_ID: INSTANCE });
    expect(server.tail()).toContain(`Tavern's local CA (made now) signs the HTTPS certificates of *.localhost: ${join(root, '.tavern', 'tls', 'ca.crt')}`);
    const home = join(root, 'home');
    await mkdir(home);
    sh = await createShell(root, {
      TAVERN_API: server.origin, HOME: home,
      ...(process.env['DOCKER_HOST'] === undefined ? {} : { DOCKER_HOST: process.env['DOCKER_HOST'] }),
    });
    const played = await sh.run(SAMPLE_GAME);
    buildIds.push(...[...played.stdout.matchAll(/^build (\S+)$/gm)].map((m) => m[1] ?? ''));
    cdnUrl = /^cdn (\S+)$/m.exec(played.stdout)?.[1] ?? '';
    browser = await chromium.launch({
      executablePath: CHROMIUM, headless: true, env: { ...process.env, HOME: home },
      args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    const left = await docker.listContainers({ all: true, filters: { label: [`tavern.instance=${INSTANCE}`] } });
    for (const c of left) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
    await removeBuildImages(buildIds);
    await docker.getImage(BASE).remove({ force: true }).catch(() => undefined);
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  }, 60_000);

  /** A page of the game loaded from the CDN, once it is connected to a lobby: the page, its lobby, its WebSocket's URL. */
  const player = async (): Promise<{ page: Page; lobby: string; socket: string }> => {
    const page = await browser.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    const socket = page.waitForEvent('websocket');
    socket.catch(() => undefined);
    await page.goto(`${cdnUrl}?api=${encodeURIComponent(server.origin)}`);
    const status = page.locator('#status');
    await expect.poll(() => status.textContent(), { timeout: 60_000 }).toMatch(/^connected to lobby /);
    return { page, lobby: (await status.getAttribute('data-lobby')) ?? '', socket: (await socket).url() };
  };

  /** Sends `text` from `from` and waits until `to` shows it. */
  const say = async (from: Page, to: Page, text: string): Promise<void> => {
    await from.getByLabel('Message').fill(text);
    await from.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => to.locator('#log').textContent(), { timeout: 10_000 }).toContain(`them: ${text}`);
  };

  it('deploy prints the site\'s https URL; two players load it, join one lobby over wss through the proxy, and hear each other; the README\'s watch, find and cheat-sheet commands work on it', async () => {
    const tlsPort = new URL(String(server.listening['cdnTlsOrigin'])).port;
    expect(cdnUrl).toBe(`https://hello.cdn.localhost:${tlsPort}/`);
    const a = await player();
    const b = await player();
    expect(pageErrors).toEqual([]);
    expect(b.lobby).toBe(a.lobby);
    const proxy = server.listening['proxy'] as { http: number; https: number };
    expect(a.socket).toMatch(new RegExp(`^wss://${a.lobby}-default\\.lobby\\.local\\.localhost:${proxy.https}/\\?token=`));
    await say(a.page, b.page, 'hello from A');
    await say(b.page, a.page, 'hello from B');
    expect(await a.page.locator('#log').textContent()).not.toContain('them: hello from A');

    const fill = { '<lobby id>': a.lobby, 'http://127.0.0.1:8080': server.origin };
    const watched = await sh.run(WATCH, { fill });
    expect(watched.stdout).toMatch(new RegExp(`^${a.lobby}\\s+local\\s+default\\s+2/8`, 'm'));
    expect(watched.stdout).toContain('out| hello game listening on 3000, lobby ready: 200');

    // A third player's find, from curl: the fullest lobby with room is the one the two are in.
    const found = JSON.parse((await sh.run(FIND, { fill })).stdout) as { lobby: { lobby_id: string }; ports: Record<string, unknown>; player: { token: string } };
    expect(found.lobby.lobby_id).toBe(a.lobby);
    expect(found.ports['default']).toEqual({ host: `${a.lobby}-default.lobby.local.localhost:${proxy.https}`, hostname: `${a.lobby}-default.lobby.local.localhost`, port: proxy.https, is_tls: true });
    expect(found.player.token).toMatch(/^player\.[\w-]+\.[\w-]+\.[\w-]+$/);

    expect(await sh.until(FOLLOW, /hello game listening on 3000/, { cwd: game, fill })).toContain('out| hello game listening on 3000');
    const sheet = await sh.run(CHEAT_SHEET, { cwd: game, fill });
    buildIds.push(...[...sheet.stdout.matchAll(/^build (\S+)$/gm)].map((m) => m[1] ?? ''));
    expect(sheet.stdout).toMatch(/^\S+\s+hello\s+hello$/m);
    expect(sheet.stdout).toMatch(/^beta 2 \(\S+\) is live in prod$/m);
    expect(sheet.stdout).toMatch(/^\S+\s+beta 2\s+\S+\s+(prod|staging)/m);
    expect(sheet.stdout).toContain(a.lobby);
    const admin = /Tavern admin token: (\S+)/.exec(server.tail())?.[1];
    expect((await sh.run(ADMIN_TOKEN)).stdout).toBe(`${admin ?? 'the server printed no admin token'}\n`);
  }, 240_000);
});
