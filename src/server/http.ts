/**
 * The only node:http file: an `IncomingMessage` as the app's {@link Incoming} (headers read in
 * place, the body collected from its events, an abort signal made only when a handler asks for
 * one) and the app's answer written back in one piece.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { App } from './app.js';
import type { Logger } from './deps.js';
import { SECURITY_HEADERS } from './errors.js';
import type { BodyRead, Incoming } from './incoming.js';

/**
 * The request target as a URL. An origin-form target (`/path?query`) is read after a fixed origin,
 * never resolved as a reference: `//host/path` would otherwise name a host and lose its first
 * segment (`GET //matchmaker/cloud/games` was answered as `/cloud/games`). An absolute-form target
 * (a proxy's request line) is read as the URL it is.
 */
const urlOf = (req: IncomingMessage): URL => {
  const target = req.url ?? '/';
  try {
    return new URL(target.startsWith('/') ? `http://localhost${target}` : target);
  } catch {
    return new URL('http://localhost/');
  }
};

/** A request target whose path `new URL` would keep as it is: no escapes, dots, backslashes or empty segments. */
const PLAIN_TARGET = /^(\/[A-Za-z0-9_~-]+)+\/?(?=\?|$)|^\/(?=\?|$)/;

const readBody = (req: IncomingMessage, max: number): Promise<BodyRead> =>
  new Promise((resolve) => {
    if (req.complete && req.readableLength === 0 && req.readableEnded) {
      resolve(new Uint8Array(0));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: BodyRead): void => {
      req.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) {
        req.pause();
        done('too-large');
      } else chunks.push(chunk);
    };
    const onEnd = (): void => done(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    const onClose = (): void => done('incomplete');
    req.on('data', onData).once('end', onEnd).once('close', onClose).once('error', onClose);
  });

/**
 * The request as the app reads it; `res` tells when the client went away.
 *
 * A class, not an object literal with getters: V8 (Node 20) keeps the accessors of such a literal
 * in a pair allocated in the old generation, so their closure, and through it the whole request,
 * outlived the answer through every young-generation collection until the next full one
 * (`--trace-gc-nvp` under the http benchmark's finds: each young collection kept 1.47 MB instead
 * of 0.62 MB, took 4.4 ms instead of 2.3, and promoted five times as much to the old generation).
 */
class NodeIncoming implements Incoming {
  readonly method: string;
  readonly path: string;
  readonly remoteAddress?: string;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  #url: URL | undefined;
  #controller: AbortController | undefined;

  constructor(req: IncomingMessage, res: ServerResponse) {
    this.#req = req;
    this.#res = res;
    this.method = (req.method ?? 'GET').toUpperCase();
    const plain = PLAIN_TARGET.exec(req.url ?? '');
    this.path = plain === null ? this.url.pathname : plain[0];
    const address = req.socket.remoteAddress;
    if (address !== undefined) this.remoteAddress = address;
  }

  get url(): URL {
    this.#url ??= urlOf(this.#req);
    return this.#url;
  }

  header(name: string): string | null {
    const value = this.#req.headers[name];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  }

  read(max: number): Promise<BodyRead> {
    return this.method !== 'GET' && this.method !== 'HEAD' ? readBody(this.#req, max) : Promise.resolve(new Uint8Array(0));
  }

  stream(): AsyncIterable<Uint8Array> {
    return this.#req;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const c = new AbortController();
      this.#controller = c;
      const res = this.#res;
      if (res.closed && !res.writableFinished) c.abort();
      else res.once('close', () => {
        if (!res.writableFinished) c.abort();
      });
    }
    return this.#controller.signal;
  }
}

/** The request as the app reads it. */
export const fromNode = (req: IncomingMessage, res: ServerResponse): Incoming => new NodeIncoming(req, res);

/**
 * Serves one request through `app` (a crash still gets an answer).
 *
 * @example
 * createServer((req, res) => void serve(app, req, res, logger));
 */
export async function serve(app: Pick<App, 'respond'>, req: IncomingMessage, res: ServerResponse, logger?: Logger): Promise<void> {
  try {
    const answer = await app.respond(fromNode(req, res));
    // The answer's headers are its own: completed in place.
    const headers = answer.headers;
    headers['content-length'] = String(Buffer.byteLength(answer.body));
    // A body the app did not read (refused before reading it) would stall a kept-alive connection: close it instead.
    // (GET and HEAD bodies are never handed to the app: node discards them itself.)
    if (!req.complete && req.method !== 'GET' && req.method !== 'HEAD') headers['connection'] = 'close';
    res.writeHead(answer.status, headers).end(answer.body);
  } catch (error) {
    logger?.error({ err: error }, 'could not answer a request');
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json', ...SECURITY_HEADERS });
    res.end();
  }
}

/** A node:http server answering through `app`. */
export function createHttpServer(app: Pick<App, 'respond'>, logger?: Logger): Server {
  return createServer((req, res) => void serve(app, req, res, logger));
}
