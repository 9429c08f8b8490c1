/**
 * Layers a `docker save` archive holds compressed, which the engine expands itself: Tavern counts
 * what each gzip layer inflates to before passing its bytes on, against the archive's bound
 * (TAVERN_BUILD_MAX_EXPANDED_BYTES), and refuses layers in a compression it cannot count.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import tar from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { BuildImages } from '../../../src/adapters/docker/images.js';
import { LayerMeter } from '../../../src/adapters/docker/layer-meter.js';
import { bytesOf } from '../../docker/saved.js';
import { readAll, scripted } from './scripted-engine.js';

const MiB = 1024 * 1024;

/** `bytes` through one layer's meter, cut into chunks of `size`: what came out, or the error. */
const through = async (meter: LayerMeter, bytes: Buffer, size: number): Promise<{ out: Buffer; error?: Error }> => {
  const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
  const out: Buffer[] = [];
  const error = await pipeline(Readable.from(chunks), meter.layer('blobs/sha256/ab'), async (source: AsyncIterable<Buffer>) => {
    for await (const c of source) out.push(c);
  }).then(() => undefined, (e: unknown) => e as Error);
  return { out: Buffer.concat(out), ...(error === undefined ? {} : { error }) };
};

describe('LayerMeter', () => {
  const zeros = gzipSync(Buffer.alloc(4 * MiB));

  it('passes a gzip layer unchanged when it inflates within the bound, however its bytes are chunked', async () => {
    await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 70_000 }), async (size) => {
      const meter = new LayerMeter(4 * MiB);
      const { out, error } = await through(meter, zeros, size);
      expect(error).toBeUndefined();
      expect(out.equals(zeros)).toBe(true);
      expect(meter.inflated).toBe(4 * MiB);
    }), { numRuns: 20 });
  });

  it('stops a gzip layer that inflates past the bound, having passed on nothing that inflates past it', async () => {
    for (const size of [1, 512, 65_536]) {
      const { out, error } = await through(new LayerMeter(MiB), zeros, size);
      expect(error?.message).toContain('more than 1048576 bytes (1.0 MB) once decompressed, the most this server takes (TAVERN_BUILD_MAX_EXPANDED_BYTES)');
      // What the engine got inflates to no more than the bound (a cut gzip stream: inflate what is there).
      let inflated = 0;
      try {
        inflated = gunzipSync(out, { finishFlush: 2 }).length; // Z_SYNC_FLUSH: a truncated stream inflates as far as it goes
      } catch {
        inflated = 0;
      }
      expect(inflated).toBeLessThanOrEqual(MiB);
    }
  });

  it('shares its bound between the layers of one archive', async () => {
    const meter = new LayerMeter(6 * MiB);
    expect((await through(meter, zeros, 65_536)).error).toBeUndefined();
    expect((await through(meter, zeros, 65_536)).error?.message).toContain('more than 6291456 bytes');
  });

  it('passes files that are not compressed (configs, tar layers) as they are, short ones included', async () => {
    for (const bytes of [Buffer.from('{}'), Buffer.from('x'), Buffer.alloc(0), Buffer.alloc(10_000, 7)]) {
      const meter = new LayerMeter(16);
      const { out, error } = await through(meter, bytes, 3);
      expect(error).toBeUndefined();
      expect(out.equals(bytes)).toBe(true);
      expect(meter.inflated).toBe(0);
    }
  });

  it('refuses a layer compressed in a way it cannot count (zstd, xz, bzip2)', async () => {
    for (const [name, magic] of [['zstd', [0x28, 0xb5, 0x2f, 0xfd]], ['xz', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]], ['bzip2', [0x42, 0x5a, 0x68]]] as const) {
      const { error } = await through(new LayerMeter(MiB), Buffer.concat([Buffer.from(magic), Buffer.alloc(100)]), 2);
      expect(error?.message).toBe(`the layer blobs/sha256/ab is ${name}-compressed, which this server cannot measure before the engine expands it: save the image with gzip or uncompressed layers`);
    }
  });
});

describe('a docker save archive whose gzip layer is a bomb', () => {
  it('is refused before the engine gets more than the bound expands to', async () => {
    const layer = gzipSync(Buffer.alloc(64 * MiB));
    const hex = 'ab'.repeat(32);
    const pack = tar.pack();
    const bytes = bytesOf(pack);
    const put = (name: string, body: Buffer): Promise<void> => new Promise((resolve, reject) => pack.entry({ name, mtime: new Date(0) }, body, (e) => (e ? reject(e) : resolve())));
    await put('manifest.json', Buffer.from(JSON.stringify([{ Config: `blobs/sha256/${hex}`, RepoTags: [], Layers: [`blobs/sha256/${'cd'.repeat(32)}`] }])));
    await put(`blobs/sha256/${hex}`, Buffer.from('{"rootfs":{"type":"layers","diff_ids":[]}}'));
    await put(`blobs/sha256/${'cd'.repeat(32)}`, layer);
    pack.finalize();
    const archive = await bytes;
    expect(archive.length).toBeLessThan(MiB);
    const engine = scripted(async (body, seen) => {
      await readAll(body, seen).catch(() => undefined);
      return `{"stream":"Loaded image ID: sha256:${hex}\\n"}\n`;
    });
    const images = new BuildImages({
      docker: engine.docker, maxExpandedBytes: 16 * MiB,
      source: { build: () => Promise.resolve({ kind: 'docker_image', compression: 'none', open: () => Promise.resolve(Readable.from([archive])) }) },
    });
    await expect(images.ensure('bomb')).rejects.toMatchObject({ failure: 'invalid', message: expect.stringContaining('more than 16777216 bytes (16.8 MB) once decompressed') as unknown });
    expect(engine.seen[0]?.aborted).toBe(true);
    expect(engine.seen[0]?.bytes).toBeLessThan(layer.length);
  });
});
