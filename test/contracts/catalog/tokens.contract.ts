/** The TokenStore contract (token records): memory, SQLite and PostgreSQL run it through `catalog.contract.ts`. */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { TokenRecord, TokenStore } from '../../../src/io/catalog.js';
import { contractSuite, nextTurn, type UnderTest } from './fixtures.js';

export const tokensContract = (name: string, open: () => Promise<UnderTest<TokenStore>>): void =>
  contractSuite(`TokenStore contract: ${name}`, open, (fresh) => {
    it('tokens: put, get, revoke (once; the first revocation time stays)', async () => {
      const { catalog } = await fresh();
      const t: TokenRecord = { jti: randomUUID(), kind: 'namespace-public', gameId: randomUUID(), namespaceId: randomUUID(), createdAt: 10, expiresAt: 20 };
      const cloud: TokenRecord = { jti: randomUUID(), kind: 'cloud', createdAt: 11 };
      expect(await catalog.putToken(t)).toEqual({ ok: true, value: t });
      expect(await catalog.putToken(cloud)).toEqual({ ok: true, value: cloud });
      expect(await catalog.putToken({ ...cloud, kind: 'lobby' })).toEqual({ ok: false, error: { conflict: 'id', value: cloud.jti } });
      expect(await catalog.getToken(t.jti)).toEqual(t);
      expect(await catalog.getToken(randomUUID())).toBeUndefined();
      expect(await catalog.revokeToken(t.jti, 15)).toEqual({ ...t, revokedAt: 15 });
      expect(await catalog.revokeToken(t.jti, 16)).toEqual({ ...t, revokedAt: 15 });
      expect(await catalog.getToken(t.jti)).toEqual({ ...t, revokedAt: 15 });
      expect(await catalog.getToken(cloud.jti)).toEqual(cloud);
      expect(await catalog.revokeToken(randomUUID(), 15)).toBeUndefined();
    });

    it('lists a game\'s tokens newest first (ties by id, descending), revoked ones too, at most the limit; not another game\'s nor unscoped ones', async () => {
      const { catalog, twin } = await fresh();
      const gameId = randomUUID();
      const ids = ['00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-00000000000b', '00000000-0000-4000-8000-00000000000c'];
      const [a, b, c] = ids.map((jti, i): TokenRecord => ({ jti, kind: i === 0 ? 'cloud' : 'namespace-public', gameId, ...(i === 0 ? {} : { namespaceId: randomUUID() }), createdAt: i === 2 ? 5 : 7, expiresAt: 99 }));
      if (a === undefined || b === undefined || c === undefined) throw new Error('three tokens');
      for (const t of [c, a, b]) await catalog.putToken(t);
      await catalog.putToken({ jti: randomUUID(), kind: 'cloud', gameId: randomUUID(), createdAt: 8 });
      await catalog.putToken({ jti: randomUUID(), kind: 'lobby', namespaceId: randomUUID(), createdAt: 9 });
      expect(await catalog.listTokens(randomUUID(), 10)).toEqual([]);
      await catalog.revokeToken(a.jti, 8);
      await nextTurn();
      // Another store on the same database lists what this one wrote.
      for (const store of [catalog, twin]) {
        expect(await store.listTokens(gameId, 10)).toEqual([b, { ...a, revokedAt: 8 }, c]);
        expect(await store.listTokens(gameId, 2)).toEqual([b, { ...a, revokedAt: 8 }]);
        expect(await store.listTokens(gameId, 0)).toEqual([]);
      }
    });

    it('what one store writes, the other reads from the next turn of the event loop: revocations and new tokens', async () => {
      const { catalog, twin } = await fresh();
      const gameId = randomUUID();
      const t: TokenRecord = { jti: randomUUID(), kind: 'cloud', gameId, createdAt: 1 };
      await catalog.putToken(t);
      // Both read (and may keep) the current record first.
      for (const store of [catalog, twin]) expect(await store.getToken(t.jti)).toEqual(t);
      await twin.revokeToken(t.jti, 9);
      await nextTurn();
      expect((await catalog.getToken(t.jti))?.revokedAt).toBe(9);
      const later: TokenRecord = { jti: randomUUID(), kind: 'cloud', gameId, createdAt: 2 };
      expect(await catalog.getToken(later.jti)).toBeUndefined();
      await twin.putToken(later);
      await nextTurn();
      expect(await catalog.getToken(later.jti)).toEqual(later);
    });
  });
