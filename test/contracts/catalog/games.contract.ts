/** The GameStore contract (games): memory, SQLite and PostgreSQL run it through `catalog.contract.ts`. */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { GameStore } from '../../../src/io/catalog.js';
import { contractSuite, game, type UnderTest } from './fixtures.js';

export const gamesContract = (name: string, open: () => Promise<UnderTest<GameStore>>): void =>
  contractSuite(`GameStore contract: ${name}`, open, (fresh) => {
    it('games: create, get, list in creation order; id and name id are unique', async () => {
      const { catalog } = await fresh();
      const a = game({ nameId: 'alpha' });
      const b = game({ nameId: 'beta' });
      const c = game({ nameId: 'gamma' });
      for (const g of [b, a, c]) expect(await catalog.createGame(g)).toEqual({ ok: true, value: g });
      expect(await catalog.getGame(a.id)).toEqual(a);
      expect(await catalog.getGame(randomUUID())).toBeUndefined();
      expect((await catalog.listGames()).map((g) => g.id)).toEqual([b.id, a.id, c.id]);
      expect(await catalog.createGame(game({ id: a.id }))).toEqual({ ok: false, error: { conflict: 'id', value: a.id } });
      expect(await catalog.createGame(game({ nameId: 'beta' }))).toEqual({ ok: false, error: { conflict: 'name-id', value: 'beta' } });
      // Both taken: the id is reported.
      expect(await catalog.createGame(game({ id: c.id, nameId: 'alpha' }))).toEqual({ ok: false, error: { conflict: 'id', value: c.id } });
      expect(await catalog.listGames()).toHaveLength(3);
    });
  });
