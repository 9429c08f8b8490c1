import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsBlobs } from '../../../src/adapters/fs/blobs.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

const readAll = async (body: AsyncIterable<Uint8Array>): Promise<string> => {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
};

const exists = (path: string): Promise<boolean> => stat(path).then(() => true, () => false);

describe('FsBlobs', () => {
  let root: string;
  let blobs: FsBlobs;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'tavern-blobs-'));
    blobs = new FsBlobs(root);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const temps = (): Promise<string[]> => readdir(join(root, '.tmp')).catch(() => []);

  it('commits a streamed blob under its key, creating directories', async () => {
    const w = await blobs.begin('a/b/c.txt');
    await w.write(bytes('hello '));
    await w.write(bytes('world'));
    await w.commit();
    expect(await blobs.stat('a/b/c.txt')).toEqual({ size: 11 });
    const r = await blobs.open('a/b/c.txt');
    expect(r?.size).toBe(11);
    expect(r && (await readAll(r))).toBe('hello world');
    expect(await temps()).toEqual([]);
  });

  it('streams large blobs in bounded chunks', async () => {
    const big = new Uint8Array(300_000).map((_, i) => i % 251);
    const w = await blobs.begin('big');
    await w.write(big);
    await w.commit();
    const r = await blobs.open('big');
    const sizes: number[] = [];
    const chunks: Uint8Array[] = [];
    for await (const chunk of r ?? []) {
      sizes.push(chunk.byteLength);
      chunks.push(chunk);
    }
    expect(Math.max(...sizes)).toBeLessThanOrEqual(64 * 1024);
    expect(Buffer.concat(chunks).equals(Buffer.from(big))).toBe(true);
  });

  it('commits an empty blob', async () => {
    const w = await blobs.begin('empty');
    await w.commit();
    expect(await blobs.stat('empty')).toEqual({ size: 0 });
    const r = await blobs.open('empty');
    expect(r && (await readAll(r))).toBe('');
  });

  it('leaves nothing behind when a writer aborts', async () => {
    const w = await blobs.begin('x/y.txt');
    await w.write(bytes('partial'));
    expect(await temps()).toHaveLength(1);
    await w.abort();
    await w.abort();
    expect(await blobs.stat('x/y.txt')).toBeUndefined();
    expect(await blobs.open('x/y.txt')).toBeUndefined();
    expect(await temps()).toEqual([]);
    expect(await exists(join(root, 'x'))).toBe(false);
  });

  it('never shows a partial blob: the old bytes stay until the new ones commit', async () => {
    const first = await blobs.begin('f');
    await first.write(bytes('old old old'));
    await first.commit();

    const second = await blobs.begin('f');
    await second.write(bytes('new'));
    const during = await blobs.open('f');
    expect(await blobs.stat('f')).toEqual({ size: 11 });
    await second.write(bytes(' bytes'));
    await second.commit();

    // A reader opened before the commit keeps reading the old blob, whole.
    expect(during && (await readAll(during))).toBe('old old old');
    const after = await blobs.open('f');
    expect(after && (await readAll(after))).toBe('new bytes');
  });

  it('writes concurrently to distinct temp files', async () => {
    const [a, b] = await Promise.all([blobs.begin('k'), blobs.begin('k')]);
    await a.write(bytes('aaa'));
    await b.write(bytes('bb'));
    await a.commit();
    await b.commit();
    const r = await blobs.open('k');
    expect(r && (await readAll(r))).toBe('bb');
  });

  it('spends a writer on commit or abort', async () => {
    const w = await blobs.begin('spent');
    await w.commit();
    await expect(w.write(bytes('x'))).rejects.toThrow(/spent/);
    await expect(w.commit()).rejects.toThrow(/spent/);
    await w.abort();
    expect(await blobs.stat('spent')).toEqual({ size: 0 });
  });

  it('removes the temp file when a commit fails', async () => {
    const w = await blobs.begin('dir/file');
    await w.write(bytes('x'));
    await writeFile(join(root, 'dir'), 'a file where a directory must go');
    await expect(w.commit()).rejects.toThrow();
    expect(await temps()).toEqual([]);
  });

  it.each([
    '',
    '../escape',
    'a/../../escape',
    'a/..',
    '/etc/passwd',
    'a\\..\\b',
    'a\0b',
    'a//b',
    'a/',
    './a',
    '.tmp/x',
    '.tmp',
    'x'.repeat(5000),
  ])('refuses the key %j', async (key) => {
    await expect(blobs.begin(key)).rejects.toThrow(/Invalid blob key/);
    await expect(blobs.open(key)).rejects.toThrow(/Invalid blob key/);
    await expect(blobs.stat(key)).rejects.toThrow(/Invalid blob key/);
    await expect(blobs.delete(key)).rejects.toThrow(/Invalid blob key/);
  });

  it('accepts dotted names that stay inside the root', async () => {
    for (const key of ['.well-known/x', 'a/.tmp/b', '...', 'a..b/c.']) {
      const w = await blobs.begin(key);
      await w.commit();
      expect(await blobs.stat(key)).toEqual({ size: 0 });
    }
  });

  it('does not open or stat a directory as a blob', async () => {
    const w = await blobs.begin('d/f');
    await w.commit();
    expect(await blobs.stat('d')).toBeUndefined();
    expect(await blobs.open('d')).toBeUndefined();
    expect(await blobs.stat('d/f/g')).toBeUndefined();
    expect(await blobs.open('d/f/g')).toBeUndefined();
  });

  it('deletes one blob, or every blob under a prefix', async () => {
    for (const key of ['p/1', 'p/q/2', 'other']) {
      const w = await blobs.begin(key);
      await w.commit();
    }
    await blobs.delete('other');
    expect(await blobs.stat('other')).toBeUndefined();
    await blobs.delete('p');
    expect(await blobs.stat('p/1')).toBeUndefined();
    expect(await blobs.stat('p/q/2')).toBeUndefined();
    await blobs.delete('missing/too');
  });

  it('releases a reader closed without reading, or left early', async () => {
    const w = await blobs.begin('r');
    await w.write(new Uint8Array(200_000));
    await w.commit();
    const unread = await blobs.open('r');
    await unread?.close();
    await unread?.close();
    const early = await blobs.open('r');
    for await (const _ of early ?? []) break;
    await early?.close();
  });

  it('sweeps temp files older than the cutoff', async () => {
    expect(await blobs.sweep(Date.now())).toBe(0);
    const stale = await blobs.begin('s');
    await stale.write(bytes('left by a crash'));
    const [name] = await temps();
    await utimes(join(root, '.tmp', name ?? ''), 1, 1);
    const fresh = await blobs.begin('t');
    expect(await blobs.sweep(Date.now() - 60_000)).toBe(1);
    expect(await temps()).toHaveLength(1);
    await fresh.abort();
    await stale.abort();
  });

  describe('staged blobs (multipart files assembled in place)', () => {
    const key = 'uploads/u1/assembly/0';
    const writePart = async (part: number, offset: number, text: string, chunk = 3): Promise<void> => {
      const w = await blobs.writePart(key, part, offset, text.length);
      if (w === undefined) throw new Error('no staged blob');
      for (let i = 0; i < text.length; i += chunk) await w.write(bytes(text.slice(i, i + chunk)));
      await w.flush();
      await w.commit();
      await w.abort();
    };

    it('writes parts in place in any order, records each, and publishes by renaming', async () => {
      await blobs.createStaged(key, 12);
      expect(await blobs.stagedParts(key)).toEqual(new Map());
      expect(await blobs.stat(key)).toBeUndefined();
      await writePart(3, 8, 'ijkl');
      await writePart(1, 0, 'abcd');
      await writePart(2, 4, 'efgh', 1);
      expect(await blobs.stagedParts(key)).toEqual(new Map([[1, 4], [2, 4], [3, 4]]));
      expect(await blobs.stat('uploads/u1/files/image.tar')).toBeUndefined();
      expect(await blobs.publishStaged(key, 'uploads/u1/files/image.tar')).toBe(true);
      const r = await blobs.open('uploads/u1/files/image.tar');
      expect(r && (await readAll(r))).toBe('abcdefghijkl');
      // Published: no more writers; a retry (after a crash before the catalog knew) still says so.
      expect(await blobs.writePart(key, 1, 0, 4)).toBeUndefined();
      expect(await blobs.publishStaged(key, 'uploads/u1/files/image.tar')).toBe(true);
      await blobs.delete('uploads/u1/assembly');
      expect(await blobs.publishStaged(key, 'uploads/u1/files/image.tar')).toBe(false);
      expect(await blobs.stagedParts(key)).toBeUndefined();
      expect(await temps()).toEqual([]);
    });

    it('writes a part of many chunks at its offset, and never past the part', async () => {
      await blobs.createStaged(key, 3 * 1024 * 1024);
      const big = Buffer.alloc(2 * 1024 * 1024 + 5, 7);
      const w = await blobs.writePart(key, 2, 1024 * 1024 - 5, big.length);
      if (w === undefined) throw new Error('no staged blob');
      for (let i = 0; i < big.length; i += 65_536) await w.write(big.subarray(i, i + 65_536));
      await expect(w.write(bytes('x'))).rejects.toThrow('past the end');
      await w.flush();
      await w.commit();
      await expect(w.write(bytes('x'))).rejects.toThrow('spent');
      expect(await blobs.publishStaged(key, 'f')).toBe(true);
      expect(await blobs.stat('f')).toEqual({ size: 3 * 1024 * 1024 });
      const raw = await readFile(join(root, 'f'));
      expect(raw.subarray(1024 * 1024 - 5).equals(big)).toBe(true);
      expect(raw.subarray(0, 1024 * 1024 - 5).every((b) => b === 0)).toBe(true);
    });

    it('forgets a part when it is written again, until that writer commits; an aborted writer records nothing', async () => {
      await blobs.createStaged(key, 8);
      await writePart(1, 0, 'abcd');
      await writePart(2, 4, 'efgh');
      const again = await blobs.writePart(key, 1, 0, 4);
      expect(await blobs.stagedParts(key)).toEqual(new Map([[2, 4]]));
      await again?.write(bytes('AB'));
      await again?.abort();
      await again?.abort();
      expect(await blobs.stagedParts(key)).toEqual(new Map([[2, 4]]));
      await writePart(1, 0, 'ABCD');
      expect(await blobs.publishStaged(key, 'f')).toBe(true);
      const r = await blobs.open('f');
      expect(r && (await readAll(r))).toBe('ABCDefgh');
    });

    it('refuses a commit before a flush, and a missing staged blob has no writer', async () => {
      expect(await blobs.writePart('none/here', 1, 0, 1)).toBeUndefined();
      await blobs.createStaged(key, 2);
      const w = await blobs.writePart(key, 1, 0, 2);
      await w?.write(bytes('ab'));
      await expect(w?.commit()).rejects.toThrow('flushed');
      await w?.abort();
      expect(await blobs.stagedParts(key)).toEqual(new Map());
      await expect(blobs.createStaged('../x', 1)).rejects.toThrow('Invalid blob key');
    });
  });
});
