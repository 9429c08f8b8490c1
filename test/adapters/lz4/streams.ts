/**
 * LZ4 test data: Debian's lz4 CLI as the reference encoder, and byte streams cut into pieces the
 * way a socket or a file delivers them. Test helpers.
 */
import { spawnSync } from 'node:child_process';
import { setImmediate as tick } from 'node:timers/promises';

/**
 * Debian's lz4 CLI compressing `input` with `flags` (the reference encoder).
 *
 * @example
 * const frame = lz4(Buffer.alloc(1 << 20), ['-1', '-BD']);
 */
export const lz4 = (input: Uint8Array, flags: readonly string[]): Buffer => {
  const run = spawnSync('lz4', ['-q', '-c', ...flags], { input, maxBuffer: 1 << 30 });
  if (run.status !== 0) throw new Error(`lz4 ${flags.join(' ')} failed: ${run.error?.message ?? run.stderr.toString()}`);
  return run.stdout;
};

/**
 * `bytes` as a stream cut at `cuts` (offsets, any order), yielding to the event loop between pieces.
 *
 * @example
 * for await (const piece of pieces(frame, [3, 100])) … // frame[0..3), frame[3..100), frame[100..)
 */
export async function* pieces(bytes: Uint8Array, cuts: readonly number[] = []): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (const cut of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
    yield bytes.subarray(at, cut);
    at = cut;
    await tick(); // as a socket or file would, between chunks
  }
  yield bytes.subarray(at);
}
