/**
 * `tcp_tls` ports (wire.md §5.2): a TLS listener per route on its public port, with the wildcard
 * certificate made by a CA of the test, forwarding plain TCP to the lobby's host port (an echo
 * server here); unbound before its port is given to another lobby; counters, idle timeout,
 * handshake failures and a rotated certificate without a restart.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TlsPorts } from '../../src/adapters/tls-ports.js';
import type { ProxyRoute } from '../../src/core/effects.js';
import { makeCa, writeLeaf } from './certs.js';
import { eventually } from '../wait.js';
import { freePort, QUIET } from './helpers.js';

/** A TCP server answering every chunk with `<name>:<chunk>`. */
const echoServer = async (name: string): Promise<{ server: Server; port: number }> => {
  const server = createServer((s) => {
    s.on('data', (chunk) => s.write(`${name}:${chunk.toString()}`));
    s.on('error', () => undefined);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, port };
};

/** A plain TCP connection to `port`. */
const createConnectionTo = (port: number, onConnect: () => void): Socket => {
  const s = netConnect({ host: '127.0.0.1', port }, onConnect);
  s.on('error', () => undefined);
  return s;
};

const HOST = 'lobby-x-raw.lobby.local.example.test';

/** A TLS connection to `port` trusting only `ca`, with SNI. */
const open = (port: number, ca: Buffer): Promise<TLSSocket> =>
  new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: HOST, ca }, () => resolve(socket));
    socket.once('error', reject);
  });

/** Writes `text` and reads until the answer is complete (or the socket closes). */
const ask = (socket: TLSSocket | Socket, text: string, expected: number): Promise<string> =>
  new Promise((resolve, reject) => {
    let got = '';
    const onData = (c: Buffer): void => {
      got += c.toString();
      if (got.length >= expected) finish();
    };
    const finish = (): void => {
      socket.off('data', onData);
      resolve(got);
    };
    socket.on('data', onData);
    socket.once('close', finish);
    socket.once('error', reject);
    socket.write(text);
  });

const closed = (socket: TLSSocket | Socket): Promise<void> =>
  new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

const refused = (port: number): Promise<string> =>
  new Promise((resolve) => {
    const s = tlsConnect({ host: '127.0.0.1', port, servername: HOST, rejectUnauthorized: false }, () => resolve('connected'));
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });

/** A log that keeps its messages; `logged(message, since)` resolves once one was written after the first `since`. */
const recordingLog = () => {
  const messages: string[] = [];
  const waiters = new Set<() => void>();
  const write = (_obj: object, msg?: string): void => {
    messages.push(msg ?? '');
    for (const wake of waiters) wake();
  };
  const logged = (message: string, since: number): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (!messages.slice(since).includes(message)) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  return { log: { info: write, warn: write, error: write }, messages, logged };
};

describe('tcp_tls ports (TLS listener per route)', () => {
  const recorded = recordingLog();
  let dir: string;
  let ports: TlsPorts;
  let one: { server: Server; port: number };
  let two: { server: Server; port: number };
  let caOne: Buffer;
  const route = (lobbyId: string, publicPort: number, hostPort: number): ProxyRoute => ({ lobbyId, region: 'local', label: 'raw', protocol: 'tcp_tls', publicPort, hostPort });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tavern-tls-ports-'));
    makeCa(dir, 'ca-one');
    makeCa(dir, 'ca-two');
    writeLeaf(dir, 'ca-one', '0x1001');
    caOne = readFileSync(join(dir, 'ca-one.crt'));
    one = await echoServer('one');
    two = await echoServer('two');
    ports = await TlsPorts.start({
      host: '127.0.0.1', upstreamHost: '127.0.0.1', certFile: join(dir, 'lobby.crt'), keyFile: join(dir, 'lobby.key'),
      idleTimeoutMs: 600, connectTimeoutMs: 1_000, handshakeTimeoutMs: 500, certPollMs: 100, log: recorded.log,
    });
  });

  afterAll(async () => {
    await ports?.close();
    one?.server.close();
    two?.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to start without a loadable certificate pair', async () => {
    const base = { host: '127.0.0.1', upstreamHost: '127.0.0.1', idleTimeoutMs: 1_000, log: QUIET };
    await expect(TlsPorts.start({ ...base, certFile: join(dir, 'missing.crt'), keyFile: join(dir, 'lobby.key') })).rejects.toThrow(/ENOENT/);
    // A key that is not the certificate's.
    await expect(TlsPorts.start({ ...base, certFile: join(dir, 'lobby.crt'), keyFile: join(dir, 'ca-two.key') })).rejects.toThrow(/key values mismatch/i);
  });

  it('terminates TLS on the public port and forwards the plain bytes to the lobby, counting them', async () => {
    const publicPort = await freePort();
    await ports.bind(route('lobby-a', publicPort, one.port));
    const socket = await open(publicPort, caOne);
    expect(socket.getPeerCertificate().serialNumber).toBe('1001');
    expect(await ask(socket, 'hello', 9)).toBe('one:hello');
    expect(await ask(socket, 'again', 9)).toBe('one:again');
    socket.destroy();
    const [stats] = ports.stats().filter((s) => s.route.publicPort === publicPort);
    expect(stats).toMatchObject({ connections: 1, handshakeErrors: 0, connectErrors: 0, bytesIn: 10, bytesOut: 18 });
    // Not trusted by another CA: the handshake fails on the client's side.
    await expect(open(publicPort, readFileSync(join(dir, 'ca-two.crt')))).rejects.toThrow(/certificate/i);
    await ports.unbind(route('lobby-a', publicPort, one.port));
  });

  it('ignores routes of other protocols', async () => {
    const publicPort = await freePort();
    await ports.bind({ ...route('lobby-h', publicPort, one.port), protocol: 'https' });
    expect(ports.stats().some((s) => s.route.publicPort === publicPort)).toBe(false);
    expect(await refused(publicPort)).toBe('ECONNREFUSED');
  });

  it('closes the port and its connections on unbind, before the port is given to another lobby', async () => {
    const publicPort = await freePort();
    await ports.bind(route('lobby-b', publicPort, one.port));
    const held = await open(publicPort, caOne);
    expect(await ask(held, 'x', 5)).toBe('one:x');
    await ports.unbind(route('lobby-b', publicPort, one.port));
    await closed(held);
    expect(await refused(publicPort)).toBe('ECONNREFUSED');
    // The port goes to lobby c: its lobby answers.
    await ports.bind(route('lobby-c', publicPort, two.port));
    const next = await open(publicPort, caOne);
    expect(await ask(next, 'y', 5)).toBe('two:y');
    next.destroy();
    await ports.unbind(route('lobby-c', publicPort, two.port));
  });

  it('replaces the route of a port given to another lobby, and a late unbind of the old one leaves the new one', async () => {
    const publicPort = await freePort();
    await ports.bind(route('lobby-d', publicPort, one.port));
    const old = await open(publicPort, caOne);
    await ports.bind(route('lobby-e', publicPort, two.port));
    await closed(old);
    await ports.unbind(route('lobby-d', publicPort, one.port));
    const now = await open(publicPort, caOne);
    expect(await ask(now, 'z', 5)).toBe('two:z');
    now.destroy();
    // Binding the same route twice is one listener.
    await ports.bind(route('lobby-e', publicPort, two.port));
    expect(ports.stats().filter((s) => s.route.publicPort === publicPort)).toHaveLength(1);
    await ports.unbind(route('lobby-e', publicPort, two.port));
    expect(ports.stats().some((s) => s.route.publicPort === publicPort)).toBe(false);
  });

  it('counts a lobby that does not listen, and a client that does not speak TLS, and closes both', async () => {
    const publicPort = await freePort();
    const nobody = await freePort();
    await ports.bind(route('lobby-f', publicPort, nobody));
    const socket = await open(publicPort, caOne);
    await closed(socket);
    const plain = await new Promise<Socket>((resolve) => {
      const s: Socket = createConnectionTo(publicPort, () => resolve(s));
    });
    plain.write('GET / HTTP/1.1\r\n\r\n');
    await closed(plain);
    const [stats] = ports.stats().filter((s) => s.route.publicPort === publicPort);
    expect(stats).toMatchObject({ connections: 1, connectErrors: 1, handshakeErrors: 1 });
    await ports.unbind(route('lobby-f', publicPort, nobody));
  });

  it('closes a connection idle for longer than the idle timeout, and one that never finishes its handshake', async () => {
    const publicPort = await freePort();
    await ports.bind(route('lobby-g', publicPort, one.port));
    const socket = await open(publicPort, caOne);
    expect(await ask(socket, 'w', 5)).toBe('one:w');
    // A connection that keeps talking (a byte every 100 ms, under the 600 ms idle timeout) is still
    // open when the idle one is closed, and for ten more echoes after (a second: past its own idle
    // timeout): closed for silence, not age. Once it falls silent it is closed too.
    const busy = await open(publicPort, caOne);
    let busyClosed = false;
    let echoes = 0;
    busy.once('close', () => (busyClosed = true));
    busy.on('data', (chunk: Buffer) => (echoes += chunk.toString().split('one:').length - 1));
    const talk = setInterval(() => busy.write('b'), 100);
    try {
      await closed(socket);
      expect(busyClosed).toBe(false);
      const after = echoes;
      await eventually('ten more echoes on the talking connection', () => busyClosed || echoes >= after + 10, { timeoutMs: 10_000, everyMs: 20 });
      expect(busyClosed).toBe(false);
    } finally {
      clearInterval(talk);
    }
    await closed(busy);
    const silent = await new Promise<Socket>((resolve) => {
      const s: Socket = createConnectionTo(publicPort, () => resolve(s));
    });
    await closed(silent);
    await ports.unbind(route('lobby-g', publicPort, one.port));
  });

  it('serves a rotated certificate pair to new connections without a restart, and keeps the old one when the new pair is broken', async () => {
    const publicPort = await freePort();
    await ports.bind(route('lobby-r', publicPort, one.port));
    const before = recorded.messages.length;
    writeLeaf(dir, 'ca-two', '0x2002');
    const caTwo = readFileSync(join(dir, 'ca-two.crt'));
    const serialOf = (ca: Buffer): Promise<string> => open(publicPort, ca).then((s) => {
      const serial = s.getPeerCertificate().serialNumber;
      s.destroy();
      return serial;
    }, () => '');
    await recorded.logged('tcp_tls certificate rotated', before);
    expect(await serialOf(caTwo)).toBe('2002');
    // A broken pair (a key that is not the certificate's): the last good pair is still served.
    const rotated = recorded.messages.length;
    writeFileSync(join(dir, 'lobby.key'), readFileSync(join(dir, 'ca-one.key')));
    await recorded.logged('the tcp_tls certificate could not be rotated; the previous one is still served', rotated);
    expect(await serialOf(caTwo)).toBe('2002');
    await ports.unbind(route('lobby-r', publicPort, one.port));
  });

  it("forwards to the lobby's host as the runtime places it (upstreamOf): closes a connection while it is not placed, counted as a failed connection", async () => {
    // A valid pair again (the rotation test leaves a broken one), from the CA the client trusts.
    writeLeaf(dir, 'ca-one', '0x1009');
    const placed = new Map<string, string>();
    const far = createServer((s) => s.on('data', (chunk) => s.write(`far:${chunk.toString()}`)).on('error', () => undefined));
    await new Promise<void>((resolve) => far.listen(one.port, '127.0.0.2', resolve));
    const moving = await TlsPorts.start({
      host: '127.0.0.1', upstreamHost: '127.0.0.1', upstreamOf: (lobbyId) => placed.get(lobbyId), certFile: join(dir, 'lobby.crt'), keyFile: join(dir, 'lobby.key'),
      idleTimeoutMs: 5_000, log: QUIET,
    });
    try {
      const publicPort = await freePort();
      await moving.bind(route('lobby-p', publicPort, one.port));
      const early = await open(publicPort, caOne);
      await closed(early);
      expect(moving.stats()[0]).toMatchObject({ connections: 0, connectErrors: 1 });
      placed.set('lobby-p', '127.0.0.2');
      const socket = await open(publicPort, caOne);
      expect(await ask(socket, 'hi', 6)).toBe('far:hi');
      socket.destroy();
      placed.set('lobby-p', '127.0.0.1');
      const back = await open(publicPort, caOne);
      expect(await ask(back, 'hi', 6)).toBe('one:hi');
      back.destroy();
    } finally {
      await moving.close();
      far.close();
    }
  });
});
