/**
 * The game proxy's `tcp_tls` ports (wire.md §5.2: one entrypoint per port, TLS terminated, TCP to
 * the lobby; read/write timeout 12 h, idle 30 s): a TLS listener per route on its public port
 * (26000..31999, given by the core's port space), with the wildcard certificate
 * `*.lobby.<region>.<job domain>`, piping the plain bytes to the lobby's host port. HAProxy cannot
 * open a listener without a reload, and a reload per lobby would cost more than Node's TLS, which
 * moves these bytes at kernel-copy speed next to the handshake; HTTP and HTTPS stay on HAProxy.
 *
 * The certificate files are polled; a new pair is served to new connections without a restart
 * (an invalid pair is logged and the previous one kept).
 */
import { readFile, stat } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { createSecureContext, createServer, type SecureContextOptions, type Server, type TLSSocket } from 'node:tls';
import type { ProxyRoute } from '../core/effects.js';
import type { ProxyRoutes } from '../io/index.js';
import type { Logger } from '../io/log.js';

export interface TlsPortsOptions {
  /** Where the listeners bind (the game proxy's address). */
  readonly host: string;
  /** Where lobbies' host ports are reached (the Docker runtime's publish address). */
  readonly upstreamHost: string;
  /**
   * Where one lobby's host ports are reached, when lobbies run on several hosts (the Swarm node its
   * task runs on), asked at each connection; undefined while it is not known (the connection is
   * closed, counted as a failed connection to the lobby). Absent: `upstreamHost` for every lobby.
   */
  readonly upstreamOf?: (lobbyId: string) => string | undefined;
  /** The wildcard certificate (chain included) and its key, PEM. */
  readonly certFile: string;
  readonly keyFile: string;
  /** A connection with no byte either way for this long is closed (Game Guard: 30 s). */
  readonly idleTimeoutMs: number;
  /** A client must finish its handshake within this (default 10 s). */
  readonly handshakeTimeoutMs?: number;
  /** The lobby must accept the connection within this (default 5 s). */
  readonly connectTimeoutMs?: number;
  /** A connection is closed after this long whatever it does (Game Guard's 12 h read/write timeout). */
  readonly lifetimeMs?: number;
  /** Connections at once per port at most (default unlimited). */
  readonly maxConnections?: number;
  /** How often the certificate files are checked for a new pair (default 5 s). */
  readonly certPollMs?: number;
  readonly log: Logger;
}

/** One `tcp_tls` route's counters since it was bound. */
export interface TlsPortStats {
  readonly route: ProxyRoute;
  /** Connections whose handshake completed. */
  readonly connections: number;
  /** Connections that failed their handshake (not TLS, timed out, refused the certificate). */
  readonly handshakeErrors: number;
  /** Connections to the lobby that failed (nothing listening on its port). */
  readonly connectErrors: number;
  /** Plain bytes from clients to the lobby, and back. */
  readonly bytesIn: number;
  readonly bytesOut: number;
}

type Counters = { -readonly [K in Exclude<keyof TlsPortStats, 'route'>]: number };

interface Listener {
  readonly route: ProxyRoute;
  readonly server: Server;
  readonly sockets: Set<Socket>;
  readonly stats: Counters;
}

const HOUR_MS = 3_600_000;

const sameRoute = (a: ProxyRoute, b: ProxyRoute): boolean => a.lobbyId === b.lobbyId && a.label === b.label && a.hostPort === b.hostPort && a.region === b.region;

/**
 * @example
 * const ports = await TlsPorts.start({ host: '0.0.0.0', upstreamHost: '127.0.0.1', certFile, keyFile, idleTimeoutMs: 30_000, log });
 * await ports.bind(route); // TLS on route.publicPort, plain TCP to upstreamHost:route.hostPort
 */
export class TlsPorts implements ProxyRoutes {
  readonly #o: TlsPortsOptions;
  readonly #listeners = new Map<number, Listener>();
  /** Binds and unbinds of one port run one after another. */
  readonly #queue = new Map<number, Promise<void>>();
  #context: SecureContextOptions;
  #stamp: string;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  private constructor(options: TlsPortsOptions, context: SecureContextOptions, stamp: string) {
    this.#o = options;
    this.#context = context;
    this.#stamp = stamp;
  }

  /** Reads the certificate pair (throws when it is missing or invalid) and starts watching it. */
  static async start(options: TlsPortsOptions): Promise<TlsPorts> {
    const [context, stamp] = await Promise.all([readPair(options), stampOf(options)]);
    const ports = new TlsPorts(options, context, stamp);
    ports.#timer = setInterval(() => void ports.#checkCert(), options.certPollMs ?? 5_000);
    ports.#timer.unref();
    return ports;
  }

  bind(route: ProxyRoute): Promise<void> {
    if (route.protocol !== 'tcp_tls') return Promise.resolve();
    return this.#serially(route.publicPort, async () => {
      const current = this.#listeners.get(route.publicPort);
      if (current !== undefined && sameRoute(current.route, route)) return;
      // The port was given to another lobby: its old route goes first (its unbind may come later).
      if (current !== undefined) await this.#stop(current);
      if (this.#closed) return;
      await this.#listen(route);
    });
  }

  unbind(route: ProxyRoute): Promise<void> {
    if (route.protocol !== 'tcp_tls') return Promise.resolve();
    return this.#serially(route.publicPort, async () => {
      const current = this.#listeners.get(route.publicPort);
      // A late unbind of a port already given to another lobby leaves the new route alone.
      if (current !== undefined && sameRoute(current.route, route)) await this.#stop(current);
    });
  }

  /** The counters of every bound route. */
  stats(): TlsPortStats[] {
    return [...this.#listeners.values()].map((l) => ({ route: l.route, ...l.stats }));
  }

  /** Routes bound now. */
  get size(): number {
    return this.#listeners.size;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await Promise.all([...this.#queue.values()]);
    await Promise.all([...this.#listeners.values()].map((l) => this.#stop(l)));
  }

  #serially(port: number, f: () => Promise<void>): Promise<void> {
    const next = (this.#queue.get(port) ?? Promise.resolve()).then(f);
    const settled = next.catch(() => undefined);
    this.#queue.set(port, settled);
    void settled.then(() => {
      if (this.#queue.get(port) === settled) this.#queue.delete(port);
    });
    return next;
  }

  async #listen(route: ProxyRoute): Promise<void> {
    const o = this.#o;
    const server = createServer({ ...this.#context, handshakeTimeout: o.handshakeTimeoutMs ?? 10_000 });
    if (o.maxConnections !== undefined) server.maxConnections = o.maxConnections;
    const listener: Listener = {
      route,
      server,
      sockets: new Set(),
      stats: { connections: 0, handshakeErrors: 0, connectErrors: 0, bytesIn: 0, bytesOut: 0 },
    };
    server.on('tlsClientError', (_error, socket) => {
      listener.stats.handshakeErrors += 1;
      socket.destroy();
    });
    server.on('secureConnection', (client) => this.#pipe(listener, client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(route.publicPort, o.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (error: Error) => o.log.error({ err: error, route }, 'tcp_tls listener failed'));
    this.#listeners.set(route.publicPort, listener);
  }

  #pipe(listener: Listener, client: TLSSocket): void {
    const o = this.#o;
    const { route } = listener;
    const host = o.upstreamOf === undefined ? o.upstreamHost : o.upstreamOf(route.lobbyId);
    if (host === undefined) {
      listener.stats.connectErrors += 1;
      client.destroy();
      return;
    }
    const upstream = connect({ host, port: route.hostPort });
    listener.sockets.add(client);
    listener.stats.connections += 1;
    const connectTimer = setTimeout(() => upstream.destroy(new Error('connect timeout')), o.connectTimeoutMs ?? 5_000);
    const lifetime = setTimeout(() => client.destroy(), o.lifetimeMs ?? 12 * HOUR_MS);
    let connected = false;
    const done = (): void => {
      clearTimeout(connectTimer);
      clearTimeout(lifetime);
      listener.sockets.delete(client);
      client.destroy();
      upstream.destroy();
    };
    upstream.once('connect', () => {
      connected = true;
      clearTimeout(connectTimer);
    });
    upstream.on('error', () => {
      if (!connected) listener.stats.connectErrors += 1;
      done();
    });
    client.on('error', done);
    client.on('close', done);
    upstream.on('close', done);
    client.setTimeout(o.idleTimeoutMs, done);
    upstream.setTimeout(o.idleTimeoutMs, done);
    client.on('data', (chunk: Buffer) => (listener.stats.bytesIn += chunk.length));
    upstream.on('data', (chunk: Buffer) => (listener.stats.bytesOut += chunk.length));
    client.pipe(upstream);
    upstream.pipe(client);
  }

  async #stop(listener: Listener): Promise<void> {
    if (this.#listeners.get(listener.route.publicPort) === listener) this.#listeners.delete(listener.route.publicPort);
    const closed = new Promise<void>((resolve) => listener.server.close(() => resolve()));
    for (const socket of listener.sockets) socket.destroy();
    await closed;
  }

  async #checkCert(): Promise<void> {
    if (this.#closed) return;
    try {
      const stamp = await stampOf(this.#o);
      if (stamp === this.#stamp) return;
      const context = await readPair(this.#o);
      for (const l of this.#listeners.values()) l.server.setSecureContext(context);
      this.#context = context;
      this.#stamp = stamp;
      this.#o.log.info({ cert: this.#o.certFile }, 'tcp_tls certificate rotated');
    } catch (error) {
      this.#o.log.error({ err: error }, 'the tcp_tls certificate could not be rotated; the previous one is still served');
    }
  }
}

/** The pair, loaded once to check it: a missing file, bad PEM or a key of another certificate throws. */
const readPair = async (o: Pick<TlsPortsOptions, 'certFile' | 'keyFile'>): Promise<SecureContextOptions> => {
  const [cert, key] = await Promise.all([readFile(o.certFile), readFile(o.keyFile)]);
  createSecureContext({ cert, key });
  return { cert, key };
};

const stampOf = async (o: Pick<TlsPortsOptions, 'certFile' | 'keyFile'>): Promise<string> => {
  const [c, k] = await Promise.all([stat(o.certFile), stat(o.keyFile)]);
  return `${c.mtimeMs}:${c.size}:${k.mtimeMs}:${k.size}`;
};
