/**
 * What a `docker save` archive may hold, checked as it streams through Tavern on its way to the
 * engine (which unpacks it on the host before reading it): files, directories, and links that
 * stay inside the archive and lead to one of its files (docker save links a layer it already
 * wrote: `<id>/layer.tar -> ../<other id>/layer.tar`). A device, a FIFO or any other special file
 * is refused, and so is a link that leads out of the archive, to a directory (a way out through a
 * chain of links) or to nothing it holds. Entry names are already normalised ({@link entryName}).
 */
import { ArchiveError } from './archive-error.js';
import { entryName, type TarEntry } from './tar-entries.js';

const SPECIAL: Readonly<Record<string, string>> = {
  'character-device': 'a character device',
  'block-device': 'a block device',
  fifo: 'a FIFO (named pipe)',
};

const dirOf = (name: string): string[] => name.split('/').slice(0, -1);

/** Where a symlink's target leads from the symlink's own directory, or undefined if it leaves the archive. */
const resolve = (name: string, target: string): string | undefined => {
  if (target.startsWith('/')) return undefined;
  const at = dirOf(name);
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') at.push(part);
    else if (at.pop() === undefined) return undefined;
  }
  return at.join('/');
};

/**
 * The entries of a `docker save` archive, seen in order.
 *
 * @example
 * const saved = new SavedEntries();
 * for await (const entry of tarEntries(bytes)) { saved.see(entry); await copyEntry(pack, entry, entry.name); }
 * saved.finish(); // every symlink leads to one of the archive's files
 */
export class SavedEntries {
  /** The archive's files so far (hard links included). */
  readonly #files = new Set<string>();
  /** Symlinks by name, with where each leads. */
  readonly #symlinks = new Map<string, { readonly raw: string; readonly to: string }>();

  /** Takes one entry; an {@link ArchiveError} for a special file or a link that cannot stay inside the archive. */
  see(entry: TarEntry): void {
    const { name, header } = entry;
    this.#files.delete(name);
    this.#symlinks.delete(name);
    switch (header.type) {
      case 'file':
      case 'contiguous-file':
        this.#files.add(name);
        return;
      case 'directory':
        return;
      case 'symlink': {
        const raw = header.linkname ?? '';
        const to = resolve(name, raw);
        if (to === undefined) throw new ArchiveError(`the archive has a symlink that leads out of it: '${name}' -> '${raw}'`);
        this.#symlinks.set(name, { raw, to });
        return;
      }
      case 'link': {
        const raw = header.linkname ?? '';
        const to = entryName(raw);
        if (to === undefined || !this.#files.has(to)) throw new ArchiveError(`the archive has a hard link to something that is not one of its files (before it): '${name}' -> '${raw}'`);
        this.#files.add(name);
        return;
      }
      case 'character-device':
      case 'block-device':
      case 'fifo':
      default: {
        // tar-stream's type is null for a type flag it does not know: refused as well.
        const what = SPECIAL[String(header.type)] ?? `a '${String(header.type)}' entry`;
        throw new ArchiveError(`the archive holds ${what} ('${name}'): a docker save archive holds only files, directories and links between them`);
      }
    }
  }

  /** Once every entry went by: an {@link ArchiveError} unless each symlink leads to one of the archive's files. */
  finish(): void {
    for (const [name, { raw, to }] of this.#symlinks) {
      if (!this.#files.has(to)) throw new ArchiveError(`the archive has a symlink to something that is not one of its files: '${name}' -> '${raw}'`);
    }
  }
}
