import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runLoad, type Shot } from '../../bench/http-load.js';

/** A server whose answer to `POST /<status>/<bytes>[/close]` is that status with a body of that many bytes. */
const listen = async (): Promise<{ server: Server; origin: string; seen: string[] }> => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push(`${String(req.headers['x-n'])}:${Buffer.concat(chunks).toString()}`);
      const [, status = '200', bytes = '2', close] = (req.url ?? '').split('/');
      const body = `"${'x'.repeat(Math.max(0, Number(bytes) - 2))}"`;
      res.writeHead(Number(status), { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(close === 'close' ? { connection: 'close' } : {}) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
};

const shot = (path: string) => (n: number): Shot => ({ path, headers: { 'x-n': String(n), 'content-length': String(String(n).length) }, body: Buffer.from(String(n)) });

describe('the http bench load generator', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
    server = undefined;
  });

  it('sends each request whole and counts answers larger than its read buffer, split across reads', async () => {
    const s = await listen();
    server = s.server;
    const checked: string[] = [];
    const r = await runLoad({
      origin: s.origin,
      concurrency: 3,
      warmupMs: 0,
      durationMs: 300,
      shot: shot('/200/200000'),
      check: (body) => checked.push(body),
    });
    expect(r.requests).toBeGreaterThan(0);
    expect(r.errors).toBe(0);
    expect(r.rps).toBeGreaterThan(0);
    expect(r.p50_ms).toBeLessThanOrEqual(r.p99_ms);
    // The first answer's body is decoded for the check, and only that one.
    expect(checked).toEqual([`"${'x'.repeat(199_998)}"`]);
    // Every request arrived with its own body: n's body is n.
    for (const line of s.seen) {
      const [n, body] = line.split(':');
      expect(body).toBe(n);
    }
  });

  it('counts non-200 answers as errors and keeps a sample of their body', async () => {
    const s = await listen();
    server = s.server;
    const r = await runLoad({ origin: s.origin, concurrency: 2, warmupMs: 0, durationMs: 200, shot: shot('/503/40') });
    expect(r.requests).toBeGreaterThan(0);
    expect(r.errors).toBe(r.requests);
    expect(r.rps).toBe(0);
    expect(r.errorKinds['status 503']).toBeGreaterThanOrEqual(r.requests);
    expect(r.errorSample).toBe(`"${'x'.repeat(38)}"`);
  });

  it('reconnects after an answer that closes the connection', async () => {
    const s = await listen();
    server = s.server;
    const r = await runLoad({ origin: s.origin, concurrency: 2, warmupMs: 0, durationMs: 200, shot: shot('/200/10/close') });
    expect(r.requests).toBeGreaterThan(2);
    expect(r.errors).toBe(0);
    expect(r.errorKinds).toEqual({});
  });
});
