/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core against a real
 * server (Docker runtime) holding the sample game deployed by the real CLI, whose game server
 * prints a line every second. Signs in with the cloud token, sees the version, sees a lobby
 * appear after a player's find, follows its logs until a new line arrives, sees the charts
 * drawn, runs the simulator, and reports no console error. Screenshots go to
 * test/.generated/dashboard/. Under CI a missing Chromium or engine fails (see .ci/run).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeGameFolder } from '../cli/game-folder.js';
import { tavern } from '../cli/run.js';
import { describeWithDocker, docker, dockerProblem, removeBuildImages } from '../docker/engine.js';
import { api, ok, startServer, type Server } from '../server/process.js';
import { chromiumProblem, collectErrors, launchChromium } from './chromium.js';

const SHOTS = new URL('../.generated/dashboard/', import.meta.url).pathname;
const ADMIN = `dash-admin-${randomUUID()}`;
const INSTANCE = `dash-${randomUUID().slice(0, 8)}`;
const problem = (await dockerProblem()) ?? chromiumProblem();

/** The sample game server, printing a numbered line every second after it is ready. */
const TICKING_SERVER = `busybox nc -ll -p "$PORT_DEFAULT" -e busybox cat &
busybox wget -q -O - --post-data='' --header "Authorization: Bearer $RIVET_TOKEN" "$RIVET_API_ENDPOINT/matchmaker/lobbies/ready" >/dev/null && echo "lobby ready"
i=0
while true; do i=$((i+1)); echo "tick $i"; busybox sleep 1; done
`;

let server: Server;
let dataDir: string;
let browser: Browser;
let page: Page;
let cloudToken: string;
let publicToken: string;
/** The build `tavern deploy` uploaded: its images are removed at the end. */
let buildId: string | undefined;
const consoleErrors: string[] = [];

describeWithDocker('the dashboard in Chromium', problem, () => {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tavern-dashboard-'));
    await mkdir(SHOTS, { recursive: true });
    server = await startServer('tavern (dashboard)', {
      TAVERN_RUNTIME: 'docker', TAVERN_ADMIN_TOKEN: ADMIN, TAVERN_HOST: '127.0.0.1', TAVERN_PORT: '0', TAVERN_DATA_DIR: dataDir, TAVERN_INSTANCE_ID: INSTANCE, TAVERN_REGIONS: 'lnd-sfo,lnd-fra',
    });
    const admin = { TAVERN_API: server.origin, TAVERN_TOKEN: ADMIN };
    expect((await tavern(dataDir, admin, 'game', 'create', 'arena', '--display-name', 'Arena')).code).toBe(0);
    cloudToken = (await tavern(dataDir, admin, 'token', 'create', '--kind', 'cloud', '--game', 'arena')).stdout.trim();
    const game = join(dataDir, 'game');
    await writeGameFolder(game);
    await writeFile(join(game, 'server.sh'), TICKING_SERVER);
    const env = { TAVERN_API: server.origin, TAVERN_TOKEN: cloudToken };
    const deployed = await tavern(game, env, 'deploy', '--name', 'arena v1');
    expect(deployed.code, deployed.stderr).toBe(0);
    buildId = /^build (\S+)$/m.exec(deployed.stdout)?.[1];
    publicToken = (await tavern(game, env, 'token', 'create', '--kind', 'public')).stdout.trim();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 1400 } });
    collectErrors(page, consoleErrors);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    const left = await docker.listContainers({ all: true, filters: { label: [`tavern.instance=${INSTANCE}`] } });
    for (const c of left) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
    if (buildId !== undefined) await removeBuildImages([buildId]);
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('loads fast: the page and its script are small and come from the server only', async () => {
    const requests: string[] = [];
    let scriptBytes = 0;
    page.on('response', (r) => {
      requests.push(r.url());
      if (r.request().resourceType() === 'script') void r.body().then((b) => (scriptBytes += b.length));
    });
    await page.goto(`${server.origin}/dashboard`);
    await page.waitForLoadState('networkidle');
    expect(requests.every((u) => u.startsWith(server.origin))).toBe(true);
    expect(scriptBytes).toBeGreaterThan(0);
    expect(scriptBytes).toBeLessThan(200 * 1024);
  });

  it('refuses a wrong token with the server\'s message, then signs in with the cloud token and shows the version', async () => {
    await page.getByLabel('Token', { exact: true }).fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('#sign-in-error').textContent()).toMatch(/^this server does not know this token .* \(API_UNAUTHORIZED\)$/);
    await page.getByLabel('Token', { exact: true }).fill(cloudToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('arena v1').waitFor();
    expect(await page.locator('#sign-in').isVisible()).toBe(false);
    expect(await page.locator('#version-config').textContent()).toContain('image_id');
    expect(await page.getByLabel('Namespace').inputValue()).toMatch(/^[0-9a-f-]{36}$/);
  }, 60_000);

  it('shows a lobby appear after a find, follows its logs on its page until a new line arrives, and draws the charts', async () => {
    const found = ok('find', await api(server.origin, 'POST', '/matchmaker/lobbies/find', { token: publicToken, body: { game_modes: ['default'] } }));
    const lobbyId = (found['lobby'] as { lobby_id: string }).lobby_id;
    const row = page.locator(`tr[data-lobby="${lobbyId}"]`);
    await row.waitFor({ timeout: 15_000 });
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toMatch(/lnd-(sfo|fra)default1\/32ready/);
    // The history charts refresh every 15 s.
    await expect.poll(() => page.locator('#chart-lobbies svg').getAttribute('aria-label'), { timeout: 20_000 }).toMatch(/^Lobbies by state \(lobbies \(peak\)\) .*active: peak 1/);
    expect(await page.locator('#chart-lobbies svg polyline.series, #chart-lobbies svg circle.series').count()).toBeGreaterThan(0);
    // The find above shows in the requests chart.
    expect(await page.locator('#chart-requests svg').getAttribute('aria-label')).toMatch(/answered: peak [1-9]/);
    expect(await page.locator('#uploads').textContent()).toMatch(/build.*complete.*site.*complete/s);
    await page.screenshot({ path: join(SHOTS, 'dashboard.png'), fullPage: true });
    await row.getByRole('button', { name: `Open lobby ${lobbyId}` }).click();
    const logs = page.locator('#logs');
    await expect.poll(() => logs.textContent(), { timeout: 20_000 }).toMatch(/tick \d+/);
    const ticks = (text: string | null): number => Math.max(0, ...[...(text ?? '').matchAll(/tick (\d+)/g)].map((m) => Number(m[1])));
    const before = ticks(await logs.textContent());
    await expect.poll(async () => ticks(await logs.textContent()), { timeout: 20_000 }).toBeGreaterThan(before);
    await page.getByRole('button', { name: 'Back to the overview' }).click();
  }, 90_000);

  it('runs a simulator scenario and shows its charts', async () => {
    await page.getByRole('button', { name: 'Simulator' }).click();
    await page.getByLabel('Scenario').selectOption('steady');
    await page.getByLabel('Minutes').fill('5');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.locator('#sim-charts svg').first().waitFor({ timeout: 30_000 });
    expect(await page.locator('#sim-summary').textContent()).toMatch(/players +\d+ arrived · \d+ seated/);
    await page.locator('#sim-title').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'simulator.png') });
  }, 60_000);

  it('keyboard: the sign-out button and the view buttons are reachable with Tab; no console error happened', async () => {
    const reached: string[] = [];
    for (let i = 0; i < 8; i++) {
      await page.keyboard.press('Tab');
      reached.push(await page.evaluate<string>("document.activeElement?.textContent ?? ''"));
    }
    expect(reached).toContain('Sign out');
    expect(consoleErrors.filter((e) => !e.includes('401'))).toEqual([]);
  });
});
