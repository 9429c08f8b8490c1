/** The BuildStore contract (builds): memory, SQLite and PostgreSQL run it through `catalog.contract.ts`. */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { BuildRecord, BuildStore } from '../../../src/io/catalog.js';
import { contractSuite, game, type UnderTest } from './fixtures.js';

export const buildsContract = (name: string, open: () => Promise<UnderTest<BuildStore>>): void =>
  contractSuite(`BuildStore contract: ${name}`, open, (fresh) => {
    it('builds: create, get, list per game in creation order; ids unique', async () => {
      const { catalog } = await fresh();
      const g = game();
      const h = game();
      const build = (over: Partial<BuildRecord> = {}): BuildRecord => ({
        id: randomUUID(), gameId: g.id, uploadId: randomUUID(), displayName: 'b', imageTag: 'game:1', kind: 'docker_image', compression: 'lz4', createdAt: 1, ...over,
      });
      const [b1, b2] = [build(), build({ displayName: 'second' })];
      for (const b of [b1, b2]) expect(await catalog.createBuild(b)).toEqual({ ok: true, value: b });
      expect(await catalog.createBuild(build({ id: b1.id }))).toEqual({ ok: false, error: { conflict: 'id', value: b1.id } });
      expect(await catalog.getBuild(b2.id)).toEqual(b2);
      expect(await catalog.getBuild(randomUUID())).toBeUndefined();
      expect((await catalog.listBuilds(g.id)).map((b) => b.id)).toEqual([b1.id, b2.id]);
      expect(await catalog.listBuilds(h.id)).toEqual([]);
    });
  });
