/**
 * The request and answer as the app handles them, whatever carries them: a WHATWG `Request` and
 * `Response` (`App.handle`, in-process tests) or node:http (`http.ts`, read and written directly,
 * with no stream or Request object built per request).
 */

/** The whole body, or why it could not be read. */
export type BodyRead = Uint8Array | 'too-large' | 'incomplete';

/** A request as the app reads it. */
export interface Incoming {
  /** Upper case. */
  readonly method: string;
  /**
   * The request target's path as sent: no dot segment resolved, no escape decoded (node:http). A
   * WHATWG `Request` has resolved its URL already, so `fromRequest` can only give `url.pathname`.
   */
  readonly path: string;
  readonly url: URL;
  /** A header's value (`name` in lower case), or null; repeated headers are joined by `, `. */
  header(name: string): string | null;
  /** The whole body; `too-large` as soon as more than `max` bytes arrive (the rest is not read). */
  read(max: number): Promise<BodyRead>;
  /**
   * The whole body at once when all of it has arrived already (a small body sent with its headers),
   * else undefined (then {@link read}): a JSON body is parsed without waiting a turn.
   */
  readNow?(max: number): BodyRead | undefined;
  /** The body chunk by chunk (uploads); no chunk when there is none. */
  stream(): AsyncIterable<Uint8Array>;
  /** Aborts when the client goes away before its answer. */
  readonly signal: AbortSignal;
  /** The TCP peer's address, when known. */
  readonly remoteAddress?: string;
}

/** An answer: a status, headers (lower-case names) and a JSON text. */
export interface Outgoing {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** A body written piece by piece as it is produced (an export), instead of `body`. */
  readonly stream?: AsyncIterable<string>;
}

async function readAll(body: ReadableStream<Uint8Array> | null, max: number): Promise<BodyRead> {
  if (body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel().catch(() => undefined);
        return 'too-large';
      }
      chunks.push(value);
    }
  } catch {
    return 'incomplete';
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

async function* chunksOf(body: ReadableStream<Uint8Array> | null): AsyncIterable<Uint8Array> {
  if (body === null) return;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * A WHATWG request as the app reads it.
 *
 * @example
 * const incoming = fromRequest(new Request('http://localhost/health'));
 */
export const fromRequest = (request: Request, conn: { readonly remoteAddress?: string } = {}): Incoming => {
  const url = new URL(request.url);
  return {
    method: request.method.toUpperCase(),
    path: url.pathname,
    url,
    header: (name) => request.headers.get(name),
    read: (max) => readAll(request.body, max),
    stream: () => chunksOf(request.body),
    signal: request.signal,
    ...(conn.remoteAddress === undefined ? {} : { remoteAddress: conn.remoteAddress }),
  };
};

/**
 * The WHATWG response of an answer.
 *
 * @example
 * toResponse({ status: 200, headers: { 'content-type': 'application/json' }, body: '{}' });
 */
export const toResponse = (answer: Outgoing): Response => {
  const { stream } = answer;
  if (stream === undefined) return new Response(answer.body, { status: answer.status, headers: answer.headers });
  const pieces = stream[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await pieces.next();
      if (next.done === true) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await pieces.return?.();
    },
  });
  return new Response(body, { status: answer.status, headers: answer.headers });
};
