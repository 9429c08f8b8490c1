/**
 * What is wrong with a build's archive itself (its compression, its tar structure, its
 * manifest or config.json), worded for the game developer who uploaded it. Errors of any other
 * class met while loading a build are the engine's or the machine's.
 *
 * @example
 * throw new ArchiveError('the archive has no manifest.json: it is not a `docker save` archive');
 */
export class ArchiveError extends Error {
  override readonly name = 'ArchiveError';
}
