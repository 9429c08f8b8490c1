import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { simCommand } from '../../src/sim/cli.js';

const DOC = new URL('../../docs/simulator.md', import.meta.url);

/** Shell words of a documented command line: spaces split, single quotes group. */
const words = (line: string): string[] => [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');

describe('docs/simulator.md: the sweep example', () => {
  it('prints the table and draws the chart the page shows', async () => {
    const text = await readFile(DOC, 'utf8');
    const example = /```sh\n(npx tavern sim cold-start --sweep [^\n]+)\n```\n\n```text\n([\s\S]*?)\n```/.exec(text);
    if (example === null) throw new Error('docs/simulator.md lost its sweep example');
    const [, command = '', table = ''] = example;
    const args = words(command).slice(3); // after `npx tavern sim`
    const outAt = args.indexOf('--out');
    const dir = await mkdtemp(join(tmpdir(), 'tavern-readme-'));
    args[outAt + 1] = dir;
    const out: string[] = [];
    const code = await simCommand(args, { stdout: (s) => void out.push(s), stderr: () => undefined, tty: false, cwd: process.cwd(), now: () => 0 });
    expect(code).toBe(0);
    expect(out[0]).toBe(table);
    const chart = await readFile(join(dir, 'sweep.svg'), 'utf8');
    expect(chart).toBe(await readFile(new URL('./readme/sweep.svg', import.meta.url), 'utf8'));
  }, 120_000);
});
