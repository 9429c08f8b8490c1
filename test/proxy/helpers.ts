/**
 * Game proxy test helpers: a free port, the upstream process (test/proxy/upstream.js), raw HTTP
 * requests with a chosen Host header to 127.0.0.1, a WebSocket handshake, and whether HAProxy is
 * installed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { ProxyLimits } from '../../src/adapters/haproxy/config.js';
import type { Logger } from '../../src/io/log.js';

export const HAPROXY = process.env['TAVERN_HAPROXY'] ?? '/usr/sbin/haproxy';
export const NEED = { what: 'HAProxy', start: 'install Debian\'s haproxy (apt-get install haproxy)' } as const;

/** Why HAProxy cannot run here, or undefined. */
export const haproxyProblem = (): string | undefined => {
  const run = spawnSync(HAPROXY, ['-v'], { encoding: 'utf8' });
  if (run.error !== undefined) return `${HAPROXY}: ${run.error.message}`;
  return /HAProxy version 2\.\d|HAProxy version 3/.test(run.stdout) ? undefined : `unexpected version: ${run.stdout.split('\n')[0] ?? ''}`;
};

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

export const QUIET: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Game Guard's limits, loosened for tests that do not test them. */
export const OPEN_LIMITS: ProxyLimits = { headerTimeoutMs: 5_000, idleTimeoutMs: 30_000, connectTimeoutMs: 2_000, maxConnections: 4_000 };

/** Starts test/proxy/upstream.js on these ports; resolves once they listen. */
export const startUpstream = async (ports: readonly number[]): Promise<ChildProcess> => {
  const script = fileURLToPath(new URL('./upstream.js', import.meta.url));
  const child = spawn(process.execPath, [script, ...ports.map(String)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`upstream exited (${code})`)));
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve();
    });
  });
  return child;
};

export interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** GET `path` from 127.0.0.1:`port` with `Host: host` (a fresh connection each time). */
export const get = (port: number, host: string, path = '/', agent: false | undefined = false): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host }, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject).end();
  });

/** Opens a WebSocket through 127.0.0.1:`port` with `Host: host`; resolves with the raw socket after the 101. */
export const openWebSocket = (port: number, host: string, path = '/ws'): Promise<{ socket: Socket; head: string }> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let head = '';
    const onData = (chunk: Buffer): void => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      if (!head.startsWith('HTTP/1.1 101')) reject(new Error(`no upgrade: ${head.split('\r\n')[0] ?? ''}`));
      else resolve({ socket, head: head.slice(0, end) });
    };
    socket.on('data', onData).on('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
  });

/** Sends `text` on an upgraded socket and resolves with the echo. */
export const echo = (socket: Socket, text: string): Promise<string> =>
  new Promise((resolve, reject) => {
    let got = '';
    const onData = (chunk: Buffer): void => {
      got += chunk.toString('utf8');
      if (got.length >= text.length) {
        socket.off('data', onData);
        resolve(got);
      }
    };
    socket.on('data', onData).once('error', reject);
    socket.write(text);
  });
