/** A folder's files, walked recursively, as `/`-separated relative paths, sorted. */
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
}
