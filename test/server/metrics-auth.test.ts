/**
 * `GET /metrics` names every route's lobby, region and port label: it answers the admin token or
 * the metrics token (`TAVERN_METRICS_TOKEN`, a Prometheus scraper's) only, with the API's own
 * 401/403 otherwise, and never on the lobbies' listener.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, harness, str, type Harness } from './harness.js';

const METRICS = 'scraper-token-0123456789abcdef';
const TEXT = 'tavern_proxy_route_requests_total{lobby_id="l-1",region="local",label="web",protocol="http"} 5\n';

let h: Harness;
afterEach(() => h.cleanup());

const scrape = async (token?: string, headers: Record<string, string> = {}, lobbies = false): Promise<{ status: number; text: string }> => {
  const app = lobbies ? h.app.lobbies : h.app;
  const res = await app.handle(h.request('GET', '/metrics', { ...(token === undefined ? {} : { token }), headers }));
  return { status: res.status, text: await res.text() };
};
const codeOf = (text: string): unknown => (JSON.parse(text) as { code?: unknown }).code;

describe('GET /metrics needs a bearer token', () => {
  it('answers the admin token and the metrics token; nothing else', async () => {
    h = harness({ metrics: () => Promise.resolve(TEXT), config: { metricsToken: METRICS } });
    const s = await h.setup();
    for (const token of [ADMIN, METRICS]) {
      const ok = await scrape(token);
      expect(ok).toEqual({ status: 200, text: TEXT });
    }
    const none = await scrape();
    expect([none.status, codeOf(none.text)]).toEqual([401, 'API_UNAUTHORIZED']);
    expect(none.text).not.toContain('lobby_id');
    const basic = await scrape(undefined, { authorization: `Basic ${Buffer.from(`x:${METRICS}`).toString('base64')}` });
    expect([basic.status, codeOf(basic.text)]).toEqual([401, 'API_UNAUTHORIZED']);
    // A wrong token, one a character short, or the metrics token with a suffix: the API's answer to a bad token.
    for (const wrong of ['not-a-token', METRICS.slice(0, -1), `${METRICS}x`]) {
      const bad = await scrape(wrong);
      expect(bad.status, wrong).toBe(401);
      expect(bad.text).not.toContain('lobby_id');
    }
    // A valid token of another kind: forbidden, as on the admin endpoints.
    for (const other of [s.cloud, s.pub]) {
      const forbidden = await scrape(other);
      expect([forbidden.status, codeOf(forbidden.text)]).toEqual([403, 'API_FORBIDDEN']);
    }
  });

  it('the metrics token reads /metrics only: elsewhere it is no token of the API', async () => {
    h = harness({ metrics: () => Promise.resolve(TEXT), config: { metricsToken: METRICS } });
    const games = await h.call('GET', '/cloud/games', { token: METRICS });
    expect(games.status).toBe(401);
    expect(str(games.body['code'])).not.toBe('API_NOT_FOUND');
  });

  it('without TAVERN_METRICS_TOKEN only the admin token reads it', async () => {
    h = harness({ metrics: () => Promise.resolve(TEXT) });
    expect((await scrape(ADMIN)).status).toBe(200);
    expect((await scrape(METRICS)).status).toBe(401);
    expect((await scrape()).status).toBe(401);
  });

  it('is never served on the lobbies\' listener, whatever the token', async () => {
    h = harness({ metrics: () => Promise.resolve(TEXT), config: { metricsToken: METRICS } });
    for (const token of [ADMIN, METRICS, undefined]) {
      const answer = await scrape(token, {}, true);
      expect([answer.status, codeOf(answer.text)]).toEqual([404, 'API_NOT_FOUND']);
    }
  });
});
