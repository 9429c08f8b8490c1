/**
 * The documentation's pages and the command lines of their ```sh blocks, as a reader would type
 * them: a line continued with `\` joined to the next, a trailing `# comment` removed, blank and
 * comment-only lines left out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = new URL('../../', import.meta.url).pathname;

/** A documentation page, by its path from the repository's root. */
export interface Page {
  readonly path: string;
  readonly text: string;
}

/** A command line of a page, and the line of the page it starts on (1-based). */
export interface DocCommand {
  readonly page: string;
  readonly line: number;
  readonly command: string;
}

/**
 * README.md, CONTRIBUTING.md and every docs/*.md.
 *
 * @example
 * docPages().map((p) => p.path); // ['README.md', 'CONTRIBUTING.md', 'docs/README.md', …]
 */
export function docPages(root = ROOT): Page[] {
  const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs].map((path) => ({ path, text: readFileSync(join(root, path), 'utf8') }));
}

/**
 * `line` without a trailing comment: a `#` that starts a word outside quotes, and what follows.
 *
 * @example
 * stripComment("npm test   # the suite"); // 'npm test'
 * stripComment("echo '# not a comment'"); // "echo '# not a comment'"
 */
export function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] ?? ''))) {
      return line.slice(0, i).trimEnd();
    }
  }
  return line.trimEnd();
}

/**
 * The command lines of a page's ```sh blocks.
 *
 * @example
 * shellCommands({ path: 'README.md', text: '```sh\nnpm test  # all\n```\n' }); // [{ page: 'README.md', line: 2, command: 'npm test' }]
 */
export function shellCommands(page: Page): DocCommand[] {
  const lines = page.text.split('\n');
  const out: DocCommand[] = [];
  let inSh = false;
  let pending: { line: number; text: string } | undefined;
  lines.forEach((raw, i) => {
    if (!inSh) {
      inSh = raw === '```sh';
      return;
    }
    if (raw.startsWith('```')) {
      inSh = false;
      if (pending !== undefined) throw new Error(`${page.path}:${pending.line}: a command ends with \\ at the end of its block`);
      return;
    }
    const text = stripComment(raw);
    if (pending === undefined && text.trim() === '') return;
    const joined = pending === undefined ? { line: i + 1, text } : { line: pending.line, text: `${pending.text} ${text.trim()}` };
    if (joined.text.endsWith('\\')) pending = { line: joined.line, text: joined.text.slice(0, -1).trimEnd() };
    else {
      pending = undefined;
      out.push({ page: page.path, line: joined.line, command: joined.text.trim() });
    }
  });
  if (inSh) throw new Error(`${page.path}: a \`\`\`sh block is not closed`);
  return out;
}

/**
 * Shell words of a command: spaces split, quotes group (and are removed); a `<placeholder>` does
 * not split a word.
 *
 * @example
 * words(`FC_SEED=<seed> tavern logs <lobby id> --name 'beta 2'`); // ['FC_SEED=<seed>', 'tavern', 'logs', '<lobby id>', '--name', 'beta 2']
 */
export function words(command: string): string[] {
  return [...command.matchAll(/(?:<[^<>]*>|'[^']*'|"[^"]*"|[^\s'"<])+/g)].map((m) => m[0].replace(/'([^']*)'|"([^"]*)"/g, '$1$2'));
}
