/** The BuildStore contract (builds): memory, SQLite and PostgreSQL run it through `catalog.contract.ts`. */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { BuildRecord, BuildStore } from '../../../src/io/catalog.js';
import { contractSuite, game, type UnderTest } from './fixtures.js';

export const buildsContract = (name: string, open: () => Promise<UnderTest<BuildStore>>): void =>
  contractSuite(`BuildStore contract: ${name}`, open, (fresh) => {
    it('builds: create, get, list per game in creation order; ids unique; a build\'s pushed image recorded once', async () => {
      const { catalog, twin } = await fresh();
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
      // The pushed image is recorded once: a second reference (another instance's push) leaves the first.
      const pushed = `127.0.0.1:5000/games/tavern-build@sha256:${'a'.repeat(64)}`;
      expect(await catalog.recordBuildImage(b1.id, pushed)).toEqual({ ...b1, image: pushed });
      expect(await catalog.recordBuildImage(b1.id, `127.0.0.1:5000/games/tavern-build@sha256:${'b'.repeat(64)}`)).toEqual({ ...b1, image: pushed });
      expect(await catalog.getBuild(b1.id)).toEqual({ ...b1, image: pushed });
      expect((await twin.getBuild(b1.id))?.image).toBe(pushed);
      expect(await catalog.getBuild(b2.id)).toEqual(b2);
      expect(await catalog.recordBuildImage(randomUUID(), pushed)).toBeUndefined();
    });
  });
