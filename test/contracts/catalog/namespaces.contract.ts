/** The NamespaceStore contract (namespaces): memory, SQLite and PostgreSQL run it through `catalog.contract.ts`. */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { DEFAULT_NAMESPACE_SETTINGS } from '../../../src/core/world.js';
import type { GameStore, NamespaceStore } from '../../../src/io/catalog.js';
import { contractSuite, createdNamespace, game, namespace, nextTurn, type UnderTest } from './fixtures.js';

export const namespacesContract = (name: string, open: () => Promise<UnderTest<GameStore & NamespaceStore>>): void =>
  contractSuite(`NamespaceStore contract: ${name}`, open, (fresh) => {
    it('namespaces: name id unique within a game only; listed per game in creation order; updates patch', async () => {
      const { catalog } = await fresh();
      const g1 = game();
      const g2 = game();
      await catalog.createGame(g1);
      await catalog.createGame(g2);
      const prod = namespace(g1.id, { nameId: 'prod' });
      const staging = namespace(g1.id, { nameId: 'staging' });
      const other = namespace(g2.id, { nameId: 'prod' });
      for (const ns of [staging, prod, other]) expect(await catalog.createNamespace(ns)).toEqual({ ok: true, value: ns });
      expect(await catalog.createNamespace(namespace(g1.id, { nameId: 'prod' }))).toEqual({ ok: false, error: { conflict: 'name-id', value: 'prod' } });
      expect(await catalog.createNamespace(namespace(g2.id, { id: prod.id }))).toEqual({ ok: false, error: { conflict: 'id', value: prod.id } });
      expect(await catalog.getNamespace(prod.id)).toEqual(prod);
      expect(await catalog.getNamespace(randomUUID())).toBeUndefined();
      expect((await catalog.listNamespaces(g1.id)).map((n) => n.id)).toEqual([staging.id, prod.id]);
      expect((await catalog.listNamespaces(g2.id)).map((n) => n.id)).toEqual([other.id]);
      expect(await catalog.listNamespaces(randomUUID())).toEqual([]);

      const settings = { ...DEFAULT_NAMESPACE_SETTINGS, lobbyCountMax: 7 };
      const versionId = randomUUID();
      const cdn = { authType: 'basic' as const, authUsers: [{ user: 'u', passwordHash: 'h' }], enableDomainPublicAuth: true };
      const updated = await catalog.updateNamespace(prod.id, { displayName: 'Live', versionId, settings, cdn });
      expect(updated).toEqual({ ...prod, displayName: 'Live', versionId, settings, cdn });
      expect(await catalog.getNamespace(prod.id)).toEqual(updated);
      expect(await catalog.updateNamespace(prod.id, { displayName: 'Again' })).toEqual({ ...updated, displayName: 'Again' });
      expect(await catalog.updateNamespace(randomUUID(), { displayName: 'x' })).toBeUndefined();
    });

    it('what one store writes, the other reads from the next turn of the event loop: namespace changes', async () => {
      const { catalog, twin } = await fresh();
      const ns = await createdNamespace(catalog);
      // Both read (and may keep) the current record first.
      for (const store of [catalog, twin]) expect((await store.getNamespace(ns.id))?.displayName).toBe(ns.displayName);
      await twin.updateNamespace(ns.id, { displayName: 'Renamed' });
      await nextTurn();
      expect((await catalog.getNamespace(ns.id))?.displayName).toBe('Renamed');
    });
  });
