/** Device links (the CLI's login) and stopping a lobby from the cloud API. */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, harness, str, until, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

describe('device links', () => {
  it('prepare, complete with a game token, then the poll returns a cloud token', async () => {
    h = harness();
    const { gameId } = await h.setup();
    const link = await h.call('POST', '/cloud/devices/links');
    expect(link.status).toBe(200);
    const token = str(link.body['device_link_token']);
    expect(str(link.body['device_link_url'])).toContain(str(link.body['device_link_id']));
    const before = await h.call('GET', `/cloud/devices/links?device_link_token=${encodeURIComponent(token)}`);
    expect(before.body['cloud_token']).toBeUndefined();
    expect(str(before.body['watch']?.['index'])).toMatch(/^\d+$/);
    const watching = h.call('GET', `/cloud/devices/links?device_link_token=${encodeURIComponent(token)}&watch_index=1`);
    await until(() => h.timers.pending >= 2);
    expect((await h.call('POST', '/cloud/devices/links/complete', { token: ADMIN, body: { device_link_token: token, game_id: gameId } })).status).toBe(200);
    h.timers.advance(1_000);
    const cloudToken = str((await watching).body['cloud_token']);
    expect((await h.call('GET', '/cloud/auth/inspect', { token: cloudToken })).body).toEqual({ agent: { game_cloud: { game_id: gameId } } });
  });

  it('completing a link again with another game answers 409 DEVICE_LINK_ALREADY_COMPLETED and keeps the first game\'s token (outside probe)', async () => {
    h = harness();
    const a = await h.setup(undefined, 'game-a');
    const b = await h.setup(undefined, 'game-b');
    const token = str((await h.call('POST', '/cloud/devices/links')).body['device_link_token']);
    const complete = (gameId: string, bearer: string) => h.call('POST', '/cloud/devices/links/complete', { token: bearer, body: { device_link_token: token, game_id: gameId } });
    expect((await complete(a.gameId, a.cloud)).status).toBe(200);
    const again = await complete(b.gameId, b.cloud);
    expect(again.status).toBe(409);
    expect(again.body['code']).toBe('DEVICE_LINK_ALREADY_COMPLETED');
    expect((await complete(b.gameId, ADMIN)).status).toBe(409);
    // The same game again is fine (a retried request).
    expect((await complete(a.gameId, ADMIN)).status).toBe(200);
    const cloudToken = str((await h.call('GET', `/cloud/devices/links?device_link_token=${encodeURIComponent(token)}`)).body['cloud_token']);
    expect((await h.call('GET', '/cloud/auth/inspect', { token: cloudToken })).body).toEqual({ agent: { game_cloud: { game_id: a.gameId } } });
  });

  it('gives up the watch after 40 s and refuses unknown links', async () => {
    h = harness();
    const token = str((await h.call('POST', '/cloud/devices/links')).body['device_link_token']);
    const watching = h.call('GET', `/cloud/devices/links?device_link_token=${encodeURIComponent(token)}&watch_index=1`);
    await until(() => h.timers.pending >= 2);
    h.timers.advance(40_000);
    expect((await watching).body['cloud_token']).toBeUndefined();
    expect((await h.call('GET', '/cloud/devices/links?device_link_token=nope')).body['code']).toBe('API_BAD_QUERY');
    expect((await h.call('GET', '/cloud/devices/links')).body['code']).toBe('API_BAD_QUERY');
    const { gameId } = await h.setup();
    expect((await h.call('POST', '/cloud/devices/links/complete', { token: ADMIN, body: { device_link_token: 'nope', game_id: gameId } })).body['code']).toBe('API_BAD_QUERY');
    expect((await h.call('POST', '/cloud/devices/links/complete', { body: { device_link_token: token, game_id: gameId } })).status).toBe(401);
  });
});

describe('deleteMatchmakerLobby', () => {
  it('stops a lobby of the game', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub, gameId, cloud } = await h.setup();
    const lobbyId = str((await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } })).body['lobby']?.['lobby_id']);
    const r = await h.call('DELETE', `/cloud/games/${gameId}/matchmaker/lobbies/${lobbyId}`, { token: cloud });
    expect(r.body).toEqual({ did_remove: true });
    expect(h.runtime.stopped.map((s) => s.lobbyId)).toContain(lobbyId);
    expect((await h.call('DELETE', `/cloud/games/${gameId}/matchmaker/lobbies/${lobbyId}`, { token: cloud })).body).toEqual({ did_remove: false });
    expect((await h.call('DELETE', `/cloud/games/${gameId}/matchmaker/lobbies/${randomUUID()}`, { token: cloud })).status).toBe(404);
  });
});
