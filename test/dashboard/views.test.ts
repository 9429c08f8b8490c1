/**
 * The dashboard's views and actions in a real browser (Debian's Chromium through playwright-core)
 * against the Tavern app served on 127.0.0.1 with the fake runtime: errors in words, history charts
 * over 1 h / 24 h / 7 d with what the server kept before the page opened, health, crash-loop
 * banners, a lobby's page (facts, ports, players, config, logs by stream, following, close, copy,
 * stop), versions (roll back, confirmed), tokens (create, revoke), domains (add, remove), empty
 * states, a 390 px wide screen, and a namespace switch that stops following. Waits on selectors
 * and requests, never on time. Under CI a missing Chromium fails.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EMPTY_TALLY, rollupMinute } from '../../src/core/history/minute.js';
import type { App } from '../../src/server/app.js';
import { createHttpServer } from '../../src/server/http.js';
import { describeNeeding } from '../needs.js';
import { ADMIN, defaultConfig, harness, settle, str, until, type Harness } from '../server/harness.js';
import { chromiumProblem, closeServer, collectErrors, launchChromium } from './chromium.js';

const problem = chromiumProblem();
const SHOTS = new URL('../.generated/dashboard/', import.meta.url).pathname;

describeNeeding({ what: 'Chromium', start: 'apt-get install chromium' }, 'the dashboard\'s views and actions (Chromium)', problem, () => {
  let h: Harness;
  let server: Server;
  let origin: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let s: Awaited<ReturnType<Harness['setup']>>;
  const health: { runtime: Record<string, unknown>; proxy: Record<string, unknown> } = { runtime: { runtime: 'fake', reachable: true }, proxy: { running: true, restarts: 0, https: false, routes: 0 } };
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    // The app's public origin is the address it listens on (the page's writes carry it as their Origin).
    const app: { respond?: App['respond'] } = {};
    server = createHttpServer({ respond: (request) => (app.respond as App['respond'])(request) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    h = harness({ readyAfterMs: 0, health: () => health, origin });
    app.respond = (request) => h.app.respond(request);
    h.clock.set(Date.now());
    s = await h.setup();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1200, height: 1400 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    collectErrors(page, consoleErrors);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await closeServer(server);
    h?.cleanup();
  });

  const find = async (token = s.pub): Promise<string> => str((await h.call('POST', '/matchmaker/lobbies/find', { token, body: { game_modes: ['default'] } })).body['lobby']?.['lobby_id']);
  const signIn = async (p: Page, token: string): Promise<void> => {
    await p.goto(`${origin}/dashboard`);
    await p.getByLabel('Token', { exact: true }).fill(token);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.locator('#app').waitFor();
  };

  it('says in words why a token cannot sign in, then signs in with the cloud token', async () => {
    await page.goto(`${origin}/dashboard`);
    await page.getByLabel('Token', { exact: true }).fill(s.pub);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('#sign-in-error').textContent()).toBe('this token cannot read games: sign in with a cloud or admin token (CLAIMS_MISSING_ENTITLEMENT)');
    await page.getByLabel('Token', { exact: true }).fill(s.cloud);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('v1 (').waitFor();
  });

  it('draws the history kept by the server over 1 h, 24 h and 7 d, with a time axis and units', async () => {
    // Three hours ago, before the page opened: kept by the server.
    const earlier = h.clock.now() - 3 * 3_600_000;
    await h.historyStore.putMinutes([{ ...rollupMinute({ namespaceId: s.nsId, minute: earlier, instanceId: 'before', tally: EMPTY_TALLY, lobbies: [] }), players: 5, lobbies: { starting: 0, active: 2, idle: 1, closed: 0 } }]);
    await find();
    const players = page.locator('#chart-players svg');
    await page.getByLabel('24 hours').check();
    await expect.poll(() => players.getAttribute('aria-label'), { timeout: 10_000 }).toMatch(/^Players \(players \(peak\)\) from .* to .*: players: peak 5, last 1$/);
    expect(await page.locator('#chart-players svg text.tick').count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator('#chart-players svg text.unit').textContent()).toBe('players (peak)');
    expect(await page.locator('#chart-requests svg text.unit').textContent()).toBe('requests per 10 minutes');
    expect(await page.locator('#chart-latency svg').getAttribute('aria-label')).toMatch(/p50: peak \d/);
    await page.getByLabel('7 days').check();
    await expect.poll(() => page.locator('#chart-requests svg text.unit').textContent()).toBe('requests per hour');
    await page.getByLabel('1 hour').check();
    // Only the last hour: the find of this test, not the players of three hours ago.
    await expect.poll(() => players.getAttribute('aria-label')).toMatch(/players: peak 1, last 1$/);
    expect(await page.locator('#chart-requests svg').getAttribute('aria-label')).toMatch(/answered: peak [1-9]/);
  }, 30_000);

  it('shows the runtime unreachable and the proxy off from /health, and a crash loop of a version, as banners', async () => {
    health.runtime = { runtime: 'docker', reachable: false, error: 'connect ENOENT /var/run/docker.sock' };
    health.proxy = { running: false, off: 'TAVERN_PROXY=off', refused: [] };
    const banners = page.locator('#banners');
    await expect.poll(() => banners.textContent(), { timeout: 10_000 }).toContain('The docker runtime is unreachable (connect ENOENT /var/run/docker.sock): no lobby can start');
    expect(await banners.textContent()).toContain('The game proxy is off (TAVERN_PROXY=off)');
    health.runtime = { runtime: 'fake', reachable: true };
    health.proxy = { running: true, restarts: 0, https: false, routes: 0 };
    await expect.poll(() => banners.textContent(), { timeout: 10_000 }).not.toContain('unreachable');
    for (let i = 0; i < 3; i++) {
      const lobbyId = await find();
      h.runtime.exit(lobbyId, 'crashed', 139);
      await until(() => h.store.world.namespaces.get(s.nsId)?.lobbies.get(lobbyId)?.lifecycle.status === 'stopped');
      await settle();
    }
    await expect.poll(() => banners.textContent(), { timeout: 15_000 }).toMatch(/Crash loop: 3 lobbies of version v1 failed in the last 15 minutes \(last: crashed, exit code 139\)/);
    expect(await page.locator('#stopped tr.failed').count()).toBe(3);
  }, 30_000);

  it('opens a lobby\'s page: facts, ports, players, config; logs by stream, following the newest line; close, copy the join address, stop', async () => {
    const created = await h.call('POST', '/matchmaker/lobbies/create', { token: s.pub, body: { game_mode: 'custom', publicity: 'public', tags: { map: 'dust' }, lobby_config: { rounds: 3 } } });
    const lobbyId = str(created.body['lobby']?.['lobby_id']);
    const address = str(created.body['lobby']?.['ports']?.['default']?.['host']);
    await page.getByRole('button', { name: `Open lobby ${lobbyId}` }).click();
    await page.locator('#lobby-title').filter({ hasText: lobbyId }).waitFor();
    await expect.poll(() => page.locator('#lobby-facts').textContent()).toContain('StatereadyFlagsopenPlayers1 of 4 (0 connected)Modecustom');
    expect(await page.locator('#lobby-ports').textContent()).toContain(`default${address}no`);
    expect(await page.locator('#lobby-players tr').count()).toBe(1);
    expect(JSON.parse((await page.locator('#lobby-config').textContent()) ?? '')).toMatchObject({ tags: { map: 'dust' }, lobby_config: { rounds: 3 } });

    const logs = page.locator('#logs');
    await expect.poll(() => logs.textContent()).toContain(`fake container ${lobbyId} started`);
    await h.logBook.write(lobbyId, 'std_err', [{ at: h.clock.now(), line: 'warning: low memory' }]);
    await page.getByLabel('Stream').selectOption('std_err');
    await expect.poll(() => logs.textContent()).toBe('warning: low memory\n');
    // Following: two hundred new lines arrive; the newest is in view.
    await h.logBook.write(lobbyId, 'std_err', Array.from({ length: 200 }, (_, i) => ({ at: h.clock.now(), line: `line ${i}` })));
    await expect.poll(() => logs.textContent()).toContain('line 199');
    // Run in the page (this file is compiled without the DOM's types).
    await expect.poll(() => page.evaluate<number>("(() => { const n = document.getElementById('logs'); return n.scrollHeight - n.scrollTop - n.clientHeight; })()")).toBeLessThan(2);

    await page.getByRole('button', { name: 'Close to new players' }).click();
    await expect.poll(() => page.locator('#lobby-status').textContent().then(async (t) => `${t} ${await page.locator('#error').textContent()}`)).toBe('Closed to new players. ');
    await expect.poll(() => h.store.world.namespaces.get(s.nsId)?.lobbies.get(lobbyId)?.closed).toBe(true);
    await page.getByRole('button', { name: 'Open to new players' }).waitFor();
    await page.getByRole('button', { name: 'Copy the join address' }).click();
    await expect.poll(() => page.locator('#lobby-copied').textContent()).toBe(`copied ${address}`);
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(address);
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => page.locator('#lobby-status').textContent()).toContain('Stopping');
    await expect.poll(() => h.store.world.namespaces.get(s.nsId)?.lobbies.get(lobbyId)?.lifecycle.status).not.toBe('ready');
    await page.screenshot({ path: `${SHOTS}lobby.png`, fullPage: true });
    await page.getByRole('button', { name: 'Back to the overview' }).click();
  }, 30_000);

  it('rolls back to an earlier version with one confirmed click', async () => {
    h.clock.set(h.clock.now() + 60_000);
    const v2 = await h.call('POST', `/cloud/games/${s.gameId}/versions`, { token: s.cloud, body: { display_name: 'v2', config: defaultConfig(s.buildId) } });
    const v2Id = str(v2.body['version_id']);
    await h.call('PUT', `/cloud/games/${s.gameId}/namespaces/${s.nsId}/version`, { token: s.cloud, body: { version_id: v2Id } });
    await page.getByRole('button', { name: 'Versions' }).click();
    await page.locator(`#versions tr.current[data-version="${v2Id}"]`).waitFor();
    // Dismissed: nothing changes.
    page.once('dialog', (d) => void d.dismiss());
    await page.getByRole('button', { name: 'Roll back to v1' }).click();
    expect((await h.catalog.getNamespace(s.nsId))?.versionId).toBe(v2Id);
    page.once('dialog', (d) => {
      expect(d.message()).toMatch(/^Roll back to v1 in /);
      void d.accept();
    });
    await page.getByRole('button', { name: 'Roll back to v1' }).click();
    await page.locator(`#versions tr.current[data-version="${s.versionId}"]`).waitFor();
    expect((await h.catalog.getNamespace(s.nsId))?.versionId).toBe(s.versionId);
    await page.getByRole('button', { name: 'Publish v2' }).waitFor();
  }, 30_000);

  it('creates a public token that works, revokes it (then refused), adds and removes a domain', async () => {
    await page.getByRole('button', { name: 'Tokens and domains' }).click();
    await page.getByText('No custom domain yet').waitFor();
    await page.getByRole('button', { name: 'Create a public token' }).click();
    const token = await page.getByLabel('public token', { exact: true }).inputValue();
    expect(token).toMatch(/^pub_/);
    expect((await h.call('POST', '/matchmaker/lobbies/find', { token, body: { game_modes: ['default'] } })).status).toBe(200);
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Revoke the public token' }).click();
    await page.getByText('public token (revoked)').waitFor();
    const refused = await h.call('POST', '/matchmaker/lobbies/find', { token, body: { game_modes: ['default'] } });
    expect(refused.body['code']).toBe('TOKEN_REVOKED');
    // Revoking it again (pasted) says so in words.
    await page.getByLabel('Revoke a token').fill(token);
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await expect.poll(() => page.locator('#error').textContent()).toBe('this token was revoked: create a new one (tavern token create) (TOKEN_REVOKED)');

    await page.getByLabel('Add a domain').fill('play.example.com');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const row = page.locator('#domains tr[data-domain="play.example.com"]');
    await row.waitFor();
    expect(await row.locator('td').nth(1).textContent()).toMatch(/^active/);
    page.once('dialog', (d) => void d.accept());
    await row.getByRole('button', { name: 'Remove play.example.com' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await h.catalog.getNamespace(s.nsId))?.domains).toEqual([]);
  }, 30_000);

  it('switching namespace stops following the previous lobby', async () => {
    await page.getByRole('button', { name: 'Overview' }).click();
    const lobbyId = await find();
    const pending = new Set<string>();
    page.on('request', (r) => {
      if (r.url().includes('/logs?')) pending.add(r.url());
    });
    const done = (r: { url(): string }): void => void pending.delete(r.url());
    page.on('requestfinished', done);
    page.on('requestfailed', done);
    await page.getByRole('button', { name: `Open lobby ${lobbyId}` }).click();
    await expect.poll(() => [...pending].some((u) => u.includes('watch_index'))).toBe(true);
    const staging = (await h.call('GET', `/cloud/games/${s.gameId}`, { token: s.cloud })).body['game']?.['namespaces'] as unknown as { name_id: string; namespace_id: string }[];
    const other = staging.find((n) => n.name_id !== 'prod');
    if (other === undefined) throw new Error('the game has one namespace only');
    await page.getByLabel('Namespace').selectOption(other.namespace_id);
    await expect.poll(() => pending.size).toBe(0);
    expect(await page.locator('#view-lobby').isHidden()).toBe(true);
    // The other namespace runs the game's empty first version: its empty states say what to do.
    await expect.poll(() => page.locator('#lobbies-empty').textContent()).toBe('No lobby yet: deploy a version first (tavern deploy).');
    await expect.poll(() => page.locator('#history-empty').textContent()).toBe('Nothing recorded in this range yet: the charts fill as players find lobbies (one point a minute, kept by the server).');
    await expect.poll(() => page.locator('#stopped-empty').textContent()).toBe('No lobby failed in the last 24 hours.');
  }, 30_000);

  it('works 390 px wide: nothing wider than the screen but the tables\' own scroll; an admin picks a new game, which says what to do', async () => {
    const narrow = await browser.newPage({ viewport: { width: 390, height: 844 } });
    narrow.setDefaultTimeout(10_000);
    try {
      narrow.on('pageerror', (e) => consoleErrors.push(e.message));
      await h.call('POST', '/cloud/games', { token: ADMIN, body: { name_id: 'empty-game', display_name: 'Empty game', developer_group_id: s.gameId } });
      await signIn(narrow, s.cloud);
      await narrow.locator('#chart-players svg').waitFor();
      expect(await narrow.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await narrow.screenshot({ path: `${SHOTS}narrow.png`, fullPage: true });
      await narrow.getByRole('button', { name: 'Sign out' }).click();
      await signIn(narrow, ADMIN);
      const games = await narrow.locator('#game option').allTextContents();
      expect(games).toContain('Empty game');
      await narrow.getByRole('combobox', { name: 'Game' }).selectOption({ label: 'Empty game' });
      await expect.poll(() => narrow.locator('#lobbies-empty').textContent()).toBe('No lobby yet: deploy a version first (tavern deploy).');
      expect(await narrow.locator('#version-name').textContent()).toBe('No version yet (0.0.1 is the game\'s empty first version): run tavern deploy in your game\'s folder.');
      await narrow.getByRole('button', { name: 'Versions' }).click();
      await narrow.locator('#versions tr.current').filter({ hasText: '0.0.1' }).waitFor();
      expect(await narrow.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    } finally {
      await narrow.close();
    }
    // The refusals the tests asked for (a public token signing in, a token revoked twice) are logged by the browser; nothing else.
    expect(consoleErrors.filter((e) => !/status of (401|403) /.test(e))).toEqual([]);
    expect(consoleErrors).toHaveLength(2);
  }, 30_000);
});
