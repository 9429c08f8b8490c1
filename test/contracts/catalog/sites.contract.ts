/** The SiteStore contract (CDN sites): memory, SQLite and PostgreSQL run it through `catalog.contract.ts`. */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { CdnSiteRecord, SiteStore } from '../../../src/io/catalog.js';
import { contractSuite, game, type UnderTest } from './fixtures.js';

export const sitesContract = (name: string, open: () => Promise<UnderTest<SiteStore>>): void =>
  contractSuite(`SiteStore contract: ${name}`, open, (fresh) => {
    it('CDN sites: create, get, list per game; ids unique', async () => {
      const { catalog } = await fresh();
      const g = game();
      const h = game();
      const site = (over: Partial<CdnSiteRecord> = {}): CdnSiteRecord => ({ id: randomUUID(), gameId: g.id, uploadId: randomUUID(), displayName: 's', createdAt: 1, ...over });
      const [s1, s2] = [site(), site({ gameId: h.id })];
      for (const s of [s1, s2]) expect(await catalog.createCdnSite(s)).toEqual({ ok: true, value: s });
      expect(await catalog.createCdnSite(site({ id: s2.id }))).toEqual({ ok: false, error: { conflict: 'id', value: s2.id } });
      expect(await catalog.getCdnSite(s1.id)).toEqual(s1);
      expect(await catalog.getCdnSite(randomUUID())).toBeUndefined();
      expect((await catalog.listCdnSites(g.id)).map((s) => s.id)).toEqual([s1.id]);
    });
  });
