/** Tavern's HS256 JWTs against jose, both ways, and the refusals RFC 7515/7519 call for. */
import { createHmac, randomUUID } from 'node:crypto';
import { jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { MemoryCatalogStore } from '../../src/adapters/memory/catalog.js';
import { TokenIssuer } from '../../src/services/tokens.js';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0, 123);

const setup = async () => {
  const catalog = new MemoryCatalogStore();
  const clock = { t: NOW, now: () => clock.t };
  const tokens = new TokenIssuer({ catalog, clock, random: { uuid: () => randomUUID(), u32: () => 7 } });
  // Issuing stores the signing key in the catalog's settings.
  await tokens.issue({ kind: 'cloud', gameId: randomUUID() });
  const stored = await catalog.getSetting('token-signing-key');
  if (stored === undefined) throw new Error('setup: no signing key');
  return { catalog, clock, tokens, key: Buffer.from(stored, 'base64url') };
};

/** The JWT inside a labelled token. */
const bare = (token: string): string => token.split('.').slice(1).join('.');

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('tokens', () => {
  it('jose verifies the tokens Tavern signs, with the claims and lifetimes of wire.md §4.2', async () => {
    const { tokens, key } = await setup();
    const gameId = randomUUID();
    const namespaceId = randomUUID();
    for (const [grant, days] of [
      [{ kind: 'cloud', gameId }, 365],
      [{ kind: 'namespace-public', gameId, namespaceId }, 365],
      [{ kind: 'lobby', namespaceId, lobbyId: 'l-1' }, 365],
      [{ kind: 'player', namespaceId, lobbyId: 'l-1', playerId: 'p-1' }, 90],
    ] as const) {
      const token = await tokens.issue(grant, 'prod');
      const { payload, protectedHeader } = await jwtVerify(bare(token), key, { algorithms: ['HS256'], currentDate: new Date(NOW) });
      expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT' });
      expect(payload).toMatchObject({ kind: grant.kind, iat: NOW / 1000, exp: Math.floor((NOW + days * 86_400_000) / 1000) });
      // A player token is named by its player id, which it carries.
      if (grant.kind === 'player') expect(payload).toMatchObject({ player_id: 'p-1' });
      else expect(typeof payload.jti).toBe('string');
    }
  });

  it('Tavern verifies a token jose signed with its key, and reads its issue time to the millisecond', async () => {
    const { tokens, key, catalog } = await setup();
    const gameId = randomUUID();
    const jti = randomUUID();
    await catalog.putToken({ jti, kind: 'cloud', createdAt: NOW, expiresAt: NOW + 1000 * 86_400_000, gameId });
    const jwt = await new SignJWT({ kind: 'cloud', game_id: gameId })
      .setProtectedHeader({ alg: 'HS256' })
      .setJti(jti)
      .setIssuedAt(NOW / 1000)
      .setExpirationTime(Math.floor(NOW / 1000) + 60)
      .sign(key);
    expect(await tokens.verify(`cloud.${jwt}`)).toEqual({ ok: true, value: { kind: 'cloud', gameId, jti, issuedAt: NOW } });
  });

  it('a player token is not recorded: it verifies on its signature alone', async () => {
    const { tokens, catalog } = await setup();
    const token = await tokens.issue({ kind: 'player', namespaceId: 'ns', lobbyId: 'l-1', playerId: 'p-1' });
    const payload = JSON.parse(Buffer.from(token.split('.')[2] ?? '', 'base64url').toString('utf8')) as JWTPayload;
    expect(payload.jti).toBeUndefined();
    expect(await catalog.getToken('p-1')).toBeUndefined();
    expect(await tokens.verify(token)).toEqual({
      ok: true,
      value: { kind: 'player', namespaceId: 'ns', lobbyId: 'l-1', playerId: 'p-1', jti: 'p-1', issuedAt: NOW },
    });
  });

  it('refuses forged, tampered, unsigned, other-algorithm, expired and not-yet-valid tokens', async () => {
    const { tokens, key, clock } = await setup();
    const good = bare(await tokens.issue({ kind: 'player', namespaceId: 'ns', lobbyId: 'l', playerId: 'p' }));
    const [header = '', payload = '', signature = ''] = good.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const code = async (token: string) => {
      const r = await tokens.verify(token);
      return r.ok ? 'ok' : r.error.code;
    };
    const signed = (h: object, c: object) => new SignJWT(c as JWTPayload).setProtectedHeader(h as { alg: string }).sign(key);
    expect(await code(good)).toBe('ok');
    expect(await code(`${header}.${b64({ ...claims, player_id: 'someone-else' })}.${signature}`)).toBe('API_UNAUTHORIZED');
    expect(await code(`${header}.${payload}.${signature.slice(0, -2)}`)).toBe('API_UNAUTHORIZED');
    expect(await code(`${b64({ alg: 'none' })}.${payload}.`)).toBe('API_UNAUTHORIZED');
    expect(await code(await signed({ alg: 'HS512' }, claims))).toBe('API_UNAUTHORIZED');
    // A critical extension Tavern does not know (jose will not even sign one).
    const crit = `${b64({ alg: 'HS256', crit: ['x'], x: 1 })}.${payload}`;
    expect(await code(`${crit}.${createHmac('sha256', key).update(crit).digest('base64url')}`)).toBe('API_UNAUTHORIZED');
    expect(await code(await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(Buffer.alloc(32, 1)))).toBe('API_UNAUTHORIZED');
    const { exp: _exp, ...noExp } = claims;
    expect(await code(await signed({ alg: 'HS256' }, noExp))).toBe('API_UNAUTHORIZED');
    expect(await code(await signed({ alg: 'HS256' }, { ...claims, nbf: NOW / 1000 + 60 }))).toBe('API_UNAUTHORIZED');
    expect(await code(await signed({ alg: 'HS256' }, { ...claims, exp: 'soon' }))).toBe('API_UNAUTHORIZED');
    expect(await code(`${good}.extra`)).toBe('API_UNAUTHORIZED');
    expect(await code('a.b.c')).toBe('API_UNAUTHORIZED');
    clock.t = NOW + 91 * 86_400_000;
    expect(await code(good)).toBe('CLAIMS_ENTITLEMENT_EXPIRED');
  });

  it('checks a token against its record (kind, game, namespace) and its label against its kind (outside probe)', async () => {
    const { tokens, key } = await setup();
    const [gameA, gameB, nsA, nsB] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const code = async (token: string) => {
      const r = await tokens.verify(token);
      return r.ok ? 'ok' : `${r.error.code}${r.error.params?.['reason'] === undefined ? '' : ` ${String(r.error.params['reason'])}`}`;
    };
    const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[2] ?? '', 'base64url').toString('utf8')) as JWTPayload;
    /** A JWT signed with the real key, carrying `claims` (a leaked key, or a bug that signs what it should not). */
    const forge = (claims: JWTPayload) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key);

    const cloudA = await tokens.issue({ kind: 'cloud', gameId: gameA });
    const pubA = await tokens.issue({ kind: 'namespace-public', gameId: gameA, namespaceId: nsA }, 'prod');
    const lobby = await tokens.issue({ kind: 'lobby', namespaceId: nsA, lobbyId: 'l-1' });
    const player = await tokens.issue({ kind: 'player', namespaceId: nsA, lobbyId: 'l-1', playerId: 'p-1' });
    const devPlayer = await tokens.issue({ kind: 'player', namespaceId: nsA, lobbyId: 'l-1', playerId: 'p-2', dev: true });
    for (const t of [cloudA, pubA, lobby, player, devPlayer]) expect(await code(t)).toBe('ok');

    // Another token's id with another game, namespace or kind: the record says otherwise.
    const cloud = claimsOf(cloudA);
    const pub = claimsOf(pubA);
    expect(await code(`cloud.${await forge({ ...cloud, game_id: gameB })}`)).toBe('API_UNAUTHORIZED the token does not match its record');
    expect(await code(`pub_prod.${await forge({ ...pub, namespace_id: nsB })}`)).toBe('API_UNAUTHORIZED the token does not match its record');
    expect(await code(`pub_prod.${await forge({ ...pub, game_id: gameB })}`)).toBe('API_UNAUTHORIZED the token does not match its record');
    expect(await code(`pub_prod.${await forge({ ...cloud, kind: 'namespace-public', namespace_id: nsA })}`)).toBe('API_UNAUTHORIZED the token does not match its record');
    expect(await code(`lobby.${await forge({ ...claimsOf(lobby), namespace_id: nsB })}`)).toBe('API_UNAUTHORIZED the token does not match its record');
    // The same claims as the record: accepted.
    expect(await code(`cloud.${await forge(cloud)}`)).toBe('ok');

    // A label that names another kind.
    const relabel = (token: string, label: string) => `${label}.${bare(token)}`;
    for (const [token, label] of [[cloudA, 'pub_prod'], [cloudA, 'lobby'], [pubA, 'dev_prod'], [pubA, 'cloud'], [lobby, 'player'], [player, 'dev_player'], [devPlayer, 'player'], [player, 'lobby']] as const) {
      expect(await code(relabel(token, label)), `${label} on ${claimsOf(token).kind as string}`).toBe('API_UNAUTHORIZED the token label does not match its kind');
    }
    // The right label, another namespace's name (only the name differs), or no label at all: accepted.
    for (const t of [relabel(pubA, 'pub_staging'), bare(cloudA), bare(player), relabel(devPlayer, 'dev_player')]) expect(await code(t)).toBe('ok');
  });
});
