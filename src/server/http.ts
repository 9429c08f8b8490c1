/**
 * The only node:http file: an `IncomingMessage` as the app's {@link Incoming} (headers read in
 * place, the body collected from its events, an abort signal made only when a handler asks for
 * one) and the app's answer written back in one piece.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { App } from './app.js';
import type { Logger } from '../io/log.js';
import { matchError } from '../core/errors.js';
import { errorResponse, SECURITY_HEADERS } from './errors.js';
import type { BodyRead, Incoming, Outgoing } from './incoming.js';

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

/**
 * The path of a request target as sent: an origin-form target up to its query, or the path of an
 * absolute-form one. Nothing is resolved or decoded (`new URL` would resolve `/v1/../cloud` and
 * `/v1/%2e%2e/cloud` to `/cloud`, and read a backslash as `/`): the router sees what the client sent.
 */
const pathAsSent = (target: string): string => {
  const path = target.startsWith('/') ? target : (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(\/[^?#]*)?/i.exec(target)?.[1] ?? '/');
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
};

const EMPTY = new Uint8Array(0);

/**
 * The body of a request whose bytes all arrived (as a small body sent with its headers does: they
 * wait in the stream's buffer, `content-length` of them, or the parser saw its end), taken at
 * once: no listener, closure or turn of the event loop per request. Undefined when it must be
 * awaited (more to come, chunked, too large, or read already).
 */
const bufferedBody = (req: IncomingMessage, max: number): BodyRead | undefined => {
  if (req.readableFlowing === true || req.readableEncoding !== null || req.readableDidRead) return undefined;
  const declared = req.headers['content-length'];
  const length = req.complete ? req.readableLength : declared === undefined ? NaN : Number(declared);
  if (req.readableLength !== length || length > max) return undefined;
  return length === 0 ? EMPTY : ((req.read() as Buffer | null) ?? EMPTY);
};

/** The body as it arrives (see {@link bufferedBody} for one that arrived already). */
const readBody = (req: IncomingMessage, max: number): Promise<BodyRead> =>
  new Promise((resolve) => {
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
  /**
   * Whether the app took the whole body at once from the buffer. Node runs the app between the
   * parser's callbacks, so a body can be taken, and the request answered, before the parser marks
   * the request complete: that answer must not close the connection as an unread body would.
   */
  bodyTaken = false;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  #url: URL | undefined;
  #controller: AbortController | undefined;

  constructor(req: IncomingMessage, res: ServerResponse) {
    this.#req = req;
    this.#res = res;
    this.method = (req.method ?? 'GET').toUpperCase();
    this.path = pathAsSent(req.url ?? '/');
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
    const now = this.readNow(max);
    return now === undefined ? readBody(this.#req, max) : Promise.resolve(now);
  }

  readNow(max: number): BodyRead | undefined {
    if (this.method === 'GET' || this.method === 'HEAD') return EMPTY;
    const body = bufferedBody(this.#req, max);
    if (body !== undefined) this.bodyTaken = true;
    return body;
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
export const fromNode = (req: IncomingMessage, res: ServerResponse): Incoming & { readonly bodyTaken: boolean } => new NodeIncoming(req, res);

/** Whether the server began to shut down ({@link closeHttpServer}); shared by its requests. */
interface Lifecycle {
  closing: boolean;
}

/** A request that arrived once the server began to shut down: refused, its connection closed. */
const shuttingDown = (): Outgoing => {
  const answer = errorResponse(matchError('SERVER_SHUTTING_DOWN'), { 'retry-after': '1', connection: 'close', 'rvt-ray-id': randomUUID() });
  Object.assign(answer.headers, SECURITY_HEADERS);
  return answer;
};

/**
 * Writes a streamed answer (chunked), waiting for the socket to drain when it is behind; stops
 * reading the stream when the client goes away, and cuts the connection if the stream fails.
 */
async function writeStream(res: ServerResponse, status: number, headers: Record<string, string>, stream: AsyncIterable<string>): Promise<void> {
  res.writeHead(status, headers);
  try {
    for await (const piece of stream) {
      if (res.destroyed) break;
      if (!res.write(piece)) await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.once('drain', done).once('close', done);
      });
    }
  } catch (error) {
    // Cut the connection: a clean end would pass a truncated body off as complete.
    res.destroy();
    throw error;
  }
  res.end();
}

/**
 * Serves one request through `app` (a crash still gets an answer). Once the server is shutting
 * down, an answer closes its connection, and a request that arrives then is refused
 * (`SERVER_SHUTTING_DOWN`) without reaching the app.
 *
 * @example
 * createServer((req, res) => void serve(app, req, res, logger));
 */
export async function serve(app: Pick<App, 'respond'>, req: IncomingMessage, res: ServerResponse, logger?: Logger, lifecycle?: Lifecycle): Promise<void> {
  try {
    const incoming = fromNode(req, res);
    const answer = lifecycle?.closing === true ? shuttingDown() : await app.respond(incoming);
    // The answer's headers are its own: completed in place.
    const headers = answer.headers;
    if (answer.stream !== undefined) {
      await writeStream(res, answer.status, headers, answer.stream);
      return;
    }
    headers['content-length'] = String(Buffer.byteLength(answer.body));
    // A body the app did not read (refused before reading it) would stall a kept-alive connection:
    // close it instead (GET and HEAD bodies are never handed to the app: node discards them
    // itself). Shutting down, no connection is kept for another request.
    if ((!req.complete && !incoming.bodyTaken && req.method !== 'GET' && req.method !== 'HEAD') || lifecycle?.closing === true) headers['connection'] = 'close';
    res.writeHead(answer.status, headers).end(answer.body);
  } catch (error) {
    logger?.error({ err: error }, 'could not answer a request');
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json', ...SECURITY_HEADERS });
    res.end();
  }
}

/**
 * Connection limits of the server (`TAVERN_MAX_CONNECTIONS`, `TAVERN_HEADERS_TIMEOUT_MS`,
 * `TAVERN_KEEP_ALIVE_TIMEOUT_MS`).
 *
 * @example
 * const options: HttpOptions = { maxConnections: 10_000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000 };
 */
export interface HttpOptions {
  /** Open connections at most; one more is closed as soon as it is accepted (default 10,000). */
  readonly maxConnections?: number;
  /** How long a client has to send a request's headers; a slower one (slowloris) is cut with 408 (default 10 s). */
  readonly headersTimeoutMs?: number;
  /** How long an idle kept-alive connection waits for the next request (default 5 s). */
  readonly keepAliveTimeoutMs?: number;
  /** A connection from an address this refuses is closed as soon as it is accepted, before any request is read. */
  readonly refuse?: (remoteAddress: string) => boolean;
}

export const HTTP_DEFAULTS = Object.freeze({ maxConnections: 10_000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000 });

const lifecycles = new WeakMap<Server, Lifecycle>();

/**
 * A node:http server answering through `app`, with the connection limits of `options`. The
 * timeouts are checked every second (Node checks every 30 s by default, so a slowloris client
 * held a connection 60 to 90 s).
 *
 * @example
 * const server = createHttpServer(app, logger, { headersTimeoutMs: 10_000 });
 */
export function createHttpServer(app: Pick<App, 'respond'>, logger?: Logger, options: HttpOptions = {}): Server {
  const lifecycle: Lifecycle = { closing: false };
  const headersTimeout = options.headersTimeoutMs ?? HTTP_DEFAULTS.headersTimeoutMs;
  const server = createServer(
    {
      headersTimeout,
      // The whole request (an upload's body too): Node's default, never below the headers' own.
      requestTimeout: Math.max(300_000, headersTimeout),
      keepAliveTimeout: options.keepAliveTimeoutMs ?? HTTP_DEFAULTS.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, headersTimeout),
    },
    (req, res) => void serve(app, req, res, logger, lifecycle),
  );
  server.maxConnections = options.maxConnections ?? HTTP_DEFAULTS.maxConnections;
  const { refuse } = options;
  if (refuse !== undefined) {
    server.on('connection', (socket: Socket) => {
      const from = socket.remoteAddress;
      if (from !== undefined && refuse(from.startsWith('::ffff:') ? from.slice(7) : from)) socket.destroy();
    });
  }
  lifecycles.set(server, lifecycle);
  return server;
}

/**
 * Shuts a server of {@link createHttpServer} down: no new connection is accepted, idle ones close
 * at once, each request in flight is answered with `Connection: close` (a request arriving
 * meanwhile on a connection still open is refused, `SERVER_SHUTTING_DOWN`), and it resolves as
 * soon as the last connection closed, or once `graceMs` passed (the rest are cut then).
 *
 * @example
 * process.on('SIGTERM', () => void closeHttpServer(server, 10_000).then(() => process.exit(0)));
 */
export function closeHttpServer(server: Server, graceMs: number): Promise<void> {
  const lifecycle = lifecycles.get(server);
  if (lifecycle !== undefined) lifecycle.closing = true;
  return new Promise((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}
