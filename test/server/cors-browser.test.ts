/**
 * CORS in a real browser: a page on one origin runs the browser build of `@rivet-gg/api@23.2.0-rc1`
 * against Tavern on another (another port of 127.0.0.1). The client asks for no credentials, so
 * its calls work without `Access-Control-Allow-Credentials`, and a request that does ask for them
 * is refused by the browser: Tavern never offers a page the cookies of its host.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { App } from '../../src/server/app.js';
import { createHttpServer } from '../../src/server/http.js';
import { describeNeeding } from '../needs.js';
import { harness, type Harness } from './harness.js';

const CHROMIUM = '/usr/bin/chromium';
const NEED = { what: 'Chromium', start: 'apt-get install chromium' } as const;

/** The client's browser build: one self-contained ES module (axios included). */
const CLIENT = readFileSync(new URL('../../node_modules/@rivet-gg/api/dist/browser/esm/index.js', import.meta.url), 'utf8');

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

const close = (server: Server | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (server === undefined) return resolve();
    server.closeAllConnections();
    server.close(() => resolve());
  });

describeNeeding(NEED, 'CORS from a browser page on another origin', existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing`, () => {
  let api: Server;
  let site: Server;
  let browser: Browser;
  let h: Harness;
  let apiOrigin: string;
  let siteOrigin: string;
  let token: string;

  beforeAll(async () => {
    const live: { app?: App } = {};
    api = createHttpServer({ respond: (request) => (live.app as App).respond(request) });
    apiOrigin = await listen(api);
    h = harness({ readyAfterMs: 0, origin: apiOrigin });
    live.app = h.app;
    token = (await h.setup()).pub;
    site = createServer((req, res) => {
      if (req.url === '/rivet.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(CLIENT);
      else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>game</title>');
    });
    siteOrigin = await listen(site);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await close(site);
    await close(api);
    h?.cleanup();
  });

  it('the 23.2 client works from another origin; a credentialed request is refused by the browser', async () => {
    const page = await browser.newPage();
    await page.goto(siteOrigin);
    // A string, not a function: vitest would rewrite a function's import() for node.
    const outcome = await page.evaluate<{ regions: string[]; credentialed: string }>(`(async () => {
      const origin = ${JSON.stringify(apiOrigin)};
      const token = ${JSON.stringify(token)};
      const { RivetClient } = await import('/rivet.js');
      const regions = await new RivetClient({ environment: origin, token }).matchmaker.regions.list();
      const credentialed = await fetch(origin + '/matchmaker/regions', { headers: { authorization: 'Bearer ' + token }, credentials: 'include' })
        .then((res) => 'answered ' + res.status, (error) => 'refused: ' + String(error));
      return { regions: regions.regions.map((r) => r.regionId), credentialed };
    })()`);
    expect(outcome.regions).toContain('local');
    expect(outcome.credentialed).toMatch(/^refused: TypeError/);
    await page.close();
  });
});
