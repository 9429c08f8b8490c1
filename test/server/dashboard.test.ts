/**
 * The dashboard's routes in-process: its files with their types and a self-only CSP, the list of
 * them matching the folder, nothing else under /dashboard; the simulator endpoint's token and body
 * checks; the page's own origin is not refused on /cloud as a cross-origin caller would be.
 */
import { readdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/app.js';
import { createHttpServer } from '../../src/server/http.js';
import { DASHBOARD_FILES } from '../../src/server/routes/dashboard.js';
import { ADMIN, ORIGIN, REGIONS, harness, str, type Harness } from './harness.js';

describe('the served-files list', () => {
  it('names every page, script and style of the dashboard folder, and no file the folder lacks', async () => {
    const folder = (await readdir(new URL('../../src/dashboard/', import.meta.url))).filter((name) => /\.(html|js|css)$/.test(name));
    expect(Object.keys(DASHBOARD_FILES).sort()).toEqual(folder.sort());
  });
});

describe('/dashboard', () => {
  let h: Harness;
  afterEach(() => h.cleanup());

  it('serves the page, its script and its style, each with its type and a CSP allowing only itself', async () => {
    h = harness();
    for (const [path, type] of [['/dashboard', 'text/html'], ['/dashboard/access.js', 'text/javascript'], ['/dashboard/app.js', 'text/javascript'], ['/dashboard/charts.js', 'text/javascript'], ['/dashboard/dom.js', 'text/javascript'], ['/dashboard/lobby.js', 'text/javascript'], ['/dashboard/preview.js', 'text/javascript'], ['/dashboard/versions.js', 'text/javascript'], ['/dashboard/words.js', 'text/javascript'], ['/dashboard/style.css', 'text/css']] as const) {
      const res = await h.app.handle(new Request(`${ORIGIN}${path}`));
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toContain(type);
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'; script-src 'self'");
      expect((await res.text()).length).toBeGreaterThan(100);
    }
    expect((await h.call('GET', '/dashboard/package.json')).body['code']).toBe('API_NOT_FOUND');
    expect((await h.call('GET', '/dashboard/..%2fpackage.json')).status).toBe(404);
  });

  it('sends a browser that opens the server address to the dashboard', async () => {
    h = harness();
    const res = await h.app.handle(new Request(`${ORIGIN}/`));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/dashboard');
  });

  it('runs a built-in scenario for a cloud or admin token, and names what is wrong otherwise', async () => {
    h = harness();
    expect((await h.call('POST', '/dashboard/sim', { body: { scenario: 'steady', minutes: 1 } })).status).toBe(401);
    const bad = await h.call('POST', '/dashboard/sim', { token: ADMIN, body: { scenario: 'nope', minutes: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.body['metadata']).toEqual({ errors: [{ path: ['scenario', 'not-builtin'] }] });
    expect((await h.call('POST', '/dashboard/sim', { token: ADMIN, body: { scenario: 'steady', minutes: 600 } })).status).toBe(400);
    const run = await h.call('POST', '/dashboard/sim', { token: ADMIN, body: { scenario: 'steady', minutes: 1 } });
    expect(run.status).toBe(200);
    expect(str(run.body['summary'])).toContain('Tavern sim: steady');
    expect(Object.keys(run.body['charts'] ?? {})).toContain('ccu-lobbies.svg');
  });

  it('over a socket, takes a write whose Origin is the Host asked as the page\'s own; another origin stays refused', async () => {
    h = harness();
    const { gameId, cloud } = await h.setup();
    const server = createHttpServer(h.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const own = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const post = (origin: string): Promise<Response> =>
        fetch(`${own}/cloud/games/${gameId}/tokens/cloud`, { method: 'POST', headers: { origin, authorization: `Bearer ${cloud}`, 'content-type': 'application/json' }, body: '{}' });
      expect((await post(own)).status).toBe(200);
      const evil = await post('http://evil.example');
      expect([evil.status, ((await evil.json()) as { code: string }).code]).toEqual([400, 'API_CORS_ORIGIN_NOT_ALLOWED']);
      expect((await post(`https://127.0.0.1:${(server.address() as AddressInfo).port + 1}`)).status).toBe(400);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('answers 404 to a simulation when the server was given no simulator', async () => {
    h = harness();
    const { catalog, matchmaker, clock, random, timers, tokens } = h;
    const app = createApp({ catalog, matchmaker, clock, random, timers, tokens, regions: REGIONS, config: { publicOrigin: ORIGIN, adminToken: ADMIN } });
    const res = await app.handle(new Request(`${ORIGIN}/dashboard/sim`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ scenario: 'steady', minutes: 1 }) }));
    expect(res.status).toBe(404);
    expect(((await res.json()) as Record<string, unknown>)['code']).toBe('API_NOT_FOUND');
  });

  it('lets the page call /cloud from its own origin while other origins stay refused', async () => {
    h = harness({ config: { hubOrigins: /^https:\/\/hub\.example$/ } });
    const own = await h.call('GET', '/cloud/bootstrap', { headers: { origin: ORIGIN } });
    expect(own.status).toBe(200);
    expect(own.headers.get('access-control-allow-origin')).toBeNull();
    expect((await h.call('GET', '/cloud/bootstrap', { headers: { origin: 'https://evil.example' } })).status).toBe(400);
  });
});
