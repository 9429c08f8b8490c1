/**
 * Decompression bombs: build archives that are small compressed and huge once decompressed, a
 * tar whose one big file is all zeros (LZ4 packs 4 MiB of zeros into 16 KB, gzip 1 MiB into
 * 1 KB), written as they are compressed (nothing of the expanded size is ever held or stored).
 * Test helpers.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { Transform, type Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tar, { type Pack } from 'tar-stream';
import { ociConfig } from './rootfs.js';

const CHUNK = Buffer.alloc(4 * 1024 * 1024);
const HEX = 'ab'.repeat(32);

/** Adds a file of `size` zeros to `pack`, a chunk at a time. */
const zeros = async (pack: Pack, name: string, size: number): Promise<void> => {
  let left = size;
  const sink = pack.entry({ name, size, mode: 0o644, mtime: new Date(0) });
  const done = new Promise<void>((resolve, reject) => sink.on('finish', resolve).on('error', reject));
  while (left > 0) {
    const part = CHUNK.subarray(0, Math.min(left, CHUNK.length));
    left -= part.length;
    if (!sink.write(part)) await new Promise<void>((resolve) => sink.once('drain', () => resolve()));
  }
  sink.end(undefined);
  await done;
};

const text = (pack: Pack, name: string, body: string): Promise<void> =>
  new Promise((resolve, reject) => pack.entry({ name, mode: 0o644, mtime: new Date(0) }, body, (e) => (e ? reject(e) : resolve())));

const dir = (pack: Pack, name: string): Promise<void> =>
  new Promise((resolve, reject) => pack.entry({ name, type: 'directory', mode: 0o755, mtime: new Date(0) }, (e) => (e ? reject(e) : resolve())));

/** How a bomb is made: the archive kind, its compression, and how many zeros its big file holds. */
export interface BombOptions {
  readonly kind: 'oci_bundle' | 'docker_image';
  readonly compression: 'lz4' | 'gzip';
  readonly zeroBytes: number;
}

/** The compressor a bomb is written through: Debian's `lz4 -1 -BD` (the Rivet CLI's frames), or gzip. */
const compressor = (compression: BombOptions['compression']): { input: Writable; output: Readable; done: Promise<void> } => {
  if (compression === 'gzip') {
    const gzip = createGzip();
    return { input: gzip, output: gzip, done: Promise.resolve() };
  }
  const child = spawn('lz4', ['-q', '-1', '-BD', '-c'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const done = new Promise<void>((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`lz4 exited with ${code}`)))));
  return { input: child.stdin, output: child.stdout, done };
};

/**
 * Writes a bomb to `out` and returns how many bytes its tar has (what it decompresses to): an OCI
 * bundle (config.json, rootfs/zeros) or a `docker save` archive (manifest.json, a config, a layer
 * of zeros).
 *
 * @example
 * const expanded = await writeBomb('bomb.tar.lz4', { kind: 'oci_bundle', compression: 'lz4', zeroBytes: 2 ** 30 }); // ≈ 4 MB on disk
 */
export const writeBomb = async (out: string, options: BombOptions): Promise<number> => {
  const pack = tar.pack();
  const { input, output, done } = compressor(options.compression);
  let expanded = 0;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, next) {
      expanded += chunk.length;
      next(null, chunk);
    },
  });
  const written = Promise.all([pipeline(pack as unknown as Readable, count, input), pipeline(output, createWriteStream(out)), done]);
  if (options.kind === 'oci_bundle') {
    await text(pack, 'config.json', ociConfig({ args: ['/zeros'], env: [], cwd: '/', uid: 1000, gid: 1000 }));
    await dir(pack, 'rootfs');
    await zeros(pack, 'rootfs/zeros', options.zeroBytes);
  } else {
    await text(pack, 'manifest.json', JSON.stringify([{ Config: `${HEX}.json`, RepoTags: [], Layers: ['layer/layer.tar'] }]));
    await text(pack, `${HEX}.json`, JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [`sha256:${HEX}`] } }));
    await dir(pack, 'layer');
    await zeros(pack, 'layer/layer.tar', options.zeroBytes);
  }
  pack.finalize();
  await written;
  return expanded;
};
