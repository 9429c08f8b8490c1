/** The VersionStore contract (versions): memory, SQLite and PostgreSQL run it through `catalog.contract.ts`. */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { VersionRecord, VersionStore } from '../../../src/io/catalog.js';
import { contractSuite, game, type UnderTest } from './fixtures.js';

export const versionsContract = (name: string, open: () => Promise<UnderTest<VersionStore>>): void =>
  contractSuite(`VersionStore contract: ${name}`, open, (fresh) => {
    it('versions: create, get, list per game in creation order; ids unique; configs kept as written', async () => {
      const { catalog } = await fresh();
      const g = game();
      const h = game();
      // Key order carries meaning in a config (region priority, mode order): it must survive storage.
      const config = { matchmaker: { regions: { 'lnd-atl': {}, local: {}, aaa: {} }, game_modes: { zeta: {}, alpha: { max_players: 2 } } }, cdn: { routes: [] } };
      const v1: VersionRecord = { id: randomUUID(), gameId: g.id, displayName: 'v1', createdAt: 1, config, lobbyGroupIds: { zeta: randomUUID(), alpha: randomUUID() } };
      const v2: VersionRecord = { ...v1, id: randomUUID(), displayName: 'v2', config: null };
      const v3: VersionRecord = { ...v1, id: randomUUID(), gameId: h.id };
      for (const v of [v2, v1, v3]) expect(await catalog.createVersion(v)).toEqual({ ok: true, value: v });
      expect(await catalog.createVersion({ ...v3, gameId: g.id })).toEqual({ ok: false, error: { conflict: 'id', value: v3.id } });
      const got = await catalog.getVersion(v1.id);
      expect(got).toEqual(v1);
      expect(JSON.stringify(got?.config)).toBe(JSON.stringify(config));
      expect(await catalog.getVersion(randomUUID())).toBeUndefined();
      expect((await catalog.listVersions(g.id)).map((v) => v.id)).toEqual([v2.id, v1.id]);
    });
  });
