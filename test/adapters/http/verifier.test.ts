import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpVerifier, type HttpVerifierOptions } from '../../../src/adapters/http/verifier.js';
import type { VerificationCheck, VerificationPayload } from '../../../src/core/admission/verification.js';
import { closedPort, type Handler, listen, type TestServer } from './servers.js';

const payload: VerificationPayload = {
  verification_data: { token: 'abc', nested: [1, 2, { ok: true }] },
  game: {
    namespace_id: 'ns-1',
    game_mode_id: '4f6c1d3e-0000-4000-8000-000000000001',
    game_mode_name_id: 'default',
    lobby: null,
    state: null,
    config: null,
    tags: { map: 'dust' },
    dynamic_max_players: null,
  },
  clients: { '203.0.113.7': { user_agent: 'game/1.0', latitude: null, longitude: null } },
  join_kind: 'Normal',
  kind: 'Find',
};

const checkFor = (url: string, headers: Record<string, string> = {}, body: VerificationPayload = payload): VerificationCheck => ({
  gameMode: 'default',
  kind: 'Find',
  url,
  headers,
  body,
});

const LOCAL: HttpVerifierOptions = { egress: { allow: ['127.0.0.1/32'] }, timeoutMs: 5_000 };

let servers: TestServer[] = [];
const serve = async (handler: Handler): Promise<TestServer> => {
  const server = await listen(handler);
  servers.push(server);
  return server;
};
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

describe('HttpVerifier', () => {
  it.each([200, 204, 299, 400, 403, 404, 408, 500, 503])('reports status %i', async (status) => {
    const server = await serve((_req, res) => res.writeHead(status).end('body is ignored'));
    expect(await new HttpVerifier(LOCAL).verify(checkFor(`${server.origin}/verify`))).toEqual({ kind: 'status', status });
  });

  it.each([301, 302, 303, 307, 308])('does not follow a %i redirect: the target is never hit', async (status) => {
    const server = await serve((req, res) => {
      if (req.url === '/verify') res.writeHead(status, { location: '/target' }).end();
      else res.writeHead(200).end();
    });
    expect(await new HttpVerifier(LOCAL).verify(checkFor(`${server.origin}/verify`))).toEqual({ kind: 'status', status });
    expect(server.requests.map((r) => r.url)).toEqual(['/verify']);
  });

  it('POSTs the JSON body with exactly the configured headers plus content-type and transport headers', async () => {
    const server = await serve((_req, res) => res.writeHead(204).end());
    const headers = { 'X-Api-Key': 'secret-1', authorization: 'Bearer t' };
    await new HttpVerifier(LOCAL).verify(checkFor(`${server.origin}/hook?x=1`, headers));
    const [req] = server.requests;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/hook?x=1');
    expect(JSON.parse(req?.body ?? '')).toEqual(payload);
    const names = (req?.rawHeaders ?? []).filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()).sort();
    expect(names).toEqual(['authorization', 'connection', 'content-length', 'content-type', 'host', 'x-api-key']);
    expect(req?.headers).toMatchObject({
      'x-api-key': 'secret-1',
      authorization: 'Bearer t',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(req?.body ?? '')),
      host: `127.0.0.1:${server.port}`,
    });
  });

  it("keeps the developer's content-type and adds the user agent only when configured", async () => {
    const server = await serve((_req, res) => res.writeHead(200).end());
    await new HttpVerifier(LOCAL).verify(checkFor(server.origin, { 'Content-Type': 'application/vnd.game+json' }));
    await new HttpVerifier({ ...LOCAL, userAgent: 'Tavern' }).verify(checkFor(server.origin));
    await new HttpVerifier({ ...LOCAL, userAgent: 'Tavern' }).verify(checkFor(server.origin, { 'User-Agent': 'mine' }));
    expect(server.requests[0]?.headers['content-type']).toBe('application/vnd.game+json');
    expect(server.requests[0]?.rawHeaders.filter((h) => h.toLowerCase() === 'content-type')).toHaveLength(1);
    expect(server.requests[0]?.headers['user-agent']).toBeUndefined();
    expect(server.requests[1]?.headers['user-agent']).toBe('Tavern');
    expect(server.requests[2]?.headers['user-agent']).toBe('mine');
  });

  it('times out on a server that never answers, at its timeout', async () => {
    let received = (): void => undefined;
    const requestIn = new Promise<void>((resolve) => (received = resolve));
    const server = await serve(() => received());
    // The verifier's timer on a fake clock; the request itself goes over a real socket.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let verdict: unknown;
      const verifying = new HttpVerifier({ ...LOCAL, timeoutMs: 200 }).verify(checkFor(server.origin)).then((v) => (verdict = v));
      await requestIn;
      await vi.advanceTimersByTimeAsync(199);
      expect(verdict).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(verdict).toEqual({ kind: 'timeout' });
      await verifying;
    } finally {
      vi.useRealTimers();
    }
  });

  it('counts resolution against the timeout', async () => {
    const verifier = new HttpVerifier({ egress: { resolve: () => new Promise(() => undefined) }, timeoutMs: 100 });
    expect(await verifier.verify(checkFor('https://slow-dns.example/'))).toEqual({ kind: 'timeout' });
  });

  it('reports a refused connection as a transport failure', async () => {
    const port = await closedPort();
    const result = await new HttpVerifier(LOCAL).verify(checkFor(`http://127.0.0.1:${port}/`));
    expect(result).toMatchObject({ kind: 'failed', reason: expect.stringContaining('ECONNREFUSED') as unknown });
  });

  it('reports a connection closed without an answer as a transport failure', async () => {
    const server = await serve((_req, res) => res.socket?.destroy());
    expect(await new HttpVerifier(LOCAL).verify(checkFor(server.origin))).toMatchObject({ kind: 'failed' });
  });

  it('refuses a non-allowlisted loopback URL without connecting', async () => {
    const server = await serve((_req, res) => res.writeHead(200).end());
    const result = await new HttpVerifier().verify(checkFor(server.origin));
    expect(result).toEqual({ kind: 'failed', reason: `destination refused: 127.0.0.1 is not public (loopback)` });
    expect(server.connections).toBe(0);
  });

  it('refuses URLs the guard rejects statically', async () => {
    const verifier = new HttpVerifier(LOCAL);
    expect(await verifier.verify(checkFor('ftp://127.0.0.1/'))).toMatchObject({ kind: 'failed', reason: expect.stringContaining('scheme') as unknown });
    expect(await verifier.verify(checkFor('not a url'))).toMatchObject({ kind: 'failed', reason: expect.stringContaining('not a valid URL') as unknown });
  });

  it.each([
    [{ Host: 'internal.example' }, 'header Host may not be set'],
    [{ 'Transfer-Encoding': 'chunked' }, 'may not be set'],
    [{ 'x-evil': 'a\r\nInjected: yes' }, 'not a valid header'],
    [{ 'bad name': 'v' }, 'not a valid header'],
  ])('refuses the configured headers %o without connecting', async (headers, reason) => {
    const server = await serve((_req, res) => res.writeHead(200).end());
    const result = await new HttpVerifier(LOCAL).verify(checkFor(server.origin, headers));
    expect(result).toMatchObject({ kind: 'failed', reason: expect.stringContaining(reason) as unknown });
    expect(server.connections).toBe(0);
  });

  it('reports a payload that is not JSON as a failure', async () => {
    const body = { ...payload, verification_data: 1n } as unknown as VerificationPayload;
    expect(await new HttpVerifier(LOCAL).verify(checkFor('http://127.0.0.1/', {}, body))).toMatchObject({ kind: 'failed' });
  });

  it('answers at the status line of an endless body and releases the socket', async () => {
    let closed = false;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const pump = (): void => {
        while (!closed && res.write(chunk));
        if (!closed) res.once('drain', pump);
      };
      res.on('close', () => {
        closed = true;
      });
      pump();
    });
    const heapBefore = process.memoryUsage().heapUsed;
    expect(await new HttpVerifier(LOCAL).verify(checkFor(server.origin))).toEqual({ kind: 'status', status: 200 });
    await expect.poll(() => closed, { timeout: 2_000 }).toBe(true);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(32 * 1024 * 1024);
  });
});
