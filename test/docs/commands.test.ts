/**
 * Every command in README.md, CONTRIBUTING.md and docs/*.md is covered, so none goes stale
 * silently: each line of their ```sh blocks has an entry in test/docs/coverage.ts, and the entry
 * holds. Lines covered `here` run for real (the simulator's, in a sandbox); lines another test
 * runs are in that test verbatim; lines no test can run have their reason and what can be checked
 * is checked. Every `tavern` line parses against the real CLI with its exact flags, every `npm`
 * line names a real script (and a benchmark with flags it reads). Also: the README's Rivet SDK
 * example type-checks against the real client, the pages' relative links and anchors lead
 * somewhere, the configuration page names every `TAVERN_*` variable the code reads (and no other),
 * and the README stays a guide of at most 300 lines.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simCommand } from '../../src/sim/cli.js';
import { parseTavern } from './cli-parse.js';
import { COVERAGE } from './coverage.js';
import { docPages, ROOT, shellCommands, words, type DocCommand, type Page } from './extract.js';

const pages = docPages();
const commands = pages.flatMap(shellCommands);
const where = (c: DocCommand): string => `${c.page}:${c.line}: ${c.command}`;

/** Each `tavern` invocation in a command (after `npx`, inside `$(…)`, between `&&`), as its words after `tavern`, placeholders filled. */
const tavernCalls = (command: string): string[][] =>
  command
    .split('&&')
    .map((part) => part.trim().replace(/^export \w+=\$\((.*)\)$/, '$1'))
    .map((part) => words(part).map((w) => (/^<.+>$/.test(w) ? 'x' : w)))
    .map((w) => (w[0] === 'npx' ? w.slice(1) : w))
    .filter((w) => w[0] === 'tavern')
    .map((w) => w.slice(1));

/** Each `npm …` invocation in a command: its words after `npm`. */
const npmCalls = (command: string): string[][] =>
  command.split('&&').map((part) => words(part.trim())).flatMap((w) => {
    const at = w.indexOf('npm');
    return at >= 0 && w.slice(0, at).every((x) => /^\w+=/.test(x)) ? [w.slice(at + 1)] : [];
  });

describe('every documented command is covered', () => {
  it('the pages have commands, and each has an entry in the coverage table', () => {
    expect(commands.length).toBeGreaterThan(40);
    expect(commands.filter((c) => COVERAGE[c.command] === undefined).map(where)).toEqual([]);
  });

  it('the coverage table names no command the pages no longer have', () => {
    const shown = new Set(commands.map((c) => c.command));
    expect(Object.keys(COVERAGE).filter((c) => !shown.has(c))).toEqual([]);
  });

  it('a command another test runs is in that test verbatim (or as the argv it passes to the CLI, or read from the page itself)', () => {
    const missing = commands.flatMap((c) => {
      const cover = COVERAGE[c.command];
      if (cover?.by !== 'test') return [];
      const file = join(ROOT, cover.file);
      if (!existsSync(file)) return [`${where(c)}: ${cover.file} does not exist`];
      const source = readFileSync(file, 'utf8');
      if (cover.readsPage === true) return source.includes(c.page) && source.includes(words(c.command).slice(0, 4).join(' ')) ? [] : [`${where(c)}: ${cover.file} does not read it from ${c.page}`];
      const argv = tavernCalls(c.command)[0]?.map((w) => `'${w}'`).join(', ');
      const held = cover.argv === true ? argv !== undefined && source.includes(argv) : source.includes(c.command);
      return held ? [] : [`${where(c)}: not in ${cover.file}${cover.argv === true ? ` as ${argv ?? '(no tavern call)'}` : ''}`];
    });
    expect(missing).toEqual([]);
  });

  it('a command no test can run says why, and what can be checked holds', () => {
    const failed = commands.flatMap((c) => {
      const cover = COVERAGE[c.command];
      if (cover?.by !== 'check') return [];
      if (cover.why.length < 10) return [`${where(c)}: no reason given`];
      try {
        cover.check();
        return [];
      } catch (e) {
        return [`${where(c)}: ${(e as Error).message}`];
      }
    });
    expect(failed).toEqual([]);
  });

  it('every tavern line parses against the real CLI, with its exact flags and arguments', async () => {
    const calls = commands.flatMap((c) => tavernCalls(c.command).map((args) => ({ c, args })));
    expect(calls.length).toBeGreaterThan(25);
    const refused: string[] = [];
    for (const { c, args } of calls) {
      const parsed = await parseTavern(args);
      if (parsed.error !== undefined) refused.push(`${where(c)}: ${parsed.error}`);
    }
    expect(refused).toEqual([]);
  });

  it('every npm line names a script of package.json; a benchmark is registered and reads the flags given', () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const benches = [...readFileSync(join(ROOT, 'bench/run.ts'), 'utf8').matchAll(/^ {2}'?([a-z-]+)'?: async \(\) =>/gm)].map((m) => m[1] ?? '');
    const benchSource = (name: string): string =>
      readdirSync(join(ROOT, 'bench')).filter((f) => f.startsWith(`${name.split('-')[0] ?? name}`) && f.endsWith('.ts')).map((f) => readFileSync(join(ROOT, 'bench', f), 'utf8')).join('\n');
    const wrong = commands.flatMap((c) =>
      npmCalls(c.command).flatMap((args) => {
        const [verb, script, dashes, bench, ...rest] = args;
        if (verb === 'ci') return [];
        const name = verb === 'run' ? script : verb;
        if (name === undefined || scripts[name] === undefined) return [`${where(c)}: no script ${name ?? '(none)'}`];
        if (name !== 'bench') return [];
        if (dashes !== '--' || bench === undefined || !benches.includes(bench)) return [`${where(c)}: no benchmark ${bench ?? '(none)'} in bench/run.ts`];
        const source = benchSource(bench);
        return rest.filter((w) => !/^\d/.test(w) && !w.includes(',')).filter((w) => !source.includes(`'${w}'`)).map((w) => `${where(c)}: bench ${bench} reads no ${w}`);
      }),
    );
    expect(wrong).toEqual([]);
  });
});

describe('the commands covered here run', () => {
  let sandbox: string;
  beforeAll(async () => {
    // A working folder that sees the repository's sources where the pages' commands name them.
    sandbox = await mkdtemp(join(tmpdir(), 'tavern-docs-'));
    await symlink(join(ROOT, 'src'), join(sandbox, 'src'));
  });
  afterAll(() => rm(sandbox, { recursive: true, force: true }));

  /** Runs one documented line: `tavern sim …` in this process (the CLI's own function), anything else with sh. */
  const runHere = async (command: string): Promise<string> => {
    const w = words(command);
    const args = w[0] === 'npx' ? w.slice(2) : w.slice(1);
    if ((w[0] === 'tavern' || (w[0] === 'npx' && w[1] === 'tavern')) && args[0] === 'sim') {
      const out: string[] = [];
      const err: string[] = [];
      const code = await simCommand(args.slice(1), { stdout: (s) => void out.push(s), stderr: (s) => void err.push(s), tty: false, cwd: sandbox, now: () => performance.now() });
      if (code !== 0) throw new Error(`${command}: exit ${code}\n${err.join('')}${out.join('\n')}`);
      return out.join('\n');
    }
    if (w.includes('tavern')) throw new Error(`${command}: only tavern sim runs here; cover it with a test that has a server`);
    return (await promisify(execFile)('sh', ['-c', command], { cwd: sandbox })).stdout;
  };

  it.each(pages.map((p) => [p.path, p] as const).filter(([, p]) => shellCommands(p).some((c) => COVERAGE[c.command]?.by === 'here')))('%s: its lines covered here, in order', async (_path, page: Page) => {
    for (const c of shellCommands(page).filter((x) => COVERAGE[x.command]?.by === 'here')) {
      const out = await runHere(c.command);
      if (c.command.includes('--json')) expect(JSON.parse(out)).toMatchObject({ violations: [] });
      else expect(out, where(c)).toBeTypeOf('string');
      const outDir = /--out (\S+)/.exec(c.command)?.[1];
      if (outDir !== undefined) expect(existsSync(join(sandbox, outDir, 'report.html')), where(c)).toBe(true);
      const trace = /--trace (\S+)/.exec(c.command)?.[1];
      if (trace !== undefined) expect(readFileSync(join(sandbox, trace), 'utf8').split('\n').length, where(c)).toBeGreaterThan(100);
    }
  }, 60_000);
});

/** GitHub's anchor of a heading. */
const slug = (heading: string): string => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');

const anchorsOf = (text: string): Set<string> => new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] ?? '')));

describe('the pages', () => {
  it('link only to files and headings that exist', () => {
    const broken = pages.flatMap((page) =>
      [...page.text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '').filter((t) => !/^[a-z]+:/.test(t)).flatMap((target) => {
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? page.path : normalize(join(dirname(page.path), path));
        if (!existsSync(join(ROOT, file))) return [`${page.path}: ${target}: no ${file}`];
        if (anchor === undefined) return [];
        return anchorsOf(readFileSync(join(ROOT, file), 'utf8')).has(anchor) ? [] : [`${page.path}: ${target}: no heading #${anchor} in ${file}`];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('docs/configuration.md names every TAVERN_* variable the code reads, and the pages name no other', () => {
    const sources = (dir: string): string[] => readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => readFileSync(join(ROOT, dir, f), 'utf8'));
    const namesIn = (text: string): Set<string> => new Set([...text.matchAll(/\bTAVERN_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]));
    const read = namesIn(sources('src').join('\n'));
    const configuration = namesIn(pages.find((p) => p.path === 'docs/configuration.md')?.text ?? '');
    expect([...read].filter((v) => !configuration.has(v)).sort()).toEqual([]);
    expect(pages.flatMap((p) => [...namesIn(p.text)].filter((v) => !read.has(v)).map((v) => `${p.path}: ${v}`))).toEqual([]);
  });

  it("the README's find example type-checks against the @rivet-gg/api 23.2 client, in a browser", () => {
    const readme = pages.find((p) => p.path === 'README.md')?.text ?? '';
    const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
    expect(examples).toHaveLength(1);
    // Written where node_modules resolves it; the player's public token is the page's own.
    const dir = join(ROOT, 'test/.generated');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'readme-sdk-example.ts');
    writeFileSync(file, `declare const publicToken: string;\n${examples[0] ?? ''}\nexport {};\n`);
    const program = ts.createProgram([file], {
      strict: true, noUncheckedIndexedAccess: true, noEmit: true, skipLibCheck: true, types: [],
      target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    });
    expect(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  });

  it('the README is a guide of at most 300 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(300);
  });
});
