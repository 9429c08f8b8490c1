import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/core/errors.js';
import * as core from '../../src/core/index.js';

const root = resolve(import.meta.dirname, '../..');
const errorsDoc = readFileSync(join(root, 'docs/errors.md'), 'utf8');
const coreDoc = readFileSync(join(root, 'docs/core.md'), 'utf8');

const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });

describe('docs/errors.md and docs/core.md', () => {
  it('lists exactly the catalog, with the same status and message', () => {
    const rows = [...errorsDoc.matchAll(/^\| `([A-Z_]+)` \| (\d+) \| (.*) \|$/gm)].map((m) => [m[1], Number(m[2]), m[3]]);
    expect(rows).toEqual(Object.entries(ERRORS).map(([code, e]) => [code, e.status, e.message]));
  });

  it('lists no stale code: each is produced somewhere in src outside the catalog', () => {
    const code = sources(join(root, 'src'))
      .filter((f) => !f.endsWith(join('core', 'errors.ts')))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const errorsFile = readFileSync(join(root, 'src/core/errors.ts'), 'utf8');
    const body = errorsFile.slice(errorsFile.indexOf('} as const'));
    for (const name of Object.keys(ERRORS)) expect(code.includes(`'${name}'`) || body.includes(`'${name}'`), name).toBe(true);
  });

  it('the error table is the only table of codes: every row of the file is a catalog row', () => {
    const tableRows = errorsDoc.split('\n').filter((line) => line.startsWith('| `'));
    expect(tableRows).toHaveLength(Object.keys(ERRORS).length);
  });

  it('every function the core page names in its tables is exported by the core', () => {
    const section = coreDoc.slice(coreDoc.indexOf('## What it models'), coreDoc.indexOf('## Design'));
    // The second column of each row: `| area | functions | notes |`.
    const rows = section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| area') && !line.startsWith('| ---'));
    const functions = rows.flatMap((line) => [...(line.split(' | ')[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ''));
    expect(functions.length).toBeGreaterThan(30);
    const exported = new Set(Object.keys(core));
    expect(functions.filter((n) => !exported.has(n))).toEqual([]);
  });

  it('runs the core example', async () => {
    const blocks = [...coreDoc.matchAll(/```ts\n([\s\S]*?)```/g)];
    expect(blocks, 'docs/core.md has one TypeScript example').toHaveLength(1);
    const source = blocks[0]?.[1] ?? '';
    const dir = join(root, 'test/.generated');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'readme-example.ts');
    writeFileSync(file, source.replace(/from 'tavern'/g, `from '${join(root, 'src/core/index.js')}'`));
    await expect(import(file)).resolves.toBeDefined();
  });
});
