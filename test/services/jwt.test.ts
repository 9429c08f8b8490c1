/** HS256 signing (`jwt.ts`): the one-shot HMAC from the key's pads against node's `createHmac` and jose. */
import { createHmac, createSecretKey, randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { MemoryCatalogStore } from '../../src/adapters/memory/catalog.js';
import { HEADER, signJwt, verifyJwt } from '../../src/services/jwt.js';
import { TokenIssuer } from '../../src/services/tokens.js';

describe('HS256 JWTs', () => {
  it('sign as createHmac does, for keys shorter and longer than a block and inputs of any length; jose verifies them', async () => {
    for (const bytes of [16, 32, 64, 65, 100]) {
      const raw = randomBytes(bytes);
      const key = createSecretKey(raw);
      for (const size of [0, 10, 600, 5_000]) {
        const claims = { kind: 'cloud', pad: 'x'.repeat(size), exp: 2_000_000_000 };
        const jwt = signJwt(key, claims);
        const [header, payload, signature] = jwt.split('.');
        expect(header).toBe(HEADER);
        expect(signature).toBe(createHmac('sha256', raw).update(`${header}.${payload}`).digest('base64url'));
        expect(verifyJwt(jwt, key, 1_900_000_000)).toEqual({ claims });
        expect((await jwtVerify(jwt, raw, { algorithms: ['HS256'], currentDate: new Date(1_900_000_000_000) })).payload).toEqual(claims);
      }
    }
  });

  it('refuse a signature of another key, and one a character off', () => {
    const key = createSecretKey(randomBytes(32));
    const jwt = signJwt(key, { exp: 2_000_000_000 });
    expect(verifyJwt(jwt, createSecretKey(randomBytes(32)), 0)).toBe('invalid');
    // The signature's first character (its last one partly encodes padding bits only).
    const at = jwt.lastIndexOf('.') + 1;
    const other = jwt[at] === 'A' ? 'B' : 'A';
    expect(verifyJwt(`${jwt.slice(0, at)}${other}${jwt.slice(at + 1)}`, key, 0)).toBe('invalid');
  });

  it('a player token carries the claims JSON.stringify gives its grant, iat and exp (the text is written out)', async () => {
    const catalog = new MemoryCatalogStore();
    let now = 0;
    const tokens = new TokenIssuer({ catalog, clock: { now: () => now }, random: { uuid: () => randomUUID(), u32: () => 7 } });
    // Before the key is loaded there is no token at once; issue loads it.
    expect(tokens.playerToken({ kind: 'player', namespaceId: 'ns', lobbyId: 'l', playerId: 'p' })).toBeUndefined();
    await tokens.issue({ kind: 'player', namespaceId: 'ns', lobbyId: 'l', playerId: 'p' });
    fc.assert(fc.property(fc.string(), fc.string(), fc.string(), fc.boolean(), fc.integer({ min: 0, max: 4_000_000_000_000 }), (namespaceId, lobbyId, playerId, dev, at) => {
      now = at;
      const grant = { kind: 'player', namespaceId, lobbyId, playerId, ...(dev ? { dev: true } : {}) } as const;
      const token = tokens.playerToken(grant);
      const [label, , payload] = (token ?? '').split('.');
      expect(label).toBe(dev ? 'dev_player' : 'player');
      expect(Buffer.from(payload ?? '', 'base64url').toString('utf8')).toBe(JSON.stringify({
        kind: 'player', namespace_id: namespaceId, lobby_id: lobbyId, player_id: playerId, ...(dev ? { dev: true } : {}),
        iat: at / 1000, exp: Math.floor((at + 90 * 86_400_000) / 1000),
      }));
    }), { numRuns: 200 });
  });
});
