/**
 * Streaming a tar archive that is still being produced into the engine (`POST /images/load`,
 * `POST /images/create?fromSrc=-`) and reading its reply: a stream of JSON messages, errors
 * included (`{"error": "unexpected EOF", "errorDetail": {...}}`). If producing the archive
 * fails, the request is aborted (so the engine never takes a partial archive for a whole one)
 * and the producer's error is the one reported.
 */
import type { Pack } from 'tar-stream';

/**
 * The engine refused an image (its reply's error, e.g. `no space left on device`), as opposed to
 * an archive Tavern itself found unusable or an engine it could not reach.
 *
 * @example
 * if (reply.error !== undefined) throw new EngineError(reply.error);
 */
export class EngineError extends Error {
  override readonly name = 'EngineError';
}

/** What the engine answered: its messages (`stream`/`status` texts) and its error, if any. */
export interface EngineReply {
  readonly messages: readonly string[];
  readonly error: string | undefined;
}

interface Message {
  readonly stream?: unknown;
  readonly status?: unknown;
  readonly error?: unknown;
  readonly errorDetail?: { readonly message?: unknown };
}

/** Enough of a reply to find the loaded image, and bounded however chatty the engine is. */
const MAX_MESSAGES = 200;
const MAX_LINE = 64 * 1024;

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** The message of one line of the reply: JSON as the API documents it, or the raw text. */
const parseLine = (line: string): { message?: string; error?: string } => {
  let parsed: Message;
  try {
    parsed = JSON.parse(line) as Message;
  } catch {
    return { message: line };
  }
  if (typeof parsed !== 'object' || parsed === null) return { message: line };
  const error = text(parsed.errorDetail?.message) ?? text(parsed.error);
  if (error !== undefined) return { error };
  const message = text(parsed.stream) ?? text(parsed.status);
  return message === undefined ? {} : { message };
};

/**
 * Reads the engine's reply to an image upload to its end.
 *
 * @example
 * const reply = await readReply(await docker.loadImage(tar, { quiet: true }));
 * reply.error ?? reply.messages.at(-1) // 'Loaded image ID: sha256:…'
 */
export const readReply = async (body: AsyncIterable<Buffer | string>): Promise<EngineReply> => {
  const messages: string[] = [];
  let error: string | undefined;
  let carry = '';
  const take = (line: string): void => {
    const trimmed = line.trim();
    if (trimmed === '') return;
    const parsed = parseLine(trimmed.slice(0, MAX_LINE));
    error ??= parsed.error;
    if (parsed.message !== undefined && messages.length < MAX_MESSAGES) messages.push(parsed.message);
  };
  for await (const chunk of body) {
    const lines = (carry + chunk.toString()).split('\n');
    carry = (lines.pop() ?? '').slice(-MAX_LINE);
    lines.forEach(take);
  }
  take(carry);
  return { messages, error };
};

/** Thrown into the producer when the engine has answered without reading the whole archive. */
const stopped = new Error('the engine stopped reading the archive');

/**
 * Sends the archive `produce` writes into `pack` (it must `finalize()` it when done) through
 * `send` (which starts the upload request), and returns the engine's reply. Rejects with the
 * producer's error when producing failed (the upload is aborted first), else with the request's.
 *
 * @example
 * const reply = await upload(pack, () => copyEntries(pack), (body, signal) => docker.loadImage(body, { quiet: true, abortSignal: signal }));
 */
export const upload = async (
  pack: Pack,
  produce: () => Promise<void>,
  send: (body: NodeJS.ReadableStream, signal: AbortSignal) => Promise<AsyncIterable<Buffer | string>>,
): Promise<EngineReply> => {
  const abort = new AbortController();
  let answered = false;
  pack.on('error', () => undefined); // the producer's outcome below reports it; never an uncaught 'error'
  const producing = produce().then(
    () => undefined,
    (e: unknown): Error => {
      if (answered) return stopped; // it failed because the engine stopped reading: the reply says why
      const error = e instanceof Error ? e : new Error(String(e));
      abort.abort();
      pack.destroy(error);
      return error;
    },
  );
  let reply: EngineReply | undefined;
  let failure: Error = stopped;
  try {
    reply = await readReply(await send(pack as unknown as NodeJS.ReadableStream, abort.signal)); // a streamx Readable: dockerode only pipes it
  } catch (e) {
    failure = e instanceof Error ? e : new Error(String(e));
  }
  answered = true;
  pack.destroy(stopped); // unblocks a producer the engine stopped reading from (a no-op once it has finished)
  const produced = await producing;
  if (produced !== undefined && produced !== stopped) throw produced;
  if (reply === undefined) throw failure;
  return reply;
};
