/** Listing a game's tokens and revoking its cloud, public and development tokens through the API (Tavern extensions). */
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

interface Listed { token_id: string; kind: string; namespace_id?: string; create_ts: string; expire_ts?: string; revoke_ts?: string; is_revoked: boolean; is_expired: boolean }

describe('GET /cloud/games/{game}/tokens', () => {
  it('lists the game\'s tokens newest first without their secrets; revoking one by its id shows it revoked and refuses it', async () => {
    h = harness({ readyAfterMs: 0 });
    const { gameId, cloud, nsId, pub } = await h.setup();
    await h.setup(undefined, 'other-game');
    h.clock.set(h.clock.now() + 1000);
    const second = str((await h.call('POST', `/cloud/games/${gameId}/tokens/cloud`, { token: cloud })).body['token']);
    const r = await h.call('GET', `/cloud/games/${gameId}/tokens`, { token: cloud });
    expect(r.status).toBe(200);
    const tokens = r.body['tokens'] as unknown as Listed[];
    expect(r.body['more']).toBe(false);
    // The setup's cloud and public tokens, then the new one first; the other game's are not here.
    expect(tokens.map((t) => t.kind).sort()).toEqual(['cloud', 'cloud', 'public']);
    expect(tokens[0]?.kind).toBe('cloud');
    expect(Date.parse(tokens[0]?.create_ts ?? '')).toBe(h.clock.now());
    expect(tokens.find((t) => t.kind === 'public')?.namespace_id).toBe(nsId);
    expect(tokens.every((t) => !t.is_revoked && !t.is_expired && t.expire_ts !== undefined)).toBe(true);
    const wire = JSON.stringify(r.body);
    for (const secret of [cloud, pub, second]) expect(wire).not.toContain(secret.split('.').at(-1));

    const newest = tokens[0]?.token_id ?? '';
    expect((await h.call('POST', `/cloud/games/${gameId}/tokens/revoke`, { token: ADMIN, body: { token_id: newest } })).status).toBe(200);
    expect((await h.call('GET', `/cloud/games/${gameId}`, { token: second })).body['code']).toBe('TOKEN_REVOKED');
    const after = (await h.call('GET', `/cloud/games/${gameId}/tokens?limit=1`, { token: cloud })).body;
    expect(after['more']).toBe(true);
    expect(after['tokens']).toEqual([{ ...tokens[0], is_revoked: true, revoke_ts: new Date(h.clock.now()).toISOString() }]);
    const again = await h.call('POST', `/cloud/games/${gameId}/tokens/revoke`, { token: cloud, body: { token_id: newest } });
    expect([again.status, again.body['code']]).toEqual([403, 'TOKEN_REVOKED']);
  });

  it('refuses a public token, another game\'s cloud token, a bad limit, and a revoke by an unknown id, another game\'s id or both forms at once', async () => {
    h = harness({ readyAfterMs: 0 });
    const { gameId, cloud, pub } = await h.setup();
    const other = await h.setup(undefined, 'other-game');
    const list = `/cloud/games/${gameId}/tokens`;
    expect((await h.call('GET', list, { token: pub })).status).toBe(401);
    expect((await h.call('GET', list, { token: other.cloud })).body['code']).toBe('API_FORBIDDEN');
    for (const q of ['limit=0', 'limit=1001', 'limit=x']) {
      const r = await h.call('GET', `${list}?${q}`, { token: cloud });
      expect([r.status, r.body['code']], q).toEqual([400, 'API_BAD_QUERY']);
    }
    const theirs = ((await h.call('GET', `/cloud/games/${other.gameId}/tokens`, { token: other.cloud })).body['tokens'] as unknown as Listed[])[0]?.token_id;
    const revoke = `/cloud/games/${gameId}/tokens/revoke`;
    const cases: [unknown, number, string, string?][] = [
      [{ token_id: theirs }, 403, 'API_FORBIDDEN'],
      [{ token_id: '00000000-0000-4000-8000-000000000000' }, 403, 'API_FORBIDDEN'],
      [{ token_id: 'nope' }, 400, 'VALIDATION_ERROR', 'token_id.invalid'],
      [{ token: pub, token_id: theirs }, 400, 'VALIDATION_ERROR', 'token_id.conflict'],
      [{}, 400, 'VALIDATION_ERROR', 'token.missing'],
    ];
    for (const [body, status, code, path] of cases) {
      const r = await h.call('POST', revoke, { token: cloud, body });
      expect([r.status, r.body['code']], JSON.stringify(body)).toEqual([status, code]);
      if (path !== undefined) expect((r.body['metadata']?.['errors'] as unknown as { path: string[] }[]).map((p) => p.path.join('.'))).toEqual([path]);
    }
    // Nothing was revoked: the other game's tokens still work.
    expect((await h.call('POST', '/matchmaker/lobbies/find', { token: other.pub, body: { game_modes: ['default'] } })).status).toBe(200);
  });
});
