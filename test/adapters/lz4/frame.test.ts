import { readFileSync } from 'node:fs';
import { setImmediate as tick } from 'node:timers/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import xxhash from 'xxhash-wasm';
import { decodeLz4, Lz4Error } from '../../../src/adapters/lz4/frame.js';
import { lz4, pieces } from './streams.js';

const decode = async (stream: AsyncIterable<Uint8Array>): Promise<Buffer> => {
  const out: Uint8Array[] = [];
  for await (const chunk of decodeLz4(stream)) out.push(chunk);
  return Buffer.concat(out);
};

const lz4Error = async (stream: AsyncIterable<Uint8Array>): Promise<Lz4Error> => {
  try {
    await decode(stream);
  } catch (e) {
    if (e instanceof Lz4Error) return e;
    throw e;
  }
  throw new Error('decoded without an error');
};

/** Compressible bytes: runs of short random chunks, some repeated many times. */
const data = fc
  .array(fc.record({ chunk: fc.uint8Array({ minLength: 1, maxLength: 48 }), times: fc.oneof(fc.constant(1), fc.nat(3000)) }), { maxLength: 40 })
  .map((runs) => Buffer.concat(runs.flatMap(({ chunk, times }) => Array.from({ length: Math.max(times, 1) }, () => chunk))).subarray(0, 600_000));

/** The lz4 CLI's frame options, as a test picks them. */
const flags = fc
  .record({
    level: fc.constantFrom('-1', '-3', '-9', '--fast=5'),
    blocks: fc.constantFrom('-BI', '-BD'),
    size: fc.constantFrom('-B4', '-B5', '-B6', '-B7'),
    blockChecksum: fc.boolean(),
    contentSize: fc.boolean(),
    contentChecksum: fc.boolean(),
  })
  .map((f) => [f.level, f.blocks, f.size, ...(f.blockChecksum ? ['-BX'] : []), ...(f.contentSize ? ['--content-size'] : []), ...(f.contentChecksum ? [] : ['--no-frame-crc'])]);

describe('decodeLz4 against the lz4 CLI', () => {
  it('round-trips any data, any frame options, however the stream is cut', async () => {
    await fc.assert(
      fc.asyncProperty(data, flags, fc.array(fc.nat(), { maxLength: 12 }), async (input, options, cuts) => {
        const frame = lz4(input, options);
        expect((await decode(pieces(frame, cuts))).equals(input)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('decodes linked blocks whose matches reach back into earlier blocks (a real binary, 64 KiB blocks)', async () => {
    const input = readFileSync(process.execPath).subarray(0, 3_000_000);
    for (const options of [['-1', '-BD', '-B4'], ['-9', '-BD', '-B4', '-BX', '--content-size'], ['-1', '-BI', '-B7']]) {
      expect((await decode(pieces(lz4(input, options), [1, 5, 70_000, 70_001, 1_000_000]))).equals(input), options.join(' ')).toBe(true);
    }
  });

  it('reads concatenated frames and skips skippable frames', async () => {
    const a = Buffer.from('first frame. '.repeat(1000));
    const b = Buffer.from('second frame! '.repeat(900));
    const skippable = Buffer.concat([Buffer.from([0x5a, 0x2a, 0x4d, 0x18, 5, 0, 0, 0]), Buffer.from('hello')]);
    const stream = Buffer.concat([lz4(a, ['-BD']), skippable, lz4(b, ['-BI'])]);
    expect((await decode(pieces(stream, [3, 9, 100]))).toString()).toBe(a.toString() + b.toString());
  });

  it('decodes an empty file, and refuses an empty stream', async () => {
    expect((await decode(pieces(lz4(new Uint8Array(0), ['-BD'])))).length).toBe(0);
    expect((await lz4Error(pieces(new Uint8Array(0)))).message).toMatch(/empty/);
  });

  it('streams: it yields its first block long before the source is read, in chunks of at most the block size', async () => {
    const input = Buffer.alloc(40 * 1024 * 1024, 7);
    const frame = lz4(input, ['-1', '-BD', '-B7']);
    let pulled = 0;
    async function* slowly(): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < frame.length; at += 1024) {
        pulled += 1;
        yield frame.subarray(at, at + 1024);
        if (pulled % 256 === 0) await tick();
      }
    }
    let total = 0;
    let pulledAtFirst = -1;
    for await (const chunk of decodeLz4(slowly())) {
      if (pulledAtFirst < 0) pulledAtFirst = pulled;
      expect(chunk.byteLength).toBeLessThanOrEqual(4 * 1024 * 1024);
      total += chunk.byteLength;
    }
    expect(total).toBe(input.length);
    expect(pulledAtFirst).toBeLessThan(pulled / 4);
  });
});

describe('decodeLz4 on broken input', () => {
  it('fails with a "truncated" Lz4Error wherever the stream is cut', async () => {
    const input = Buffer.from(readFileSync(process.execPath).subarray(0, 300_000));
    const frames = [lz4(input, ['-1', '-BD', '-B4']), lz4(input, ['-1', '-BI', '-B4', '--no-frame-crc'])];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...frames), fc.nat(), async (frame, cut) => {
        const error = await lz4Error(pieces(frame.subarray(0, cut % frame.length)));
        expect(error.message).toMatch(cut % frame.length === 0 ? /empty/ : /truncated/);
      }),
      { numRuns: 80 },
    );
  });

  it('fails with an Lz4Error for any one corrupted byte of a checksummed frame, unless the bytes it decodes are the original ones', async () => {
    const input = Buffer.from(readFileSync(process.execPath).subarray(0, 200_000));
    const frame = lz4(input, ['-1', '-BD', '-B4']);
    let intact = 0;
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: frame.length - 1 }), fc.integer({ min: 1, max: 255 }), async (at, xor) => {
        const bad = Buffer.from(frame);
        bad[at] = (bad[at] as number) ^ xor;
        // A corrupted match offset inside a run of equal bytes (the binary has long runs of zeros) can
        // copy the very same bytes: the content checksum then matches, and so must the output.
        const decoded = await decode(pieces(bad)).catch((e: unknown) => {
          if (e instanceof Lz4Error) return undefined;
          throw e;
        });
        if (decoded !== undefined) {
          expect(decoded.equals(input)).toBe(true);
          intact += 1;
        }
      }),
      { numRuns: 150 },
    );
    // Such corruptions are rare: most corrupted bytes must be refused.
    expect(intact).toBeLessThan(15);
  });

  it('never reads or writes out of bounds on random block data: it decodes or throws an Lz4Error', async () => {
    const hashes = await xxhash();
    const header = (flg: number, bd: number): Buffer => Buffer.from([0x04, 0x22, 0x4d, 0x18, flg, bd, (hashes.h32Raw(Uint8Array.from([flg, bd]), 0) >>> 8) & 0xff]);
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(fc.uint8Array({ minLength: 1, maxLength: 300 }), { minLength: 1, maxLength: 4 }), async (linked, blocks) => {
        const flg = linked ? 0x40 : 0x60; // version 01, no checksums: nothing catches corruption but the block decoder
        const parts = blocks.flatMap((b) => [Buffer.from(Uint32Array.of(b.length).buffer), Buffer.from(b)]);
        try {
          await decode(pieces(Buffer.concat([header(flg, 0x40), ...parts, Buffer.alloc(4)])));
        } catch (e) {
          expect(e).toBeInstanceOf(Lz4Error);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('says what is wrong: not LZ4, legacy format, dictionary, oversized block, garbage after a frame', async () => {
    const hashes = await xxhash();
    const withChecksum = (descriptor: number[]): Buffer =>
      Buffer.from([0x04, 0x22, 0x4d, 0x18, ...descriptor, (hashes.h32Raw(Uint8Array.from(descriptor), 0) >>> 8) & 0xff]);
    expect((await lz4Error(pieces(Buffer.from('just a tar file')))).message).toMatch(/not LZ4-compressed/);
    expect((await lz4Error(pieces(lz4(Buffer.from('x'.repeat(100)), ['-l'])))).message).toMatch(/legacy/);
    expect((await lz4Error(pieces(withChecksum([0x61, 0x40, 1, 2, 3, 4])))).message).toMatch(/dictionary/);
    expect((await lz4Error(pieces(Buffer.concat([withChecksum([0x60, 0x40]), Buffer.from([0x01, 0x00, 0x02, 0x00])])))).message).toMatch(/exceeds the frame's block size/);
    expect((await lz4Error(pieces(Buffer.concat([lz4(Buffer.from('ok'), []), Buffer.from('trailing')])))).message).toMatch(/after a frame/);
    expect((await lz4Error(pieces(Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x00])))).message).toMatch(/header checksum/);
  });
});
