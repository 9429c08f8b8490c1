import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/core/errors.js';

const root = resolve(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });

describe('README', () => {
  it('lists exactly the catalog, with the same status and message', () => {
    const section = readme.slice(readme.indexOf('## Error codes'));
    const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| (\d+) \| (.*) \|$/gm)].map((m) => [m[1], Number(m[2]), m[3]]);
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

  it('runs its core example', async () => {
    const start = readme.indexOf('```ts', readme.indexOf('## The core'));
    const source = readme.slice(start + 5, readme.indexOf('```', start + 5));
    const dir = join(root, 'test/.generated');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'readme-example.ts');
    writeFileSync(file, source.replace(/from 'tavern'/g, `from '${join(root, 'src/core/index.js')}'`));
    await expect(import(file)).resolves.toBeDefined();
  });
});
