/**
 * Reading a JSON request body: capped in size and nesting, empty = `{}`, malformed = `API_BAD_BODY`.
 */
import { fail } from './errors.js';
import type { BodyRead, Incoming } from './incoming.js';

/** JSON bodies are capped at 1 MiB (Rivet allowed 10 GiB); uploads stream through their own route. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * JSON bodies nest at most 128 arrays/objects deep (serde_json's default recursion limit, so Rivet
 * refused deeper bodies too). `JSON.parse` reads any depth, but `JSON.stringify` and
 * `structuredClone` overflow the stack on a few thousand levels: a deep `lobby_config` or lobby
 * state turned into a 500 (reliability.md §1.2, "deep JSON").
 */
export const MAX_JSON_DEPTH = 128;

/** Whether `text` opens more than `max` arrays/objects at once (outside strings; linear, stops early). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: jump to its closing quote, the first one not escaped by an odd run of backslashes.
      for (;;) {
        const q = text.indexOf('"', i + 1);
        if (q < 0) return false; // unterminated: JSON.parse refuses it
        i = q;
        let backslashes = 0;
        while (text.charCodeAt(q - 1 - backslashes) === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A JSON body as read: whether it was empty (then `{}`), and its value. */
export interface JsonBody {
  readonly empty: boolean;
  readonly value: unknown;
}

/** The JSON of a body's bytes, or the error that refuses it. */
function parseJsonBody(bytes: BodyRead, max: number): JsonBody {
  if (bytes === 'too-large') fail('API_BODY_TOO_LARGE', { max });
  if (bytes === 'incomplete') fail('API_BAD_BODY', { reason: 'the body ended early' });
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    fail('API_BAD_BODY', { reason: 'the body is not UTF-8' });
  }
  if (text.trim() === '') return { empty: true, value: {} };
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) fail('API_BAD_BODY', { reason: `nested deeper than ${MAX_JSON_DEPTH} levels` });
  try {
    return { empty: false, value: JSON.parse(text) as unknown };
  } catch (e) {
    fail('API_BAD_BODY', { reason: e instanceof Error ? e.message : 'malformed JSON' });
  }
}

/**
 * The parsed JSON body, and whether it was empty (then `{}`, wire.md §1.3). A body that has all
 * arrived (`readNow`) is parsed at once: no async frame or turn of its own (every find reads one).
 *
 * @example
 * const { value } = await readJsonBody(incoming); // unknown
 */
export function readJsonBody(request: Incoming, max = MAX_BODY_BYTES): Promise<JsonBody> {
  try {
    const declared = request.header('content-length');
    if (declared !== null && /^\d+$/.test(declared) && Number(declared) > max) fail('API_BODY_TOO_LARGE', { max });
    const now = request.readNow?.(max);
    if (now !== undefined) return Promise.resolve(parseJsonBody(now, max));
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  return request.read(max).then((bytes) => parseJsonBody(bytes, max));
}
