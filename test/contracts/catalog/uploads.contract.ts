/** The UploadStore contract (uploads): memory, SQLite and PostgreSQL run it through `catalog.contract.ts`. */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { UploadStore } from '../../../src/io/catalog.js';
import { contractSuite, upload, type UnderTest } from './fixtures.js';

export const uploadsContract = (name: string, open: () => Promise<UnderTest<UploadStore>>): void =>
  contractSuite(`UploadStore contract: ${name}`, open, (fresh) => {
    it('uploads: completeUpload marks once, a second call returns the record unchanged', async () => {
      const { catalog, twin } = await fresh();
      const u = upload(randomUUID());
      expect(await catalog.createUpload(u)).toEqual({ ok: true, value: u });
      expect(await catalog.createUpload(upload(u.gameId, { id: u.id }))).toEqual({ ok: false, error: { conflict: 'id', value: u.id } });
      expect(await catalog.getUpload(u.id)).toEqual(u);
      expect(await catalog.getUpload(randomUUID())).toBeUndefined();
      const done = await catalog.completeUpload(u.id, 5_000);
      expect(done).toEqual({ ...u, completedAt: 5_000 });
      expect(await catalog.completeUpload(u.id, 6_000)).toEqual(done);
      expect(await twin.completeUpload(u.id, 7_000)).toEqual(done);
      expect(await catalog.getUpload(u.id)).toEqual(done);
      expect(await catalog.completeUpload(randomUUID(), 5_000)).toBeUndefined();
      // Racing completions: exactly one time wins, every caller sees it.
      const v = upload(u.gameId);
      await catalog.createUpload(v);
      const raced = await Promise.all([catalog.completeUpload(v.id, 1), twin.completeUpload(v.id, 2), catalog.completeUpload(v.id, 3)]);
      const at = raced[0]?.completedAt;
      expect([1, 2, 3]).toContain(at);
      expect(raced.map((r) => r?.completedAt)).toEqual([at, at, at]);
    });

    it('uploads: expiredUploads lists the open ones past expiry, oldest first; abandonUpload marks once and blocks completion', async () => {
      const { catalog, twin } = await fresh();
      const g = randomUUID();
      const late = upload(g, { expiresAt: 9_000 });
      const early = upload(g, { expiresAt: 8_000, files: [{ path: 'x', contentLength: 6e6, parts: 2, multipartId: 'mp-1' }] });
      const done = upload(g, { expiresAt: 7_000 });
      const fresh2 = upload(g, { expiresAt: 20_000 });
      for (const u of [late, early, done, fresh2]) await catalog.createUpload(u);
      await catalog.completeUpload(done.id, 6_000);
      expect(await catalog.expiredUploads(10_000, 10)).toEqual([early, late]);
      expect(await catalog.expiredUploads(10_000, 1)).toEqual([early]);
      expect(await catalog.expiredUploads(8_000, 10)).toEqual([]);
      const abandoned = await catalog.abandonUpload(early.id, 11_000);
      expect(abandoned).toEqual({ ...early, abandonedAt: 11_000 });
      expect(await twin.abandonUpload(early.id, 12_000)).toEqual(abandoned);
      expect(await catalog.completeUpload(early.id, 13_000)).toEqual(abandoned);
      expect(await catalog.abandonUpload(done.id, 11_000)).toEqual({ ...done, completedAt: 6_000 });
      expect(await catalog.abandonUpload(randomUUID(), 11_000)).toBeUndefined();
      expect((await twin.expiredUploads(10_000, 10)).map((u) => u.id)).toEqual([late.id]);
    });
  });
