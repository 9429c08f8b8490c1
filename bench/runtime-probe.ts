/**
 * The readiness waits of the `runtime` benchmark: the moment a UDP (or TCP) echo first answers
 * on a port, as a player's client would see it.
 *
 * Each attempt uses a socket of its own (a new source port). With Docker's kernel port publishing
 * (`--userland-proxy=false`), a datagram sent before the container's DNAT rule exists leaves a
 * conntrack entry without translation, and every later datagram of that same flow keeps missing
 * the container until the entry expires; a new source port is a new flow.
 */
import { createSocket, type Socket } from 'node:dgram';
import { connect, type Socket as TcpSocket } from 'node:net';

export interface ProbeOptions {
  /** A new attempt this often (ms). */
  readonly everyMs?: number;
  /** How long an attempt's socket waits for a late echo (ms). */
  readonly attemptMs?: number;
  readonly timeoutMs?: number;
}

/**
 * Resolves with `performance.now()` at the first echo of a probe datagram from `host:port`;
 * rejects after `timeoutMs`.
 *
 * @example
 * const t0 = performance.now(); await container.start(); const ms = (await firstUdpEcho('127.0.0.1', port)) - t0;
 */
export const firstUdpEcho = (host: string, port: number, options: ProbeOptions = {}): Promise<number> => {
  const everyMs = options.everyMs ?? 2;
  const attemptMs = options.attemptMs ?? 250;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const open = new Set<Socket>();
  let done = false;
  return new Promise<number>((resolve, reject) => {
    const finish = (error?: Error, at?: number): void => {
      if (done) return;
      done = true;
      clearInterval(timer);
      clearTimeout(deadline);
      for (const s of open) s.close();
      open.clear();
      if (error !== undefined) reject(error);
      else resolve(at ?? performance.now());
    };
    const attempt = (): void => {
      const socket = createSocket('udp4');
      open.add(socket);
      const payload = Buffer.from(`probe ${performance.now()}\n`);
      socket.on('message', (data) => {
        if (data.equals(payload)) finish(undefined, performance.now());
      });
      // Refused (nothing listens yet): the next attempt will tell.
      socket.on('error', () => undefined);
      socket.send(payload, port, host);
      setTimeout(() => {
        if (open.delete(socket)) socket.close();
      }, attemptMs).unref();
    };
    const timer = setInterval(attempt, everyMs);
    const deadline = setTimeout(() => finish(new Error(`no UDP echo from ${host}:${port} within ${timeoutMs} ms`)), timeoutMs);
    attempt();
  });
};

/**
 * Resolves with `performance.now()` at the first TCP echo of a probe line from `host:port`: a new
 * connection every `everyMs` until one echoes (a connection refused, or accepted and then closed
 * by Docker's userland proxy while nothing listens in the container yet, is tried again); rejects
 * after `timeoutMs`.
 *
 * @example
 * const at = await firstTcpEcho('127.0.0.1', port);
 */
export const firstTcpEcho = (host: string, port: number, options: ProbeOptions = {}): Promise<number> => {
  const everyMs = options.everyMs ?? 5;
  const attemptMs = options.attemptMs ?? 250;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const open = new Set<TcpSocket>();
  let done = false;
  return new Promise<number>((resolve, reject) => {
    const finish = (error?: Error, at?: number): void => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      for (const s of open) s.destroy();
      open.clear();
      if (error !== undefined) reject(error);
      else resolve(at ?? performance.now());
    };
    const attempt = (): void => {
      if (done) return;
      const line = Buffer.from(`probe ${performance.now()}\n`);
      let got = Buffer.alloc(0);
      const socket = connect({ host, port, noDelay: true }, () => socket.write(line));
      open.add(socket);
      let retried = false;
      const retry = (): void => {
        if (retried) return;
        retried = true;
        open.delete(socket);
        socket.destroy();
        setTimeout(attempt, everyMs);
      };
      socket.on('data', (data: Buffer) => {
        got = Buffer.concat([got, data]);
        if (got.length >= line.length && got.subarray(0, line.length).equals(line)) finish(undefined, performance.now());
      });
      socket.on('error', retry);
      socket.on('close', retry);
      socket.setTimeout(attemptMs, retry);
    };
    const deadline = setTimeout(() => finish(new Error(`no TCP echo from ${host}:${port} within ${timeoutMs} ms`)), timeoutMs);
    attempt();
  });
};
