/**
 * Reading a JSON request body: capped in size, empty = `{}`, malformed = `API_BAD_BODY`.
 */
import { fail } from './errors.js';

/** JSON bodies are capped at 1 MiB (Rivet allowed 10 GiB); uploads stream through their own route. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The request body's bytes, failing with `API_BODY_TOO_LARGE` as soon as more than `max` arrive
 * (or a `content-length` announces more).
 */
export async function readBytes(request: Request, max: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > max) fail('API_BODY_TOO_LARGE', { max });
  if (request.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = (request.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      fail('API_BODY_TOO_LARGE', { max });
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/**
 * The parsed JSON body; an empty (or whitespace-only) body is `{}` (wire.md §1.3).
 *
 * @example
 * const body = await readJson(request); // unknown
 */
export async function readJson(request: Request, max = MAX_BODY_BYTES): Promise<unknown> {
  return (await readJsonBody(request, max)).value;
}

/** The parsed JSON body, and whether it was empty (then `{}`). */
export async function readJsonBody(request: Request, max = MAX_BODY_BYTES): Promise<{ readonly empty: boolean; readonly value: unknown }> {
  const bytes = await readBytes(request, max);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    fail('API_BAD_BODY', { reason: 'the body is not UTF-8' });
  }
  if (text.trim() === '') return { empty: true, value: {} };
  try {
    return { empty: false, value: JSON.parse(text) as unknown };
  } catch (e) {
    fail('API_BAD_BODY', { reason: e instanceof Error ? e.message : 'malformed JSON' });
  }
}
