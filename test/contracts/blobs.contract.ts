/**
 * The contract every {@link Blobs} adapter passes (local disk, S3): writes are invisible until
 * committed and then whole at once, aborts leave nothing, readers stream (whole or a range) the
 * bytes as they were when opened, deletes take a key and everything under it, bad keys throw.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Blobs } from '../../src/io/blobs.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

const readAll = async (body: AsyncIterable<Uint8Array>): Promise<Buffer> => {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
};

const put = async (blobs: Blobs, key: string, content: string | Uint8Array): Promise<void> => {
  const w = await blobs.begin(key);
  await w.write(typeof content === 'string' ? bytes(content) : content);
  await w.commit();
};

export function blobsContract(name: string, make: () => Promise<Blobs>): void {
  describe(`Blobs contract: ${name}`, () => {
    it('shows nothing until commit, then the whole blob, replacing an earlier one', async () => {
      const blobs = await make();
      const w = await blobs.begin('a/b/c.txt');
      await w.write(bytes('hello '));
      await w.write(bytes('world'));
      expect(await blobs.stat('a/b/c.txt')).toBeUndefined();
      expect(await blobs.open('a/b/c.txt')).toBeUndefined();
      await w.commit();
      expect(await blobs.stat('a/b/c.txt')).toEqual({ size: 11 });
      const r = await blobs.open('a/b/c.txt');
      expect(r?.size).toBe(11);
      expect(r && (await readAll(r)).toString()).toBe('hello world');
      await put(blobs, 'a/b/c.txt', 'new');
      const again = await blobs.open('a/b/c.txt');
      expect(again && (await readAll(again)).toString()).toBe('new');
      await expect(w.write(bytes('x'))).rejects.toThrow();
    });

    it('leaves nothing after an abort, and abort is safe to repeat and after commit', async () => {
      const blobs = await make();
      const w = await blobs.begin('gone.txt');
      await w.write(bytes('partial'));
      await w.abort();
      await w.abort();
      expect(await blobs.stat('gone.txt')).toBeUndefined();
      const c = await blobs.begin('kept.txt');
      await c.write(bytes('k'));
      await c.commit();
      await c.abort();
      expect(await blobs.stat('kept.txt')).toEqual({ size: 1 });
    });

    it('commits an empty blob', async () => {
      const blobs = await make();
      const w = await blobs.begin('empty');
      await w.commit();
      expect(await blobs.stat('empty')).toEqual({ size: 0 });
      const r = await blobs.open('empty');
      expect(r && (await readAll(r)).length).toBe(0);
    });

    it('streams a blob larger than any buffer both ways, intact', async () => {
      const blobs = await make();
      const chunk = randomBytes(1024 * 1024);
      const sha = createHash('sha256');
      const w = await blobs.begin('big.bin');
      for (let i = 0; i < 20; i++) {
        chunk[0] = i;
        sha.update(chunk);
        await w.write(chunk);
      }
      await w.commit();
      expect(await blobs.stat('big.bin')).toEqual({ size: 20 * 1024 * 1024 });
      const r = await blobs.open('big.bin');
      const back = createHash('sha256');
      let largest = 0;
      if (r !== undefined) {
        for await (const c of r) {
          back.update(c);
          largest = Math.max(largest, c.byteLength);
        }
      }
      expect(back.digest('hex')).toBe(sha.digest('hex'));
      expect(largest).toBeLessThanOrEqual(8 * 1024 * 1024);
    });

    it('reads a byte range', async () => {
      const blobs = await make();
      await put(blobs, 'r.txt', '0123456789');
      const r = await blobs.open('r.txt', { start: 2, end: 5 });
      expect(r?.size).toBe(4);
      expect(r && (await readAll(r)).toString()).toBe('2345');
      const last = await blobs.open('r.txt', { start: 9, end: 9 });
      expect(last && (await readAll(last)).toString()).toBe('9');
      await expect(blobs.open('r.txt', { start: 5, end: 10 })).rejects.toThrow();
      expect(await blobs.open('missing.txt', { start: 0, end: 1 })).toBeUndefined();
    });

    it('releases a reader closed without reading', async () => {
      const blobs = await make();
      await put(blobs, 'c.txt', 'abc');
      const r = await blobs.open('c.txt');
      await r?.close();
      await r?.close();
      expect(await blobs.stat('c.txt')).toEqual({ size: 3 });
    });

    it('deletes a key and everything under it, and nothing else', async () => {
      const blobs = await make();
      for (const key of ['d/x', 'd/y/z', 'd2/x', 'dd']) await put(blobs, key, key);
      await blobs.delete('d');
      expect(await blobs.stat('d/x')).toBeUndefined();
      expect(await blobs.stat('d/y/z')).toBeUndefined();
      expect(await blobs.stat('d2/x')).toEqual({ size: 4 });
      expect(await blobs.stat('dd')).toEqual({ size: 2 });
      await blobs.delete('dd');
      expect(await blobs.stat('dd')).toBeUndefined();
      await blobs.delete('never/was');
    });

    it('throws for keys that could escape the store', async () => {
      const blobs = await make();
      for (const key of ['', '/abs', 'a/../b', './a', 'a//b', 'a\\b', 'a\0b', '..', 'a/.']) {
        await expect(blobs.begin(key), JSON.stringify(key)).rejects.toThrow();
        await expect(blobs.open(key), JSON.stringify(key)).rejects.toThrow();
        await expect(blobs.stat(key), JSON.stringify(key)).rejects.toThrow();
        await expect(blobs.delete(key), JSON.stringify(key)).rejects.toThrow();
      }
    });
  });
}
