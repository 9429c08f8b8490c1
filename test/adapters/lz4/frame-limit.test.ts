/**
 * decodeLz4's bound on the decompressed size: exactly `maxBytes` decodes, one byte more fails with
 * an Lz4LimitError, whatever the frame options; and a bomb (a frame of zeros, small compressed,
 * huge decompressed) stops at the bound without decoding past it or reading much of its input.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeLz4, Lz4Error, Lz4LimitError } from '../../../src/adapters/lz4/frame.js';
import { lz4, pieces } from './streams.js';

const MiB = 1024 * 1024;

/** What decoding `stream` under `maxBytes` yielded, and the error it ended with (if any). */
const decodeUnder = async (stream: AsyncIterable<Uint8Array>, maxBytes: number): Promise<{ out: Buffer; error: unknown }> => {
  const out: Uint8Array[] = [];
  try {
    for await (const chunk of decodeLz4(stream, { maxBytes })) out.push(Buffer.from(chunk));
    return { out: Buffer.concat(out), error: undefined };
  } catch (error) {
    return { out: Buffer.concat(out), error };
  }
};

/** Data that compresses (runs) or not (a slice of a binary, stored as raw blocks by lz4), of any size up to 300 KB. */
const data = fc.oneof(
  fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.nat(300_000)).map(([unit, n]) => Buffer.concat(Array.from({ length: Math.ceil(n / unit.length) }, () => unit)).subarray(0, n)),
  fc.tuple(fc.nat(3_000_000), fc.nat(300_000)).map(([at, n]) => readFileSync(process.execPath).subarray(at, at + n)),
);

const flags = fc
  .record({ blocks: fc.constantFrom('-BI', '-BD'), size: fc.constantFrom('-B4', '-B5', '-B7'), contentSize: fc.boolean(), frames: fc.constantFrom(1, 2) })
  .map((f) => ({ options: [f.blocks, f.size, ...(f.contentSize ? ['--content-size'] : [])], frames: f.frames }));

describe('decodeLz4 with maxBytes', () => {
  it('decodes data of exactly maxBytes, and refuses it one byte under, having yielded no more than the bound', async () => {
    await fc.assert(
      fc.asyncProperty(data, flags, fc.array(fc.nat(), { maxLength: 6 }), async (input, { options, frames }, cuts) => {
        // Two frames: the bound is on the whole stream, not on each frame.
        const frame = Buffer.concat(Array.from({ length: frames }, () => lz4(input, options)));
        const total = input.length * frames;
        const exact = await decodeUnder(pieces(frame, cuts), total);
        expect(exact.error).toBeUndefined();
        expect(exact.out.equals(Buffer.concat(Array.from({ length: frames }, () => input)))).toBe(true);
        if (total === 0) return;
        const over = await decodeUnder(pieces(frame, cuts), total - 1);
        expect(over.error).toBeInstanceOf(Lz4LimitError);
        expect((over.error as Lz4LimitError).message).toBe(`the LZ4 data decompresses to more than ${total - 1} bytes`);
        expect(over.out.length).toBeLessThanOrEqual(total - 1);
      }),
      { numRuns: 60 },
    );
  });

  it('is an Lz4Error (callers that refuse bad LZ4 data refuse this too), and maxBytes 0 takes only empty frames', async () => {
    expect((await decodeUnder(pieces(lz4(Buffer.from('x'), [])), 0)).error).toBeInstanceOf(Lz4Error);
    expect(await decodeUnder(pieces(lz4(Buffer.alloc(0), [])), 0)).toEqual({ out: Buffer.alloc(0), error: undefined });
    await expect(decodeUnder(pieces(lz4(Buffer.alloc(0), [])), -1)).resolves.toMatchObject({ error: expect.any(RangeError) as unknown });
  });

  it('stops a bomb at the bound: a terabyte of zeros (255:1) is refused after decoding at most the bound, reading a few blocks of it', async () => {
    // One 4 MiB block of zeros, compressed (≈ 16 KB), sent 262 144 times: 1 TiB once decompressed.
    const frame = lz4(Buffer.alloc(4 * MiB), ['-BI', '-B7', '--no-frame-crc']);
    const header = frame.subarray(0, 7);
    const block = frame.subarray(7, frame.length - 4);
    expect(block.length).toBeLessThan(17_000);
    let sent = 0;
    async function* bomb(): AsyncGenerator<Uint8Array> {
      yield header;
      for (let i = 0; i < 262_144; i++) {
        sent += 1;
        yield block;
        await tick(); // as a socket would, between chunks
      }
      yield Buffer.alloc(4);
    }
    const limit = 64 * MiB + 123;
    const { out, error } = await decodeUnder(bomb(), limit);
    expect(error).toBeInstanceOf(Lz4LimitError);
    expect(out.length).toBe(64 * MiB); // sixteen whole blocks fit; the seventeenth would cross the bound
    expect(sent).toBeLessThanOrEqual(18);
  });

  it('refuses a frame that declares a larger content size before decoding a byte of it', async () => {
    // The CLI declares the size of a file (not of its standard input): a sparse file of zeros.
    const dir = await mkdtemp(join(tmpdir(), 'tavern-lz4-'));
    const zeros = join(dir, 'zeros');
    await writeFile(zeros, '');
    await truncate(zeros, 256 * MiB);
    const run = spawnSync('lz4', ['-q', '-c', '-1', '-BD', '-B7', '--content-size', zeros], { maxBuffer: 1 << 30 });
    await rm(dir, { recursive: true, force: true });
    const frame = run.stdout;
    expect((frame[4] as number) & 0x08).toBe(0x08); // FLG: content size present
    expect(frame.length).toBeLessThan(1.1 * MiB);
    let pulled = 0;
    async function* counted(): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < frame.length; at += 4096) {
        pulled += 1;
        yield frame.subarray(at, at + 4096);
        await tick();
      }
    }
    const { out, error } = await decodeUnder(counted(), 16 * MiB);
    expect(error).toBeInstanceOf(Lz4LimitError);
    expect(out.length).toBe(0);
    expect(pulled).toBe(1);
  });
});
