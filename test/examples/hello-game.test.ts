/**
 * The sample game (examples/hello-game) deployed and played on the defaults, as a new user would:
 * a real server with no setting but its own ports, data folder, instance id and admin token (the
 * game proxy on HAProxy, names under localhost, the CDN, HTTPS from the local CA made at its first
 * start); `tavern deploy` in a copy of the folder (its Dockerfile's `FROM node` stands in for an
 * image built FROM scratch with the host's node, since nothing can be pulled; the sample's
 * server.js, package.json and the `ws` package as `npm install` would put it); then two Chromium
 * pages that trust the local CA through an NSS database (the start-up line's own certutil command),
 * not by ignoring certificate errors: each loads the page from the CDN over https, finds a lobby
 * through the API, connects with wss through the proxy, and sees what the other says.
 * Under CI a missing engine, HAProxy, Chromium or certutil fails (see .ci/run).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tavern } from '../cli/run.js';
import { docker, dockerProblem, removeBuildImages } from '../docker/engine.js';
import { importNodeBase } from '../docker/images.js';
import { describeNeeding } from '../needs.js';
import { haproxyProblem } from '../proxy/helpers.js';
import { startServer, type Server } from '../server/process.js';

const CHROMIUM = '/usr/bin/chromium';
const EXAMPLE = fileURLToPath(new URL('../../examples/hello-game/', import.meta.url));
const WS = fileURLToPath(new URL('../../node_modules/ws/', import.meta.url));
const ADMIN = `hello-admin-${randomUUID()}`;
const INSTANCE = `hello-${randomUUID().slice(0, 8)}`;
const BASE = `tavern-node-base:${randomUUID().slice(0, 8)}`;

const certutilProblem = (): string | undefined => (spawnSync('certutil', ['-H']).error === undefined ? undefined : 'certutil is missing (apt-get install libnss3-tools)');
const problem = (await dockerProblem()) ?? haproxyProblem() ?? (existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (apt-get install chromium)`) ?? certutilProblem();

/** The sample's Dockerfile as this machine can build it: the same files on a node image made FROM scratch. */
const TEST_DOCKERFILE = `FROM ${BASE}
WORKDIR /app
COPY package.json server.js ./
COPY node_modules/ws ./node_modules/ws
CMD ["/usr/bin/node", "server.js"]
`;

describeNeeding({ what: 'the Docker Engine, HAProxy, Chromium and certutil', start: 'start dockerd and apt-get install haproxy chromium libnss3-tools' }, 'the sample game on the defaults', problem, () => {
  let dataDir: string;
  let server: Server;
  let browser: Browser;
  let cdnUrl: string;
  let buildId: string | undefined;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tavern-hello-game-'));
    await importNodeBase(docker, BASE);
    const game = join(dataDir, 'hello-game');
    await cp(EXAMPLE, game, { recursive: true });
    await cp(WS, join(game, 'node_modules', 'ws'), { recursive: true, dereference: true });
    await writeFile(join(game, 'Dockerfile.test'), TEST_DOCKERFILE);

    server = await startServer('tavern (defaults)', { TAVERN_ADMIN_TOKEN: ADMIN, TAVERN_PORT: '0', TAVERN_DATA_DIR: join(dataDir, 'data'), TAVERN_INSTANCE_ID: INSTANCE });
    const admin = { TAVERN_API: server.origin, TAVERN_TOKEN: ADMIN };
    const created = await tavern(dataDir, admin, 'game', 'create', 'hello', '--display-name', 'Hello');
    expect(created.code, created.stderr).toBe(0);
    const cloud = await tavern(dataDir, admin, 'token', 'create', '--kind', 'cloud', '--game', 'hello');
    const deployed = await tavern(game, { TAVERN_API: server.origin, TAVERN_TOKEN: cloud.stdout.trim() }, 'deploy', '-o', 'matchmaker.docker.dockerfile=Dockerfile.test');
    expect(deployed.code, `${deployed.stderr}\n${server.tail()}`).toBe(0);
    buildId = /^build (\S+)$/m.exec(deployed.stdout)?.[1];
    cdnUrl = /^cdn (\S+)$/m.exec(deployed.stdout)?.[1] ?? '';

    // Trust the local CA as the start-up line says, in an NSS database of a HOME of the test's own.
    const trust = /^Tavern's local CA \(made now\) .*$/m.exec(server.tail())?.[0] ?? '';
    const nss = /for Chromium \(NSS, libnss3-tools\): (.+?); for Node/.exec(trust)?.[1];
    expect(nss, server.tail()).toMatch(/^mkdir -p \$HOME\/\.pki\/nssdb && certutil -d sql:\$HOME\/\.pki\/nssdb -A -t C,, -n tavern -i \/.+\/tls\/ca\.crt$/);
    const home = join(dataDir, 'home');
    await mkdir(home);
    execFileSync('sh', ['-c', nss ?? ''], { env: { ...process.env, HOME: home } });
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
    if (buildId !== undefined) await removeBuildImages([buildId]);
    await docker.getImage(BASE).remove({ force: true }).catch(() => undefined);
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
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

  it('deploy prints the site\'s https URL; two players load it, join one lobby over wss through the proxy, and hear each other', async () => {
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
  }, 120_000);
});
