/**
 * A PUT's body carried into a blob writer, no further than its part's length.
 */

/** What a copy saw: the bytes that came, and whether the body stopped short of its end. */
export interface Copied {
  readonly seen: number;
  /** The body failed midway (the client went away, the connection broke: a client event) or the copy was stopped. */
  readonly cut: boolean;
}

/**
 * Copies the body into `writer`, stopping as soon as more than `limit` bytes came, when the body
 * fails midway, or when `stopped()` turns true (checked before each write). A failing write is
 * the server's own failure and throws.
 *
 * @example
 * const copied = await copyBody(request.body, writer, part.length);
 * if (bodyProblem(copied, part.length) === undefined) await writer.commit();
 */
export async function copyBody(
  body: AsyncIterable<Uint8Array>,
  writer: { write(chunk: Uint8Array): Promise<void> },
  limit: number,
  stopped: () => boolean = () => false,
): Promise<Copied> {
  const chunks = body[Symbol.asyncIterator]();
  let seen = 0;
  for (;;) {
    let next: IteratorResult<Uint8Array>;
    try {
      next = await chunks.next();
    } catch {
      return { seen, cut: true };
    }
    if (next.done === true) return { seen, cut: false };
    seen += next.value.byteLength;
    if (seen > limit) {
      await chunks.return?.();
      return { seen, cut: false };
    }
    if (stopped()) {
      await chunks.return?.();
      return { seen, cut: true };
    }
    await writer.write(next.value);
  }
}
