import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { resolvesWithin, scanImports, scanTokens, stripComments, tsFiles } from './scan.js';

const CORE = fileURLToPath(new URL('../../src/core', import.meta.url));

/** The only packages the core may import (STYLE.md: immer; date-fns, pure functions only). */
const CORE_PACKAGES: ReadonlySet<string> = new Set(['immer', 'date-fns']);

const coreAllows = (root: string) => (spec: string, file: string): boolean => CORE_PACKAGES.has(spec) || resolvesWithin(spec, file, root);

/** Clock, randomness, process, timers, console and network: none of them in the core. */
const IMPURE_TOKENS = ['Date.now(', 'Math.random(', 'new Date()', 'process.', 'setTimeout(', 'setInterval(', 'console.', 'fetch('] as const;

describe('the core is pure', () => {
  it('has source files to check', () => {
    expect(tsFiles(CORE).length).toBeGreaterThan(20);
  });

  it('imports only itself, immer and date-fns', () => {
    expect(scanImports(CORE, coreAllows(CORE))).toEqual([]);
  });

  it('reads no clock, randomness, process, timer, console or network outside comments', () => {
    expect(scanTokens(CORE, IMPURE_TOKENS)).toEqual([]);
  });
});

/**
 * The simulator's engine and charts are deterministic on any machine: they may import only the
 * core and themselves (their randomness is the core's seeded generator).
 */
describe.each(['engine', 'charts'])('src/sim/%s is deterministic', (dir) => {
  const root = fileURLToPath(new URL(`../../src/sim/${dir}`, import.meta.url));
  const allow = (spec: string, file: string): boolean => resolvesWithin(spec, file, root) || resolvesWithin(spec, file, CORE);

  it('imports only itself and the core', () => {
    expect(tsFiles(root).length).toBeGreaterThan(3);
    expect(scanImports(root, allow)).toEqual([]);
  });

  it('reads no clock, randomness, process, timer, console or network', () => {
    expect(scanTokens(root, IMPURE_TOKENS)).toEqual([]);
  });
});

/**
 * The services sequence load → decide → persist → perform through the io interfaces (STYLE.md's
 * layout): they import the core, io and each other, never the server, adapters or simulator, and
 * read no clock or randomness of their own. `node:crypto` is allowed: the uploads service signs its
 * URLs with an HMAC.
 */
describe('src/services reach the world only through io', () => {
  const root = fileURLToPath(new URL('../../src/services', import.meta.url));
  const io = fileURLToPath(new URL('../../src/io', import.meta.url));
  const allow = (spec: string, file: string): boolean =>
    spec === 'node:crypto' || [root, CORE, io].some((dir) => resolvesWithin(spec, file, dir));

  it('imports only itself, the core, io and node:crypto', () => {
    expect(tsFiles(root).length).toBeGreaterThan(10);
    expect(scanImports(root, allow)).toEqual([]);
  });

  it('reads no clock, randomness, process, timer, console or network', () => {
    expect(scanTokens(root, IMPURE_TOKENS)).toEqual([]);
  });
});

describe('the scanner', () => {
  const root = mkdtempSync(join(tmpdir(), 'tavern-purity-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const core = join(root, 'core');
  mkdirSync(join(core, 'nested'), { recursive: true });
  writeFileSync(join(root, 'outside.ts'), 'export const outside = 1;\n');
  writeFileSync(join(core, 'ok.ts'), "import { produce } from 'immer';\nexport const ok = produce;\n");
  writeFileSync(
    join(core, 'bad.ts'),
    [
      "import fs from 'node:fs';", // 1
      "import { outside } from '../outside.js';", // 2
      "import { ok } from './ok.js';", // 3
      "import type { X } from 'lodash';", // 4
      "export * from './nested/deep.js';", // 5
      '// Date.now() in a line comment is fine, and so is: import y from "yargs"', // 6
      '/* Math.random() in a block comment is fine */ const t = Date.now();', // 7
      '/** JSDoc mentioning process.env and setTimeout( is fine */', // 8
      "const url = 'http://example.com'; console.log(url, fs, outside, ok, t);", // 9
      'const s = `a // b ${url} // c`; void fetch(s); // setInterval( in a trailing comment is fine', // 10
      "export const later = async () => import('node:child_process');", // 11
      'export type Y = X;', // 12
    ].join('\n'),
  );
  writeFileSync(join(core, 'nested', 'deep.ts'), "import { ok } from '../ok.js';\nexport const when = new Date();\nexport const deep = ok;\n");

  it('catches imports that leave the directory or are not allowed', () => {
    expect(scanImports(core, coreAllows(core))).toEqual([
      { file: 'bad.ts', line: 1, what: 'node:fs' },
      { file: 'bad.ts', line: 2, what: '../outside.js' },
      { file: 'bad.ts', line: 4, what: 'lodash' },
      { file: 'bad.ts', line: 11, what: 'node:child_process' },
    ]);
  });

  it('catches impure tokens in code but not in comments', () => {
    const found = scanTokens(core, IMPURE_TOKENS);
    expect(found).toEqual(
      expect.arrayContaining([
        { file: 'bad.ts', line: 7, what: 'Date.now(' },
        { file: 'bad.ts', line: 9, what: 'console.' },
        { file: 'bad.ts', line: 10, what: 'fetch(' },
        { file: join('nested', 'deep.ts'), line: 2, what: 'new Date()' },
      ]),
    );
    expect(found).toHaveLength(4);
  });

  it('blanks comments only, keeping line structure', () => {
    const src = 'const a = 1; // x\n/* y\n z */ const b = "//not a comment";\n';
    const out = stripComments(src);
    expect(out).toHaveLength(src.length);
    expect(out.split('\n')).toHaveLength(src.split('\n').length);
    expect(out).toContain('const a = 1;');
    expect(out).toContain('const b = "//not a comment";');
    expect(out).not.toContain('x');
    expect(out).not.toMatch(/[yz]/);
  });

  it('resolves relative specifiers against the importing file', () => {
    expect(resolvesWithin('../world.js', 'src/core/lobby/flags.ts', 'src/core')).toBe(true);
    expect(resolvesWithin('./flags.js', 'src/core/lobby/lifecycle.ts', 'src/core')).toBe(true);
    expect(resolvesWithin('../io/clock.js', 'src/core/tick.ts', 'src/core')).toBe(false);
    expect(resolvesWithin('../core-evil/x.js', 'src/core/tick.ts', 'src/core')).toBe(false);
    expect(resolvesWithin('immer', 'src/core/tick.ts', 'src/core')).toBe(false);
  });
});
