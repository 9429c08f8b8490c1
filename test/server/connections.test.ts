/**
 * Connections and shutdown over real sockets (outside probe): a connection busy at shutdown is
 * answered with `Connection: close` and the server closes as soon as the last answer is out (it
 * waited for the keep-alive timeout); the connection cap, the header timeout (slowloris) and the
 * keep-alive timeout.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/server/app.js';
import { json } from '../../src/server/errors.js';
import { parseEnv } from '../../src/server/env.js';
import { closeHttpServer, createHttpServer, HTTP_DEFAULTS, type HttpOptions } from '../../src/server/http.js';
import type { Incoming, Outgoing } from '../../src/server/incoming.js';
import { eventually } from '../wait.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server?.listening === true ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/**
 * An app whose `/slow` answers only when the test releases it; every path it serves is recorded,
 * and `inSlow` resolves once a `/slow` request reached it.
 */
const slowApp = () => {
  const served: string[] = [];
  let release: (() => void) | undefined;
  const slow = new Promise<void>((resolve) => (release = resolve));
  let arrived: (() => void) | undefined;
  const inSlow = new Promise<void>((resolve) => (arrived = resolve));
  const app: Pick<App, 'respond'> = {
    respond: async (request: Incoming): Promise<Outgoing> => {
      served.push(request.path);
      if (request.path === '/slow') {
        arrived?.();
        await slow;
      }
      return json({ path: request.path });
    },
  };
  return { app, served, inSlow, release: () => release?.() };
};

/** The server side of each connection the server accepted, in order. */
let accepted: Socket[] = [];

const listen = async (app: Pick<App, 'respond'>, options: HttpOptions = {}): Promise<number> => {
  server = createHttpServer(app, undefined, options);
  accepted = [];
  server.on('connection', (socket: Socket) => accepted.push(socket));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

/** Resolves once the server accepted `count` connections. */
const acceptedCount = async (count: number): Promise<void> => {
  while (accepted.length < count) await once(server as Server, 'connection');
};

/** A client connection: what it received so far, and whether the server closed it. */
interface Client {
  readonly socket: Socket;
  text(): string;
  readonly closed: Promise<void>;
  /** Resolves once `count` answers (status lines) arrived. */
  answers(count: number): Promise<string[]>;
}

const open = (port: number): Promise<Client> =>
  new Promise((resolve, reject) => {
    let got = '';
    const waiters: (() => void)[] = [];
    const socket = connect(port, '127.0.0.1');
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    // Status lines (a body has no line end of its own: the next answer follows it directly).
    const statuses = () => [...got.matchAll(/HTTP\/1\.1 \d{3} [^\r]*/g)].map((m) => m[0]);
    socket.setEncoding('utf8').on('data', (c: string) => {
      got += c;
      for (const w of waiters.splice(0)) w();
    });
    socket.on('close', () => {
      for (const w of waiters.splice(0)) w();
    });
    socket.once('error', () => undefined);
    const answers = async (count: number): Promise<string[]> => {
      while (statuses().length < count && !socket.destroyed) await new Promise<void>((r) => waiters.push(r));
      return statuses();
    };
    socket.once('connect', () => resolve({ socket, text: () => got, closed, answers }));
    socket.once('error', reject);
  });

const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`;

describe('shutdown (closeHttpServer)', () => {
  it('answers the request in flight with Connection: close and closes as soon as it is out, not after the keep-alive timeout', async () => {
    const { app, release, inSlow } = slowApp();
    // Ten minutes of keep-alive: a server waiting on it would outlast the test.
    const port = await listen(app, { keepAliveTimeoutMs: 600_000 });
    const busy = await open(port);
    busy.socket.write(get('/fast'));
    expect(await busy.answers(1)).toEqual(['HTTP/1.1 200 OK']);
    busy.socket.write(get('/slow'));
    await inSlow;
    const idle = await open(port);
    idle.socket.write(get('/fast'));
    await idle.answers(1);
    expect(idle.text()).toMatch(/connection: keep-alive/i);

    const closed = closeHttpServer(server as Server, 600_000);
    // The idle kept-alive connection goes at once.
    await idle.closed;
    release();
    expect(await busy.answers(2)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    const last = busy.text().slice(busy.text().lastIndexOf('HTTP/1.1 '));
    expect(last).toMatch(/connection: close/i);
    await busy.closed;
    await closed;
    expect(server?.listening).toBe(false);
  });

  it('refuses a request that arrives once shutdown began: 503 SERVER_SHUTTING_DOWN, Connection: close, the app never sees it', async () => {
    const { app, served } = slowApp();
    const port = await listen(app, { keepAliveTimeoutMs: 600_000 });
    const late = await open(port);
    // Headers begun before the shutdown (the server has read them: its connection is busy, not
    // idle), finished after it.
    const begun = 'GET /late HTTP/1.1\r\nHost: a\r\n';
    late.socket.write(begun);
    await acceptedCount(1);
    await eventually('the server read the first header lines', () => (accepted[0]?.bytesRead ?? 0) >= begun.length, { everyMs: 5 });
    const closed = closeHttpServer(server as Server, 600_000);
    late.socket.write('\r\n');
    expect(await late.answers(1)).toEqual(['HTTP/1.1 503 Service Unavailable']);
    expect(late.text()).toMatch(/connection: close/i);
    expect(late.text()).toMatch(/retry-after: 1/i);
    expect(late.text()).toContain('"code":"SERVER_SHUTTING_DOWN"');
    await late.closed;
    await closed;
    expect(served).toEqual([]);
  });

  it('cuts what is still running once the grace is over', async () => {
    const { app, inSlow } = slowApp();
    const port = await listen(app);
    const stuck = await open(port);
    stuck.socket.write(get('/slow'));
    await inSlow;
    await closeHttpServer(server as Server, 100);
    await stuck.closed;
    expect(stuck.text()).toBe('');
  });
});

describe('connection limits', () => {
  it('closes a connection over the cap at once; those within it are served', async () => {
    const { app } = slowApp();
    const port = await listen(app, { maxConnections: 2 });
    const [a, b] = [await open(port), await open(port)];
    await acceptedCount(2);
    const c = await open(port);
    c.socket.write(get('/fast'));
    await c.closed;
    expect(c.text()).toBe('');
    for (const kept of [a, b]) {
      kept.socket.write(get('/fast'));
      expect(await kept.answers(1)).toEqual(['HTTP/1.1 200 OK']);
    }
  });

  it('cuts a client that sends its headers too slowly (slowloris) with 408', async () => {
    const { app, served } = slowApp();
    const port = await listen(app, { headersTimeoutMs: 300 });
    const slow = await open(port);
    slow.socket.write('GET /fast HTTP/1.1\r\nHost: a\r\n');
    // A header line now and then, never the end of the headers.
    const drip = setInterval(() => slow.socket.writable && slow.socket.write('X-Drip: 1\r\n'), 50);
    try {
      await slow.closed;
    } finally {
      clearInterval(drip);
    }
    expect(slow.text()).toMatch(/^HTTP\/1\.1 408/);
    expect(served).toEqual([]);
  });

  it('closes a kept-alive connection idle for the keep-alive timeout', async () => {
    const { app } = slowApp();
    const port = await listen(app, { keepAliveTimeoutMs: 1_000 });
    const client = await open(port);
    client.socket.write(get('/fast'));
    await client.answers(1);
    expect(client.text()).toMatch(/keep-alive: timeout=1\r\n/i);
    await client.closed;
  });
});

describe('their variables', () => {
  it('default to a 10,000 connection cap, a 10 s header timeout, a 5 s keep-alive and a 10 s shutdown grace', () => {
    expect(parseEnv({}).http).toEqual({ maxConnections: 10_000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000 });
    expect(HTTP_DEFAULTS).toEqual(parseEnv({}).http);
    expect(parseEnv({}).shutdownGraceMs).toBe(10_000);
    const env = parseEnv({ TAVERN_MAX_CONNECTIONS: '500', TAVERN_HEADERS_TIMEOUT_MS: '5000', TAVERN_KEEP_ALIVE_TIMEOUT_MS: '0', TAVERN_SHUTDOWN_GRACE_MS: '2500' });
    expect(env.http).toEqual({ maxConnections: 500, headersTimeoutMs: 5_000, keepAliveTimeoutMs: 0 });
    expect(env.shutdownGraceMs).toBe(2_500);
    for (const [name, bad] of [['TAVERN_MAX_CONNECTIONS', '0'], ['TAVERN_HEADERS_TIMEOUT_MS', '999'], ['TAVERN_KEEP_ALIVE_TIMEOUT_MS', '-1'], ['TAVERN_SHUTDOWN_GRACE_MS', '1.5'], ['TAVERN_MAX_CONNECTIONS', 'many']] as const) {
      expect(() => parseEnv({ [name]: bad }), `${name}=${bad}`).toThrow(name);
    }
  });
});
