/**
 * Sections of code that run one at a time per upload (a PUT's commit, a completion, a sweep), in
 * the order they asked; different uploads do not wait for each other. Per process: run one process
 * per blob root.
 */

/**
 * @example
 * const locks = new UploadLocks();
 * await locks.exclusive(upload.id, async () => { if (!(await isComplete())) await writer.commit(); });
 */
export class UploadLocks {
  /** Per upload id, the tail of its queue of sections. */
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `section` after every earlier section for the same upload has settled; its result or its error. */
  async exclusive<T>(uploadId: string, section: () => Promise<T>): Promise<T> {
    const result = (this.#tails.get(uploadId) ?? Promise.resolve()).then(section);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(uploadId, tail);
    try {
      return await result;
    } finally {
      if (this.#tails.get(uploadId) === tail) this.#tails.delete(uploadId);
    }
  }
}
