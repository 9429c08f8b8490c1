/**
 * Debian's Chromium for the dashboard's browser tests (playwright-core): where it is, why a test
 * cannot run without it, a headless launch, and a page's console errors collected. Test helpers.
 */
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Why Chromium tests cannot run here, or undefined. */
export const chromiumProblem = (): string | undefined => (existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (apt-get install chromium)`);

/** Headless Chromium (no sandbox as root, which CI is). */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), '--disable-gpu', '--disable-background-networking'] });

/**
 * Pushes every console error and uncaught exception of `page` onto `errors`.
 *
 * @example
 * const errors: string[] = []; collectErrors(page, errors); ... expect(errors).toEqual([]);
 */
export const collectErrors = (page: Page, errors: string[]): void => {
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
};

/** Closes a test's HTTP server and its open connections (kept alive by the browser). */
export const closeServer = async (server: Server | undefined): Promise<void> => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
};
