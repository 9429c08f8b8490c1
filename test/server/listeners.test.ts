/**
 * What each listener answers, in process: the public one serves the whole API; the lobbies' one
 * (at the lobby network's gateway, the containers' `RIVET_API_ENDPOINT`) serves the matchmaker API
 * only, and everything else there is 404 `API_NOT_FOUND`, as a path that does not exist. Every
 * route of the API is tried on both, so a route added later is placed on one side or the other
 * by this test, never by accident.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Handler } from '../../src/server/context.js';
import type { Route } from '../../src/server/router.js';
import { buildRouter, isLobbyRoute } from '../../src/server/routes/table.js';
import { ADMIN, harness, str, until, type Harness, type W } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

type Side = 'public' | 'lobbies';

const answer = async (side: Side, method: string, path: string, token?: string, body?: unknown, host?: string): Promise<{ status: number; code: unknown }> => {
  const app = side === 'public' ? h.app : h.app.lobbies;
  const sent = body === undefined || method === 'GET' ? {} : { body };
  const res = await app.handle(h.request(method, path, { ...(token === undefined ? {} : { token }), ...sent, ...(host === undefined ? {} : { host }) }));
  const text = await res.text();
  const json = (text.startsWith('{') ? JSON.parse(text) : {}) as { code?: unknown };
  return { status: res.status, code: json.code };
};

/** Every route of the API, as the router holds them. */
const everyRoute = (): Route<Handler>[] => {
  const routes: Route<Handler>[] = [];
  buildRouter().only((route) => routes.push(route) > 0);
  return routes;
};

/** A path that matches the route's pattern. */
const samplePath = (pattern: string): string =>
  pattern.replace(/\{(\w+)(:uuid|\*)?\}/g, (_m, name: string, kind?: string) => (kind === ':uuid' ? randomUUID() : kind === '*' ? 'a/b' : name === 'file' ? 'index.html' : name === 'domain' ? 'example.com' : 'x'));

const NOT_FOUND = { status: 404, code: 'API_NOT_FOUND' };

describe('the public listener and the lobbies\' listener', () => {
  it('every route: the lobbies\' listener answers the matchmaker API as the public one does, and 404 API_NOT_FOUND for the rest', async () => {
    h = harness({ metrics: () => Promise.resolve('tavern_proxy_up 1\n') });
    const routes = everyRoute();
    const lobbyRoutes = routes.filter(isLobbyRoute).map((r) => `${r.method} ${r.pattern}`);
    expect(lobbyRoutes.sort()).toEqual([
      'GET /matchmaker/lobbies/list', 'GET /matchmaker/lobbies/{lobby_id:uuid}/state', 'GET /matchmaker/players/statistics', 'GET /matchmaker/regions',
      'POST /matchmaker/lobbies/create', 'POST /matchmaker/lobbies/find', 'POST /matchmaker/lobbies/join', 'POST /matchmaker/lobbies/ready',
      'POST /matchmaker/players/connected', 'POST /matchmaker/players/disconnected', 'PUT /matchmaker/lobbies/closed', 'PUT /matchmaker/lobbies/state',
    ]);
    expect(routes.length).toBeGreaterThan(40);
    for (const route of routes) {
      const path = samplePath(route.pattern);
      const pub = await answer('public', route.method, path, ADMIN, {});
      const lobbies = await answer('lobbies', route.method, path, ADMIN, {});
      const what = `${route.method} ${route.pattern}`;
      expect(pub, what).not.toEqual(NOT_FOUND);
      if (isLobbyRoute(route)) expect(lobbies, what).toEqual(pub);
      else expect(lobbies, what).toEqual(NOT_FOUND);
    }
  });

  it('a lobby reports itself and its players through the lobbies\' listener; the cloud, admin, dashboard, health, metrics and uploads are not there', async () => {
    h = harness({ metrics: () => Promise.resolve('tavern_proxy_up 1\n') });
    const s = await h.setup();
    // The find waits for its lobby; the lobby says it is ready through its own listener.
    const finding = h.call('POST', '/matchmaker/lobbies/find', { token: s.pub, body: { game_modes: ['default'] } });
    await until(() => h.runtime.running.length === 1);
    const lobbyId = h.runtime.running[0] ?? '';
    const lobby = str(h.runtime.startOf(lobbyId)?.env['RIVET_TOKEN'] as W | undefined);
    expect(await answer('lobbies', 'POST', '/matchmaker/lobbies/ready', lobby, {})).toEqual({ status: 200, code: undefined });
    const found = await finding;
    expect(found.status).toBe(200);
    expect(found.body['lobby']?.['lobby_id']).toBe(lobbyId);
    const player = str(found.body['player']?.['token']);

    // [method, path, token, body, status on the lobbies' listener, on the public one (undefined: a write, sent once)]
    const table: readonly (readonly [string, string, string | undefined, unknown, number, number | undefined, string?])[] = [
      // The lobby's own calls and the player-facing matchmaker.
      ['PUT', '/matchmaker/lobbies/state', lobby, { round: 1 }, 200, undefined],
      ['GET', `/matchmaker/lobbies/${lobbyId}/state`, lobby, undefined, 200, 200],
      ['POST', '/matchmaker/players/connected', lobby, { player_token: player }, 200, undefined],
      ['POST', '/matchmaker/players/disconnected', lobby, { player_token: player }, 200, undefined],
      ['PUT', '/matchmaker/lobbies/closed', lobby, { is_closed: true }, 200, undefined],
      ['GET', '/matchmaker/lobbies/list', s.pub, undefined, 200, 200],
      ['GET', '/matchmaker/regions', s.pub, undefined, 200, 200],
      ['GET', '/v1/lobbies/list', s.pub, undefined, 200, 200, 'matchmaker.api.tavern.test'],
      // The rest of the API: only the public listener has it.
      ['GET', '/health', undefined, undefined, 404, 200],
      ['GET', '/metrics', ADMIN, undefined, 404, 200],
      ['GET', '/cloud/games', ADMIN, undefined, 404, 200],
      ['POST', '/cloud/games', ADMIN, { name_id: 'other', display_name: 'Other', developer_group_id: randomUUID() }, 404, 200],
      ['GET', `/cloud/games/${s.gameId}`, s.cloud, undefined, 404, 200],
      ['GET', '/cloud/bootstrap', undefined, undefined, 404, 200],
      ['GET', '/dashboard', undefined, undefined, 404, 200],
      ['GET', `/cloud/games/${s.gameId}/namespaces/${s.nsId}/analytics/matchmaker/live`, s.cloud, undefined, 404, 200],
      ['GET', '/v1/games', ADMIN, undefined, 404, 200, 'cloud.api.tavern.test'],
      ['PUT', '/uploads/some/key', undefined, undefined, 404, 403],
    ];
    for (const [method, path, token, body, lobbiesStatus, publicStatus, host] of table) {
      const lobbies = await answer('lobbies', method, path, token, body, host);
      expect({ path, ...lobbies }).toEqual({ path, status: lobbiesStatus, code: lobbiesStatus === 404 ? 'API_NOT_FOUND' : undefined });
      if (publicStatus !== undefined) expect({ path, status: (await answer('public', method, path, token, body, host)).status }).toEqual({ path, status: publicStatus });
    }
    // A preflight for a path the lobbies' listener lacks is a 404 there too.
    expect(await answer('lobbies', 'OPTIONS', '/cloud/games')).toEqual(NOT_FOUND);
    expect((await answer('public', 'OPTIONS', '/cloud/games')).status).toBe(200);
  });
});
