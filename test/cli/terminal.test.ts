/** Programs' colours and cursor codes reach a terminal as they are and a log or pipe without them, even split across chunks. */
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { forDestination, stripAnsi } from '../../src/cli/terminal.js';

const ESC = '\u001b';
const colored = `${ESC}[1m${ESC}[32mnpm${ESC}[0m run build ${ESC}]0;title${ESC}\\done${ESC}[2K${ESC}[1G\n`;

const through = async (chunks: readonly string[], tty: boolean): Promise<string> => {
  const destination = Object.assign(new PassThrough(), { isTTY: tty });
  const stream = forDestination(destination);
  const out: Buffer[] = [];
  stream.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise((resolve) => stream.on('end', resolve));
  for (const c of chunks) stream.write(Buffer.from(c));
  stream.end();
  await ended;
  return Buffer.concat(out).toString('utf8');
};

describe('terminal output', () => {
  it('removes CSI, OSC and two-byte escapes', () => {
    expect(stripAnsi(colored)).toBe('npm run build done\n');
  });

  it('keeps everything for a terminal, and strips a sequence cut anywhere across chunks for a pipe', async () => {
    expect(await through([colored], true)).toBe(colored);
    await fc.assert(fc.asyncProperty(fc.array(fc.nat(colored.length), { maxLength: 6 }), async (cuts) => {
      const at = [...new Set(cuts)].sort((a, b) => a - b);
      const chunks = [0, ...at].map((start, i) => colored.slice(start, at[i] ?? colored.length));
      expect(await through(chunks, false)).toBe('npm run build done\n');
    }));
  });
});
