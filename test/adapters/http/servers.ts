/**
 * Loopback HTTP servers for the adapter tests: they count connections and record requests, and
 * `close` drops whatever is still connected.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';

/** A request as the server received it. */
export interface Received {
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: readonly string[];
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export interface TestServer {
  readonly host: string;
  readonly port: number;
  /** `http://host:port` (IPv6 hosts bracketed). */
  readonly origin: string;
  readonly requests: Received[];
  /** Accepted TCP connections. */
  connections: number;
  close(): Promise<void>;
}

export type Handler = (req: Received, res: ServerResponse) => void;

/**
 * An HTTP server on `host` (default 127.0.0.1) and `port` (default: any free one).
 *
 * @example
 * const server = await listen((_req, res) => res.writeHead(204).end());
 */
export const listen = async (handler: Handler, host = '127.0.0.1', port = 0): Promise<TestServer> => {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        rawHeaders: req.rawHeaders,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      state.requests.push(received);
      handler(received, res);
    });
  });
  server.on('connection', () => {
    state.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const bound = (server.address() as AddressInfo).port;
  const state: TestServer = {
    host,
    port: bound,
    origin: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    requests: [],
    connections: 0,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return state;
};

/** A raw TCP server that records the first bytes of each connection and never answers. */
export interface TcpSpy {
  readonly port: number;
  readonly firstBytes: Buffer[];
  close(): Promise<void>;
}

/**
 * A TCP listener on 127.0.0.1 that records what clients send first (e.g. a TLS ClientHello).
 *
 * @example
 * const spy = await listenTcp();
 */
export const listenTcp = async (): Promise<TcpSpy> => {
  const sockets = new Set<Socket>();
  const firstBytes: Buffer[] = [];
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.once('data', (chunk: Buffer) => {
      firstBytes.push(chunk);
      socket.destroy();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    firstBytes,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
};

/**
 * A port on 127.0.0.1 that nothing listens on (it was free a moment ago).
 *
 * @example
 * const port = await closedPort(); // connecting is refused
 */
export const closedPort = async (): Promise<number> => {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};
