/** Revoking a game's cloud, public and development tokens through the API (a Tavern extension). */
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, harness, str, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

describe('POST /cloud/games/{game}/tokens/revoke', () => {
  it('revokes a public and a cloud token of the game: refused from the next request on; again answers TOKEN_REVOKED', async () => {
    h = harness({ readyAfterMs: 0 });
    const { gameId, cloud, nsId, pub } = await h.setup();
    const path = `/cloud/games/${gameId}/tokens/revoke`;
    expect((await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } })).status).toBe(200);
    expect((await h.call('POST', path, { token: cloud, body: { token: pub } })).status).toBe(200);
    const refused = await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
    expect([refused.status, refused.body['code']]).toEqual([403, 'TOKEN_REVOKED']);
    const again = await h.call('POST', path, { token: cloud, body: { token: pub } });
    expect([again.status, again.body['code']]).toEqual([403, 'TOKEN_REVOKED']);

    const second = str((await h.call('POST', `/cloud/games/${gameId}/tokens/cloud`, { token: cloud })).body['token']);
    expect((await h.call('POST', path, { token: ADMIN, body: { token: second } })).status).toBe(200);
    expect((await h.call('GET', `/cloud/games/${gameId}`, { token: second })).body['code']).toBe('TOKEN_REVOKED');
    // The namespace still works with a new public token.
    const fresh = str((await h.call('POST', `/cloud/games/${gameId}/namespaces/${nsId}/tokens/public`, { token: cloud })).body['token']);
    expect((await h.call('POST', '/matchmaker/lobbies/find', { token: fresh, body: { game_modes: ['default'] } })).status).toBe(200);
  });

  it('refuses another game\'s token, a lobby token, garbage and a bad body with their codes', async () => {
    h = harness({ readyAfterMs: 0 });
    const { gameId, cloud, pub } = await h.setup();
    const other = await h.setup(undefined, 'other-game');
    const path = `/cloud/games/${gameId}/tokens/revoke`;
    const found = await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
    const lobbyToken = h.runtime.startOf(str(found.body['lobby']?.['lobby_id']))?.env['RIVET_TOKEN'] ?? '';
    const cases: [unknown, number, string][] = [
      [{ token: other.pub }, 403, 'API_FORBIDDEN'],
      [{ token: lobbyToken }, 403, 'API_FORBIDDEN'],
      [{ token: 'garbage' }, 401, 'API_UNAUTHORIZED'],
      [{}, 400, 'VALIDATION_ERROR'],
    ];
    for (const [body, status, code] of cases) {
      const r = await h.call('POST', path, { token: cloud, body });
      expect([r.status, r.body['code']]).toEqual([status, code]);
    }
    // Another game's cloud token cannot revoke here; the other game's token still works.
    expect((await h.call('POST', path, { token: other.cloud, body: { token: pub } })).status).toBe(403);
    expect((await h.call('POST', '/matchmaker/lobbies/find', { token: other.pub, body: { game_modes: ['default'] } })).status).toBe(200);
  });
});
