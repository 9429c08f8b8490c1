/**
 * Default ports that may not be free: a port is probed (bound and closed at once) and, when this
 * user may not bind it (below 1024 without root) or another program holds it, a fallback is used
 * and the reason said. Ports an operator sets explicitly have no fallback: they fail as they are.
 */
import type { Server } from 'node:net';
import { createServer } from 'node:net';

const reason = (error: NodeJS.ErrnoException): string =>
  error.code === 'EACCES' ? 'not permitted for this user (ports below 1024 need root or CAP_NET_BIND_SERVICE)'
    : error.code === 'EADDRINUSE' ? 'in use by another program'
      : error.message;

/**
 * Why `port` cannot be bound on `host` now, or undefined when it can.
 *
 * @example
 * await bindProblem('127.0.0.1', 80); // 'not permitted for this user (…)' when not root
 */
export const bindProblem = (host: string, port: number): Promise<string | undefined> =>
  new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(reason(error)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });

/**
 * `port`, or `fallback` when there is one and `port` cannot be bound on `host`; `onFallback` is told why.
 *
 * @example
 * const http = await portOr('127.0.0.1', 80, 8880, (why) => log.warn({}, `port 80 is ${why}: 8880 instead`));
 */
export async function portOr(host: string, port: number, fallback: number | undefined, onFallback: (why: string) => void): Promise<number> {
  if (fallback === undefined) return port;
  const why = await bindProblem(host, port);
  if (why === undefined) return port;
  onFallback(why);
  return fallback;
}

const listenOnce = (server: Server, host: string, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    const failed = (error: Error): void => reject(error);
    server.once('error', failed).listen(port, host, () => {
      server.off('error', failed);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });

/**
 * Listens `server` (HTTP, HTTPS or TCP) on `port`, or on `fallback` (0: any free port) when `port`
 * is taken or not permitted and a fallback is given; resolves with the port it listens on.
 *
 * @example
 * const port = await listenOr(cdn, '127.0.0.1', 8081, 0, (why) => log.warn({}, `CDN port 8081 is ${why}`));
 */
export async function listenOr(server: Server, host: string, port: number, fallback: number | undefined, onFallback: (why: string) => void): Promise<number> {
  try {
    return await listenOnce(server, host, port);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (fallback === undefined || (code !== 'EADDRINUSE' && code !== 'EACCES')) throw error;
    onFallback(reason(error as NodeJS.ErrnoException));
    return listenOnce(server, host, fallback);
  }
}
