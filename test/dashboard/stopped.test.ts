/**
 * The dashboard's "Recently stopped" table in a real browser (Debian's Chromium through
 * playwright-core) against the Tavern app served on 127.0.0.1 with the fake runtime: a lobby that
 * crashes leaves the lobby table and shows there with why, its exit code and its last log lines;
 * a normal stop shows only when asked for every stop. Under CI a missing Chromium fails.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHttpServer } from '../../src/server/http.js';
import { describeNeeding } from '../needs.js';
import { harness, settle, str, until, type Harness } from '../server/harness.js';
import { chromiumProblem, closeServer, collectErrors, launchChromium } from './chromium.js';

const problem = chromiumProblem();

describeNeeding({ what: 'Chromium', start: 'apt-get install chromium' }, 'the dashboard\'s recently stopped lobbies (Chromium)', problem, () => {
  let h: Harness;
  let server: Server;
  let origin: string;
  let browser: Browser;
  let page: Page;
  let pub: string;
  let cloud: string;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    h = harness({ readyAfterMs: 0 });
    h.clock.set(Date.now());
    ({ pub, cloud } = await h.setup());
    server = createHttpServer(h.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    page = await browser.newPage();
    collectErrors(page, consoleErrors);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await closeServer(server);
    h?.cleanup();
  });

  /** A ready lobby found by a player, then stopped by its container going away. */
  const stopLobby = async (reason: 'crashed' | 'exited', exitCode: number, line?: string): Promise<string> => {
    const found = await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
    const lobbyId = str(found.body['lobby']?.['lobby_id']);
    if (line !== undefined) await h.logBook.write(lobbyId, 'std_err', [{ at: h.clock.now(), line }]);
    h.runtime.exit(lobbyId, reason, exitCode);
    await until(() => [...h.store.world.namespaces.values()].some((ns) => ns.lobbies.get(lobbyId)?.lifecycle.status === 'stopped'));
    await settle();
    return lobbyId;
  };

  it('shows a crashed lobby in the recently stopped table with why, its exit code and its last lines; every stop when asked', async () => {
    await page.goto(`${origin}/dashboard`);
    await page.getByLabel('Token', { exact: true }).fill(cloud);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#app').waitFor();
    const crashed = await stopLobby('crashed', 1, 'TypeError: boom');
    const exited = await stopLobby('exited', 0);
    const row = page.locator(`#stopped tr[data-lobby="${crashed}"]`);
    await row.waitFor({ timeout: 15_000 });
    expect(await row.locator('td').allTextContents()).toEqual([
      crashed.slice(0, 8), 'default', 'crashed', '1', '0s', expect.stringMatching(/^\d+s ago$/) as unknown,
      expect.stringContaining('err| TypeError: boom') as unknown, 'Open',
    ]);
    expect(await row.locator('td pre').textContent()).toContain('[tavern] stopping: the game server crashed with code 1');
    expect(await page.locator(`#stopped tr[data-lobby="${exited}"]`).count()).toBe(0);
    await page.getByLabel('every stop, not only failures').check();
    await page.locator(`#stopped tr[data-lobby="${exited}"]`).waitFor({ timeout: 15_000 });
    // Its page opens from the table, as a running lobby's does: why it stopped, and its log.
    await row.getByRole('button', { name: `Open lobby ${crashed}` }).click();
    await expect.poll(() => page.locator('#lobby-facts').textContent(), { timeout: 10_000 }).toContain('Statestopped (crashed)Exit code1Flags');
    await expect.poll(() => page.locator('#logs').textContent(), { timeout: 10_000 }).toContain(`fake container ${crashed} started`);
    expect(consoleErrors).toEqual([]);
  }, 90_000);
});
