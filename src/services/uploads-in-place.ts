/**
 * PUTs of a multipart file's parts written in place into its staged file, on a store that can
 * ({@link StagedBlobs}: the local disk), so each byte is written once and completion renames the file.
 *
 * A PUT claims its part (under the upload's lock, completion rechecked; a PUT of the same part
 * still streaming is stopped and waited for; the part's record removed), streams into the staged
 * file outside the lock, flushes its bytes to disk, and records the part under the lock if no
 * later PUT claimed it meanwhile. So while a PUT writes, its part counts as missing and completion
 * is refused; once completion renamed the file, no writer of it is left and every later PUT is
 * refused.
 */
import { matchError, type MatchError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import type { PartWriter, StagedBlobs } from '../io/blobs.js';
import type { UploadStore } from '../io/catalog.js';
import { copyBody } from './upload-body.js';
import { stagedKey } from './upload-keys.js';
import type { UploadLocks } from './upload-locks.js';
import { alreadyComplete, bodyProblem, uploadInvalid, uploadNotFound, type Chunk } from './upload-rules.js';

/** A PUT writing a part in place: a later PUT of the same part stops it. */
interface PartClaim {
  readonly writer: PartWriter;
  stopped: boolean;
}

/**
 * @example
 * const inPlace = new InPlaceParts(staged, catalog, locks);
 * await inPlace.put(upload.id, 0, { part: 2, offset: chunkBytes, length: chunkBytes }, body);
 */
export class InPlaceParts {
  readonly #staged: StagedBlobs;
  readonly #catalog: UploadStore;
  readonly #locks: UploadLocks;
  /** PUTs writing a part in place now, by `<upload id>/<file index>/<part>`. */
  readonly #writing = new Map<string, PartClaim>();

  constructor(staged: StagedBlobs, catalog: UploadStore, locks: UploadLocks) {
    this.#staged = staged;
    this.#catalog = catalog;
    this.#locks = locks;
  }

  /**
   * Whether the file at `index` has a staged file to be written in place (not so for one
   * prepared by an earlier Tavern, kept one blob per part).
   *
   * @effects Blobs
   */
  async holds(uploadId: string, index: number): Promise<boolean> {
    return (await this.#staged.stagedParts(stagedKey(uploadId, index))) !== undefined;
  }

  /**
   * Streams one PUT into its part of the staged file of the file at `index`: the part is recorded
   * only once all its bytes are on disk, and only if no later PUT of it started.
   *
   * @effects UploadStore, Blobs
   */
  async put(uploadId: string, index: number, { part, offset, length }: Chunk, body: AsyncIterable<Uint8Array>): Promise<Result<void, MatchError>> {
    const claimKey = `${uploadId}/${index}/${part}`;
    const claimed = await this.#locks.exclusive(uploadId, async (): Promise<Result<PartClaim, MatchError>> => {
      const current = await this.#catalog.getUpload(uploadId);
      if (current === undefined) return err(uploadNotFound());
      if (current.completedAt !== undefined) return err(alreadyComplete());
      if (current.abandonedAt !== undefined) return err(matchError('UPLOAD_EXPIRED'));
      const earlier = this.#writing.get(claimKey);
      if (earlier !== undefined) {
        earlier.stopped = true;
        await earlier.writer.abort();
      }
      const writer = await this.#staged.writePart(stagedKey(uploadId, index), part, offset, length);
      if (writer === undefined) return err(uploadInvalid('the file takes no more parts: complete the upload'));
      const claim: PartClaim = { writer, stopped: false };
      this.#writing.set(claimKey, claim);
      return ok(claim);
    });
    if (!claimed.ok) return claimed;
    const claim = claimed.value;
    const replaced = (): Result<void, MatchError> => err(uploadInvalid('a later PUT of this part replaced this one'));
    try {
      const copied = await copyBody(body, claim.writer, length, () => claim.stopped);
      if (claim.stopped) return replaced();
      const short = bodyProblem(copied, length);
      if (short !== undefined) return err(short);
      await claim.writer.flush();
      return await this.#locks.exclusive(uploadId, async () => {
        if (claim.stopped) return replaced();
        // Completion cannot have happened (this part was missing all along), but expiry may have.
        const current = await this.#catalog.getUpload(uploadId);
        if (current?.abandonedAt !== undefined) return err(matchError('UPLOAD_EXPIRED'));
        await claim.writer.commit();
        return ok(undefined);
      });
    } finally {
      if (this.#writing.get(claimKey) === claim) this.#writing.delete(claimKey);
      await claim.writer.abort();
    }
  }
}
