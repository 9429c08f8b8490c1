import { readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * Source scans that enforce a layer's boundaries (STYLE.md, "Enforcing the core's purity" item 3).
 * Each layer's test calls them with its own directory and allowlist.
 *
 * @example
 * expect(scanImports('src/core', (spec, file) => spec === 'immer' || resolvesWithin(spec, file, 'src/core'))).toEqual([]);
 * expect(scanTokens('src/core', ['Date.now('])).toEqual([]);
 */

/** One offending import or token: the file (relative to the scanned directory), its line, and what. */
export interface Violation {
  readonly file: string;
  readonly line: number;
  readonly what: string;
}

/**
 * Whether `spec` is a relative specifier that, resolved from `file`, stays inside `root`.
 *
 * @example
 * resolvesWithin('../world.js', 'src/core/lobby/flags.ts', 'src/core') // true
 */
export const resolvesWithin = (spec: string, file: string, root: string): boolean => {
  if (!spec.startsWith('./') && !spec.startsWith('../')) return false;
  const rel = relative(resolve(root), resolve(dirname(file), spec));
  return rel !== '' && rel.split(sep)[0] !== '..' && !isAbsolute(rel);
};

/** Every `.ts` file under `dir`, recursively, sorted. */
export const tsFiles = (dir: string): string[] => {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith('.ts')) out.push(path);
    }
  };
  walk(dir);
  return out.sort();
};

const lineOf = (text: string, pos: number): number => text.slice(0, pos).split('\n').length;

/**
 * Every import specifier (static, type-only, side-effect, re-export, dynamic `import()`) of every
 * `.ts` file under `dir` that `allow(spec, file)` refuses. `file` is the absolute-or-given path of
 * the importing file, so `allow` can resolve relative specifiers against it.
 */
export const scanImports = (dir: string, allow: (spec: string, file: string) => boolean): Violation[] => {
  const out: Violation[] = [];
  for (const file of tsFiles(dir)) {
    const text = readFileSync(file, 'utf8');
    for (const ref of importsOf(text)) {
      if (!allow(ref.fileName, file)) out.push({ file: relative(dir, file), line: lineOf(text, ref.pos), what: ref.fileName });
    }
  }
  return out;
};

/** Every import specifier of a source text (static, type-only, side-effect, re-export, dynamic). */
const importsOf = (text: string): readonly ts.FileReference[] => ts.preProcessFile(text, true, true).importedFiles;

/** A source file: its path relative to `src/` with `/` separators (its first folder is its layer), and its text. */
export interface SourceFile {
  readonly path: string;
  readonly text: string;
}

/** Every `.ts` file under `root` as a {@link SourceFile}. */
export const sourceFiles = (root: string): SourceFile[] =>
  tsFiles(root).map((file) => ({ path: relative(root, file).split(sep).join('/'), text: readFileSync(file, 'utf8') }));

/**
 * One layer's imports rule: the layers it may not import (`mayNotImport`), or the only ones it
 * may (`mayImportOnly`: any other relative import, one leaving `src/` included, is a violation).
 * Packages are not layers (the purity test keeps the core's). `except` names files the rule
 * does not hold for.
 */
export type LayerRule = { readonly layer: string; readonly except?: readonly string[] } & (
  | { readonly mayNotImport: readonly string[] }
  | { readonly mayImportOnly: readonly string[] }
);

/**
 * The relative imports of `rule.layer`'s files that break the rule (`file` is the importing
 * file's path relative to `src/`).
 *
 * @example
 * layerViolations([{ path: 'adapters/x.ts', text: "import '../server/app.js';" }], { layer: 'adapters', mayNotImport: ['server'] });
 * // [{ file: 'adapters/x.ts', line: 1, what: '../server/app.js' }]
 */
export const layerViolations = (files: readonly SourceFile[], rule: LayerRule): Violation[] => {
  const out: Violation[] = [];
  const refused = (layer: string): boolean => ('mayNotImport' in rule ? rule.mayNotImport.includes(layer) : !rule.mayImportOnly.includes(layer));
  for (const { path, text } of files) {
    if (!path.startsWith(`${rule.layer}/`) || rule.except?.includes(path) === true) continue;
    for (const ref of importsOf(text)) {
      const spec = ref.fileName;
      if (!spec.startsWith('./') && !spec.startsWith('../')) continue;
      const layer = posix.normalize(posix.join(posix.dirname(path), spec)).split('/')[0] ?? '';
      if (refused(layer)) out.push({ file: path, line: lineOf(text, ref.pos), what: spec });
    }
  }
  return out;
};

/**
 * `text` with every comment replaced by spaces (newlines kept, so positions and lines still match).
 * Comments are found by the TypeScript parser: each comment is leading or trailing trivia of a token.
 */
export const stripComments = (text: string, fileName = 'file.ts'): string => {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const ranges = new Map<number, number>();
  const visit = (node: ts.Node): void => {
    if (ts.isJSDoc(node)) return;
    const children = node.getChildren(sf);
    if (children.length === 0) {
      // A comment on the same line after a token is its trailing trivia; the rest lead the next token.
      for (const r of ts.getLeadingCommentRanges(text, node.pos) ?? []) ranges.set(r.pos, r.end);
      for (const r of ts.getTrailingCommentRanges(text, node.end) ?? []) ranges.set(r.pos, r.end);
    }
    for (const c of children) visit(c);
  };
  visit(sf);
  for (const r of ts.getLeadingCommentRanges(text, sf.endOfFileToken.pos) ?? []) ranges.set(r.pos, r.end);
  // Comment ranges are UTF-16 offsets, as are split('') units.
  const units = text.split('');
  for (const [pos, end] of ranges) for (let i = pos; i < end; i++) if (units[i] !== '\n' && units[i] !== '\r') units[i] = ' ';
  return units.join('');
};

/** Every occurrence of one of `tokens` (plain substrings) outside comments in the `.ts` files under `dir`. */
export const scanTokens = (dir: string, tokens: readonly string[]): Violation[] => {
  const out: Violation[] = [];
  for (const file of tsFiles(dir)) {
    const code = stripComments(readFileSync(file, 'utf8'), file);
    for (const token of tokens) {
      for (let at = code.indexOf(token); at >= 0; at = code.indexOf(token, at + token.length)) {
        out.push({ file: relative(dir, file), line: lineOf(code, at), what: token });
      }
    }
  }
  return out;
};
