/**
 * The only node:http file: bridges an `IncomingMessage` to a WHATWG `Request` (body streamed, the
 * socket address passed along, an abort signal for a client that goes away) and a `Response` back
 * to the `ServerResponse` (body streamed).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { App } from './app.js';
import type { Logger } from './deps.js';

/** The request as the app sees it; `signal` aborts when the client disconnects before the answer. */
export function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const host = req.headers.host ?? 'localhost';
  let url: URL;
  try {
    url = new URL(req.url ?? '/', `http://${host}`);
  } catch {
    url = new URL(req.url?.startsWith('/') === true ? `http://localhost${req.url}` : 'http://localhost/');
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    try {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else headers.set(name, value);
    } catch {
      // A header value fetch refuses (control characters): dropped.
    }
  }
  const method = (req.method ?? 'GET').toUpperCase();
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const init: RequestInit & { duplex?: 'half' } = { method, headers, signal };
  if (hasBody) {
    init.body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
    init.duplex = 'half';
  }
  return new Request(url, init);
}

/** Writes `response` to `res`, streaming its body. */
export async function writeResponse(res: ServerResponse, response: Response, extra: Record<string, string> = {}): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  Object.assign(headers, extra);
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => res.once('drain', resolve));
    }
  } finally {
    reader.releaseLock();
    res.end();
  }
}

/**
 * Serves one request through `app` (a bad request line or a crash still gets an answer).
 *
 * @example
 * createServer((req, res) => void serve(app, req, res, logger));
 */
export async function serve(app: App, req: IncomingMessage, res: ServerResponse, logger?: Logger): Promise<void> {
  const aborter = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) aborter.abort();
  });
  try {
    const remoteAddress = req.socket.remoteAddress;
    const response = await app.handle(toRequest(req, aborter.signal), remoteAddress === undefined ? {} : { remoteAddress });
    // A body the app did not read (refused before reading it) would stall a kept-alive connection: close it instead.
    // (GET and HEAD bodies are never streamed to the app: node discards them itself.)
    const unread = !req.complete && req.method !== 'GET' && req.method !== 'HEAD';
    await writeResponse(res, response, unread ? { connection: 'close' } : {});
  } catch (error) {
    logger?.error({ err: error }, 'could not answer a request');
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
    res.end();
  }
}

/** A node:http server answering through `app`. */
export function createHttpServer(app: App, logger?: Logger): Server {
  return createServer((req, res) => void serve(app, req, res, logger));
}
