/**
 * The dashboard's deploy preview and token list in a real browser (Debian's Chromium through
 * playwright-core) against the Tavern app served on 127.0.0.1 with the fake runtime and two hours
 * of recorded demand: a pasted config that halves max players shows more lobbies in the new
 * column, with the notes, the error bound and two-series charts; a bad config names its fields; a
 * namespace with nothing recorded says so; the game's tokens are listed (no secret), a new one
 * appears, one revoked from the list shows revoked and is refused; both views fit 390 px. Waits on
 * selectors and requests, never on time. Under CI a missing Chromium fails.
 */
import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeRecording } from '../../bench/preview-recording.js';
import type { App } from '../../src/server/app.js';
import { createHttpServer } from '../../src/server/http.js';
import { describeNeeding } from '../needs.js';
import { harness, type Harness } from '../server/harness.js';
import { chromiumProblem, closeServer, collectErrors, launchChromium } from './chromium.js';

const problem = chromiumProblem();
const SHOTS = new URL('../.generated/dashboard/', import.meta.url).pathname;

describeNeeding({ what: 'Chromium', start: 'apt-get install chromium' }, 'the dashboard\'s deploy preview and token list (Chromium)', problem, () => {
  let h: Harness;
  let server: Server;
  let origin: string;
  let browser: Browser;
  let page: Page;
  let s: Awaited<ReturnType<Harness['setup']>>;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    const app: { respond?: App['respond'] } = {};
    server = createHttpServer({ respond: (request) => (app.respond as App['respond'])(request) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    h = harness({ readyAfterMs: 0, demand: true, origin });
    app.respond = (request) => h.app.respond(request);
    h.clock.set(Date.now());
    s = await h.setup();
    const now = h.clock.now();
    await writeRecording(h.demand.store, { namespaceId: s.nsId, start: now - 2 * 3_600_000, minutes: 120, ccu: 12, gameMode: 'default', region: 'local', seed: 3 });
    await mkdir(SHOTS, { recursive: true });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 1400 } });
    page.setDefaultTimeout(10_000);
    collectErrors(page, consoleErrors);
    await page.goto(`${origin}/dashboard`);
    await page.getByLabel('Token', { exact: true }).fill(s.cloud);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('v1 (').waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await closeServer(server);
    h?.cleanup();
  });

  const cell = async (figure: string, column: 1 | 2): Promise<number> =>
    Number(((await page.locator(`#preview-figures tr[data-figure="${figure}"] td`).nth(column - 1).textContent()) ?? '').replace(/[^\d.]/g, ''));
  const config = (): ReturnType<Page['getByLabel']> => page.getByLabel('New version config (JSON; it starts as the live one: edit it)');

  it('previews a pasted config that halves max players: more lobbies in the new column, the notes, the bound and two-series charts', async () => {
    await page.getByRole('button', { name: 'Preview' }).click();
    // It starts from the live config.
    const live = JSON.parse(await config().inputValue()) as { matchmaker: { max_players: number } };
    expect(live.matchmaker.max_players).toBe(4);
    await config().fill(JSON.stringify({ matchmaker: { ...live.matchmaker, max_players: 2 } }, null, 2));
    await page.getByLabel('Window').selectOption('7d');
    await page.getByLabel('Seed').fill('4');
    await page.getByRole('button', { name: 'Run the preview' }).click();
    await page.locator('#preview-figures tr[data-figure="lobbies"]').waitFor({ timeout: 60_000 });
    expect(await cell('lobbies', 2)).toBeGreaterThan(await cell('lobbies', 1));
    expect(await cell('lobby_hours', 2)).toBeGreaterThan(await cell('lobby_hours', 1));
    expect(await cell('players', 2)).toBe(await cell('players', 1));
    expect(await page.locator('#preview-figures tr[data-figure="lobbies"] td').nth(2).textContent()).toMatch(/^\+\d+\.\d %$/);
    expect(await page.locator('#preview-summary').textContent()).toMatch(/^[\d,]+ recorded requests, .* UTC, replayed under each config \(seed 4\)\.$/);
    expect(await page.locator('#preview-notes').textContent()).toContain('the recording is short');
    expect(await page.locator('#preview-bound').textContent()).toMatch(/^Error bound: each column is within ±5 %/);
    expect(await page.locator('#preview-empty').isHidden()).toBe(true);
    // Four charts, each with the live and the new series drawn.
    const charts = page.locator('#preview-charts svg');
    expect(await charts.count()).toBe(4);
    for (let i = 0; i < 4; i++) {
      expect(await charts.nth(i).getAttribute('aria-label')).toMatch(/live: (peak|no data).*; new: (peak|no data)/);
      expect(await charts.nth(i).locator('[data-series="new"]').count()).toBeGreaterThan(0);
    }
    expect(await page.locator('#preview-charts svg').nth(1).getAttribute('aria-label')).toMatch(/^Lobbies running .*live: peak \d+, last \d+; new: peak \d+/);
    expect(await page.locator('#preview-step').textContent()).toBe('Each point is the peak of a minute (the time to a ready seat: the worst minute\'s p95); blue is the live version, orange the new config.');
    await page.locator('#preview-title').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}preview.png`, fullPage: true });
  }, 90_000);

  it('names each field of a bad config, and says when the text is not JSON or is a rivet.toml', async () => {
    const good = JSON.parse(await config().inputValue()) as { matchmaker: Record<string, unknown> };
    await config().fill(JSON.stringify({ matchmaker: { ...good.matchmaker, max_players: -1 } }));
    await page.getByRole('button', { name: 'Run the preview' }).click();
    await expect.poll(() => page.locator('#preview-status').textContent()).toBe('The new config has a problem; fix this field and run again:');
    expect(await page.locator('#preview-problems li').allTextContents()).toEqual(['matchmaker.max-players.negative: expected a whole number from 0 to 4294967295, got -1']);
    expect(await page.locator('#preview-result').isHidden()).toBe(true);
    await config().fill('{ "matchmaker": ');
    await page.getByRole('button', { name: 'Run the preview' }).click();
    await expect.poll(() => page.locator('#preview-status').textContent()).toMatch(/^The config is not JSON: /);
    expect(await page.locator('#preview-problems li').count()).toBe(0);
    await page.getByLabel('or upload a file').setInputFiles({ name: 'rivet.toml', mimeType: 'application/toml', buffer: Buffer.from('[matchmaker]\nmax_players = 2\n') });
    await expect.poll(() => page.locator('#preview-status').textContent()).toBe('rivet.toml is a rivet.toml: the dashboard takes the version config as JSON. Preview a rivet.toml with tavern version preview rivet.toml, or paste its config as JSON.');
    // A JSON file is read into the box.
    await page.getByLabel('or upload a file').setInputFiles({ name: 'next.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(good)) });
    await expect.poll(async () => JSON.parse(await config().inputValue()) as unknown).toEqual(good);
    expect(await page.locator('#preview-status').textContent()).toBe('');
  }, 30_000);

  it('says so when nothing is recorded in the namespace yet', async () => {
    const namespaces = (await h.call('GET', `/cloud/games/${s.gameId}`, { token: s.cloud })).body['game']?.['namespaces'] as unknown as { name_id: string; namespace_id: string }[];
    const other = namespaces.find((n) => n.name_id !== 'prod');
    if (other === undefined) throw new Error('the game has one namespace only');
    await page.getByLabel('Namespace').selectOption(other.namespace_id);
    await page.getByText('0.0.1 is the game\'s empty first version').waitFor();
    await page.getByRole('button', { name: 'Preview' }).click();
    // Its live version (the game's first) runs no lobbies: the preview needs a config that does.
    expect(await config().inputValue()).toBe('{}');
    await page.getByRole('button', { name: 'Run the preview' }).click();
    await expect.poll(() => page.locator('#preview-problems li').allTextContents()).toEqual(['matchmaker.missing: neither the live version nor this config has a matchmaker: there are no lobbies to preview']);
    const prod = (await h.call('GET', `/cloud/games/${s.gameId}/versions/${s.versionId}`, { token: s.cloud })).body['version']?.['config'];
    await config().fill(JSON.stringify(prod));
    await page.getByRole('button', { name: 'Run the preview' }).click();
    const empty = page.locator('#preview-empty');
    await empty.waitFor({ timeout: 60_000 });
    expect(await empty.textContent()).toMatch(/^Nothing is recorded in this window yet: both columns show idle lobbies only\./);
    expect(await page.locator('#preview-summary').textContent()).toMatch(/^0 recorded requests/);
    expect(await page.locator('#preview-notes').textContent()).toContain('nothing is recorded since');
    await page.getByLabel('Namespace').selectOption(s.nsId);
    await page.getByText('v1 (').waitFor();
  }, 90_000);

  it('lists the game\'s tokens without their secrets; a new one is listed; one revoked from the list shows revoked and is refused', async () => {
    await page.getByRole('button', { name: 'Tokens and domains' }).click();
    const rows = page.locator('#token-list tr');
    // The setup's cloud and public tokens.
    await expect.poll(() => rows.count()).toBe(2);
    h.clock.set(h.clock.now() + 1000);
    await page.getByRole('button', { name: 'Create a cloud token' }).click();
    const token = await page.getByLabel('cloud token', { exact: true }).inputValue();
    await expect.poll(() => rows.count()).toBe(3);
    const listed = (await h.call('GET', `/cloud/games/${s.gameId}/tokens`, { token: s.cloud })).body['tokens'] as unknown as { token_id: string; kind: string }[];
    const newest = listed[0];
    if (newest?.kind !== 'cloud') throw new Error('the newest token is not the cloud token just made');
    const row = page.locator(`#token-list tr[data-token="${newest.token_id}"]`);
    expect(await row.locator('td').allTextContents()).toEqual(['cloud', newest.token_id.slice(0, 8), 'whole game', expect.stringMatching(/ ago$/), expect.any(String), 'active', 'Revoke']);
    expect(await page.locator('#token-list').textContent()).not.toContain(token.split('.').at(-1));
    expect(await page.locator('#token-list tr').filter({ hasText: 'public' }).locator('td').nth(2).textContent()).toBe('Production');
    page.once('dialog', (d) => {
      expect(d.message()).toBe(`Revoke the cloud token ${newest.token_id.slice(0, 8)}? Everything using it is refused from the next request on.`);
      void d.accept();
    });
    await row.getByRole('button', { name: `Revoke cloud token ${newest.token_id.slice(0, 8)}` }).click();
    await expect.poll(() => row.locator('td').nth(5).textContent()).toMatch(/^revoked \d+s ago$/);
    expect(await row.getByRole('button').count()).toBe(0);
    expect(await page.locator('#token-status').textContent()).toBe('Token revoked: it is refused from now on.');
    expect((await h.call('GET', `/cloud/games/${s.gameId}`, { token })).body['code']).toBe('TOKEN_REVOKED');
  }, 30_000);

  it('fits 390 px wide: the preview and the token list scroll only inside their tables', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('#token-list tr').first().waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.getByRole('button', { name: 'Preview' }).click();
    // Switching namespace back cleared the preview: run it again, from the live config, on the small screen.
    await page.getByRole('button', { name: 'Run the preview' }).click();
    await page.locator('#preview-charts svg').first().waitFor({ timeout: 60_000 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.screenshot({ path: `${SHOTS}preview-narrow.png`, fullPage: true });
    // The refusals the tests asked for (a bad config) are logged by the browser; nothing else.
    expect(consoleErrors.filter((e) => !/status of 400 /.test(e))).toEqual([]);
  }, 90_000);
});
