/**
 * SIGTERM on a real server process (outside probe: it exited ~9 s after SIGTERM, waiting on a
 * kept-alive connection that was busy at the time). With a ten-minute keep-alive timeout and
 * shutdown grace, the process must still exit as soon as its requests are answered.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnServer } from '../../bench/http-child.js';
import { listeningPort } from '../../bench/http-tavern.js';
import { readByPeer } from '../tcp.js';
import { eventually } from '../wait.js';

const ROOT = new URL('../../', import.meta.url).pathname;

interface Answer {
  readonly status: number;
  readonly connection: string | undefined;
  readonly body: string;
}

/** One request on a kept-alive agent socket: its answer (status, headers, body), and when the server has read it whole. */
const send = (port: number, path: string, method = 'GET'): { answer: Promise<Answer>; read: Promise<void> } => {
  const req = request({ host: '127.0.0.1', port, path, method, headers: { connection: 'keep-alive' } });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.on('error', reject);
  });
  req.end();
  const read = once(req, 'finish').then(() => readByPeer(req.socket as Socket, `the server to read ${path}`));
  return { answer, read };
};

const call = (port: number, path: string, method = 'GET'): Promise<Answer> => send(port, path, method).answer;

describe('SIGTERM', () => {
  it('answers the long poll in flight with Connection: close, drops kept-alive connections, and exits 0 at once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tavern-sigterm-'));
    const server = await spawnServer({
      name: 'tavern',
      args: ['--import', 'tsx', join(ROOT, 'src/server/main.ts')],
      isolated: true,
      env: {
        TAVERN_HOST: '127.0.0.1', TAVERN_PORT: '0', TAVERN_DATA_DIR: dataDir, TAVERN_ADMIN_TOKEN: 'sigterm-admin',
        TAVERN_KEEP_ALIVE_TIMEOUT_MS: '600000', TAVERN_SHUTDOWN_GRACE_MS: '600000', LOG_LEVEL: 'info',
      },
      portOf: listeningPort,
      timeoutMs: 60_000,
    });
    try {
      // Up, not only listening: it handles SIGTERM once its runtime is up (a SIGTERM between the two
      // ends it by the signal's default action, the process killed outright).
      await eventually('the server to be up', () => server.output().includes('Tavern is up'));
      const port = Number(new URL(server.origin).port);
      const idle = await call(port, '/health');
      expect(idle).toMatchObject({ status: 200, connection: 'keep-alive' });
      const link = JSON.parse((await call(port, '/cloud/devices/links', 'POST')).body) as { device_link_token: string };
      // A 40 s long poll, in flight when the signal comes.
      const polling = send(port, `/cloud/devices/links?device_link_token=${encodeURIComponent(link.device_link_token)}&watch_index=1`);
      await polling.read;
      process.kill(server.pid, 'SIGTERM');
      const answered = await polling.answer;
      expect(answered.status).toBe(200);
      expect(answered.connection).toBe('close');
      expect(await server.exited).toEqual({ code: 0, signal: null });
      expect(server.output()).toContain('shutting down');
    } finally {
      await server.stop(1_000);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
