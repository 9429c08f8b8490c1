/** The DomainStore contract (namespaces' custom domains): memory, SQLite and PostgreSQL run it through `catalog.contract.ts`. */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { DomainStore, GameStore, NamespaceStore } from '../../../src/io/catalog.js';
import { contractSuite, createdNamespace, game, namespace, nextTurn, type UnderTest } from './fixtures.js';

export const domainsContract = (name: string, open: () => Promise<UnderTest<GameStore & NamespaceStore & DomainStore>>): void =>
  contractSuite(`DomainStore contract: ${name}`, open, (fresh) => {
    it('domains: lowercase, unique across namespaces, kept in the order added, freed on removal', async () => {
      const { catalog } = await fresh();
      const g = game();
      await catalog.createGame(g);
      const a = namespace(g.id, { domains: [{ domain: 'Play.Example.com', createdAt: 1 }, { domain: 'b.example.com', createdAt: 2 }] });
      const created = await catalog.createNamespace(a);
      expect(created.ok && created.value.domains).toEqual([{ domain: 'play.example.com', createdAt: 1 }, { domain: 'b.example.com', createdAt: 2 }]);
      expect((await catalog.namespaceByDomain('PLAY.example.COM'))?.id).toBe(a.id);
      expect(await catalog.namespaceByDomain('nope.example.com')).toBeUndefined();

      // Taken by another namespace, or twice in one record.
      expect(await catalog.createNamespace(namespace(g.id, { domains: [{ domain: 'B.EXAMPLE.COM', createdAt: 3 }] }))).toEqual({
        ok: false,
        error: { conflict: 'domain', value: 'b.example.com' },
      });
      const twice = namespace(g.id, { domains: [{ domain: 'x.example.com', createdAt: 1 }, { domain: 'X.example.com', createdAt: 2 }] });
      expect(await catalog.createNamespace(twice)).toEqual({ ok: false, error: { conflict: 'domain', value: 'x.example.com' } });
      // A refused namespace left nothing behind.
      expect(await catalog.getNamespace(twice.id)).toBeUndefined();
      expect(await catalog.namespaceByDomain('x.example.com')).toBeUndefined();

      const b = namespace(g.id);
      await catalog.createNamespace(b);
      expect(await catalog.addDomain(b.id, { domain: 'Play.example.com', createdAt: 4 })).toEqual({ ok: false, error: { conflict: 'domain', value: 'play.example.com' } });
      expect(await catalog.addDomain(randomUUID(), { domain: 'free.example.com', createdAt: 4 })).toBeUndefined();
      const added = await catalog.addDomain(a.id, { domain: 'C.example.com', createdAt: 5 });
      expect(added?.ok && added.value.domains.map((d) => d.domain)).toEqual(['play.example.com', 'b.example.com', 'c.example.com']);

      const removed = await catalog.removeDomain(a.id, 'PLAY.example.com');
      expect(removed?.domains.map((d) => d.domain)).toEqual(['b.example.com', 'c.example.com']);
      expect(await catalog.namespaceByDomain('play.example.com')).toBeUndefined();
      // Removing a domain another namespace owns changes nothing.
      expect((await catalog.removeDomain(b.id, 'b.example.com'))?.domains).toEqual([]);
      expect((await catalog.namespaceByDomain('b.example.com'))?.id).toBe(a.id);
      expect(await catalog.removeDomain(randomUUID(), 'b.example.com')).toBeUndefined();
      const moved = await catalog.addDomain(b.id, { domain: 'play.example.com', createdAt: 6 });
      expect(moved?.ok && moved.value.domains).toEqual([{ domain: 'play.example.com', createdAt: 6 }]);
      expect((await catalog.namespaceByDomain('play.example.com'))?.id).toBe(b.id);
      expect((await catalog.getNamespace(a.id))?.domains.map((d) => d.domain)).toEqual(['b.example.com', 'c.example.com']);
    });

    it('what one store writes, the other reads from the next turn of the event loop: domains', async () => {
      const { catalog, twin } = await fresh();
      const ns = await createdNamespace(catalog);
      // Both read (and may keep) the current record first.
      for (const store of [catalog, twin]) expect((await store.getNamespace(ns.id))?.domains).toEqual([]);
      await catalog.addDomain(ns.id, { domain: 'play.example.com', createdAt: 5 });
      // The writer sees its own write at once.
      expect((await catalog.getNamespace(ns.id))?.domains.map((d) => d.domain)).toEqual(['play.example.com']);
      await nextTurn();
      expect((await twin.getNamespace(ns.id))?.domains.map((d) => d.domain)).toEqual(['play.example.com']);
      await twin.removeDomain(ns.id, 'play.example.com');
      await nextTurn();
      expect((await catalog.getNamespace(ns.id))?.domains).toEqual([]);
    });
  });
