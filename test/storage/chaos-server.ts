/**
 * The server as plain JavaScript for the chaos test, which starts it sixty times: through `tsx` a
 * start took 2–4 s on the shared test machine, compiled about a third of that. Each module
 * `src/server/main.ts` imports is transpiled on its own (TypeScript's `transpileModule`: no type
 * check, which `npm test` does anyway) into `node_modules/.cache/tavern-chaos/<hash of the
 * sources>/`, so a second run with the same sources reuses it; two files making it at once keep
 * the first tree renamed into place.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(new URL('../../', import.meta.url).pathname);
const MAIN = join(ROOT, 'src/server/main.ts');

/** `main.ts` and every module it reaches through relative imports (`./x.js` is `./x.ts`), with their text. */
const reachable = (): Map<string, string> => {
  const files = new Map<string, string>();
  const pending = [MAIN];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (files.has(file)) continue;
    const text = readFileSync(file, 'utf8');
    files.set(file, text);
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (fileName.startsWith('.')) pending.push(resolve(dirname(file), fileName.replace(/\.js$/, '.ts')));
    }
  }
  return files;
};

/**
 * The path of `main.js` in the transpiled tree (made if missing).
 *
 * @example
 * const main = compiledServer(); // spawn(process.execPath, [main])
 */
export function compiledServer(): string {
  const files = reachable();
  const hash = createHash('sha256').update(ts.version);
  for (const [file, text] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) hash.update(relative(ROOT, file)).update('\0').update(text).update('\0');
  const out = join(ROOT, 'node_modules/.cache/tavern-chaos', hash.digest('hex').slice(0, 16));
  const main = join(out, 'src/server/main.js');
  if (existsSync(main)) return main;
  // Written aside, then renamed: a run killed midway never leaves a partial tree under the hash.
  const temp = `${out}.${process.pid}.tmp`;
  rmSync(temp, { recursive: true, force: true });
  const compilerOptions: ts.CompilerOptions = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023, verbatimModuleSyntax: true };
  for (const [file, text] of files) {
    const target = join(temp, relative(ROOT, file).replace(/\.ts$/, '.js'));
    mkdirSync(dirname(target), { recursive: true });
    // TypeScript is transpiled; anything else imported (the simulator's JSON scenarios) is copied as it is.
    writeFileSync(target, file.endsWith('.ts') ? ts.transpileModule(text, { compilerOptions, fileName: file }).outputText : text);
  }
  // ES modules (its `.js` files are not under the package's own package.json).
  writeFileSync(join(temp, 'package.json'), '{"type":"module"}\n');
  try {
    renameSync(temp, out);
  } catch (error) {
    // Another test file (the chaos tests run side by side) made the same tree first: use theirs,
    // never remove it (its servers may be starting from it).
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    rmSync(temp, { recursive: true, force: true });
  }
  return main;
}
