/** The node:http bridge (`http.ts`): bodies read from the socket, caps, clients that go away, headers. */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/io/log.js';
import type { App } from '../../src/server/app.js';
import { createHttpServer, fromNode } from '../../src/server/http.js';
import type { BodyRead, Incoming } from '../../src/server/incoming.js';
import { readByPeer } from '../tcp.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

const listen = async (handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> => {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

/** The app served by the bridge over a real socket; its port. */
const serveApp = async (app: Pick<App, 'respond'>, logger?: Logger): Promise<number> => {
  server = createHttpServer(app, logger);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

/** Sends raw bytes, then ends the socket, or destroys it once the server has read them; resolves with what came back. */
const raw = (port: number, bytes: string, then: 'end' | 'destroy' = 'end'): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(bytes);
      if (then === 'destroy') {
        readByPeer(socket, 'the server to read the request').then(() => {
          socket.destroy();
          resolve('');
        }, reject);
      }
    });
    let got = '';
    socket.setEncoding('utf8').on('data', (c: string) => (got += c)).on('end', () => resolve(got)).on('error', reject);
    if (then === 'end') socket.on('data', () => socket.end());
  });

describe('node:http bridge', () => {
  it('reads a chunked body whole, and joins repeated headers', async () => {
    const seen: { body: string; header: string | null; method: string }[] = [];
    const port = await listen((req, res) => {
      const incoming = fromNode(req, res);
      void incoming.read(1024).then((body) => {
        seen.push({ body: Buffer.from(body as Uint8Array).toString('utf8'), header: incoming.header('x-twice'), method: incoming.method });
        res.end('ok');
      });
    });
    await raw(port, 'POST /x HTTP/1.1\r\nHost: a\r\nX-Twice: 1\r\nX-Twice: 2\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{"a\r\n4\r\n":1}\r\n0\r\n\r\n');
    expect(seen).toEqual([{ body: '{"a":1}', header: '1, 2', method: 'POST' }]);
  });

  it('reads a body whole whether all of it arrived before the read (taken from the buffer, no listener) or comes after it', async () => {
    const seen: { body: string; flowing: boolean | null }[] = [];
    let reading: () => void = () => undefined;
    const port = await listen((req, res) => {
      const incoming = fromNode(req, res);
      // A turn later: a body sent with its headers is in the buffer by then.
      void new Promise((r) => setImmediate(r)).then(async () => {
        const read = incoming.read(1024);
        reading();
        const body = await read;
        seen.push({ body: Buffer.from(body as Uint8Array).toString('utf8'), flowing: req.readableFlowing });
        res.end('ok');
      });
    });
    await raw(port, 'POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\n\r\n{"a":1}');
    await raw(port, 'POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n');
    // The rest of this one's body is sent once the server is reading it.
    const slow = connect(port, '127.0.0.1');
    const answered = new Promise<void>((resolve) => slow.once('data', () => resolve()));
    const started = new Promise<void>((resolve) => (reading = resolve));
    slow.write('POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\n\r\n{"a"');
    await started;
    slow.write(':2}');
    await answered;
    slow.destroy();
    expect(seen).toEqual([{ body: '{"a":1}', flowing: null }, { body: '', flowing: null }, { body: '{"a":2}', flowing: true }]);
  });

  it('stops at the cap (too-large) and reports a body cut short (incomplete)', async () => {
    const results: BodyRead[] = [];
    let bothRead = (): void => undefined;
    const both = new Promise<void>((resolve) => (bothRead = resolve));
    const port = await listen((req, res) => {
      void fromNode(req, res).read(8).then((r) => {
        results.push(r);
        if (results.length === 2) bothRead();
        res.end();
      });
    });
    await raw(port, 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 20\r\n\r\n01234567890123456789');
    await raw(port, 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\n012', 'destroy');
    await both;
    expect(results).toEqual(['too-large', 'incomplete']);
  });

  it('aborts the signal when the client goes away before its answer', async () => {
    let incoming: Incoming | undefined;
    const aborted = new Promise<void>((resolve) => {
      void listen((req, res) => {
        incoming = fromNode(req, res);
        incoming.signal.addEventListener('abort', () => resolve());
      }).then((port) => raw(port, 'GET /wait HTTP/1.1\r\nHost: a\r\n\r\n', 'destroy'));
    });
    await aborted;
    expect(incoming?.signal.aborted).toBe(true);
  });

  it('answers an over-cap JSON body 413 and closes the kept-alive connection (the rest is never read)', async () => {
    const { ADMIN, harness } = await import('./harness.js');
    const h = harness();
    try {
      const port = await serveApp(h.app);
      const answer = await new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
        const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/cloud/games', headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` } }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
        });
        req.on('error', reject);
        // Chunked, no declared length: the cap must trip while reading.
        req.write(`{"x":"${'a'.repeat(1024 * 1024)}`);
        req.end('"}');
      });
      expect(answer.status).toBe(413);
      expect(answer.connection).toBe('close');
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'API_BODY_TOO_LARGE' });
    } finally {
      h.cleanup();
    }
  });

  it('keeps the connection after an answer given as soon as the body was read, before the parser marked the request complete', async () => {
    const { ADMIN, harness } = await import('./harness.js');
    const h = harness();
    try {
      const port = await serveApp(h.app);
      let connections = 0;
      server?.on('connection', () => connections++);
      // Invalid bodies on one connection, each refused within the turns the parser still has to
      // run (the request is not complete when answered): one, another after its answer, then one
      // pipelined with a valid request in the same write.
      const post = (body: string): string =>
        `POST /cloud/games HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      const valid = JSON.stringify({ name_id: 'kept-alive', display_name: 'Kept alive', developer_group_id: '5d4c0a53-9a3c-4a36-9d3b-0f6c2a7f1e20' });
      const got = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(post('{"name_id":7}')));
        let text = '';
        socket.setEncoding('utf8').on('error', reject).on('close', () => resolve(text)).on('data', (c: string) => {
          text += c;
          const answers = text.match(/HTTP\/1\.1 /g)?.length ?? 0;
          if (!text.endsWith('}')) return;
          if (answers === 1) socket.write(post('{"name_id":[]}'));
          if (answers === 2) socket.write(post('{"name_id":null}') + post(valid));
          if (answers === 4) socket.end();
        });
      });
      const answers = got.split(/(?=HTTP\/1\.1 )/).map((a) => a.split('\r\n\r\n'));
      expect(answers.map(([head = '']) => head.split(' ')[1])).toEqual(['400', '400', '400', '200']);
      for (const [head] of answers) expect(head).not.toMatch(/connection: close/i);
      expect(typeof (JSON.parse(answers[3]?.[1] ?? '') as { game_id?: unknown }).game_id).toBe('string');
      expect(connections).toBe(1);
    } finally {
      h.cleanup();
    }
  });

  it('reads the request through a class: no accessor of its own, which V8 would keep alive with the request', async () => {
    const own: (PropertyDescriptor | undefined)[] = [];
    const port = await listen((req, res) => {
      const incoming = fromNode(req, res);
      own.push(Object.getOwnPropertyDescriptor(incoming, 'url'), Object.getOwnPropertyDescriptor(incoming, 'signal'));
      expect(incoming.url.pathname).toBe('/x');
      res.end();
    });
    await raw(port, 'GET /x HTTP/1.1\r\nHost: a\r\n\r\n');
    expect(own).toEqual([undefined, undefined]);
  });

  it('takes the target\'s path as sent: no dot segment resolved, no escape decoded, never a host', () => {
    const res = { closed: false, writableFinished: false, once: () => res } as unknown as ServerResponse;
    const pathOf = (target: string) =>
      fromNode({ url: target, method: 'GET', headers: { host: 'h' }, socket: {} } as unknown as IncomingMessage, res).path;
    const char = fc.constantFrom('/', '/', 'a', 'Z', '0', '-', '_', '~', '.', '%', '2', 'e', '?', '#', '\\', ' ', '@', ':', 'é');
    fc.assert(
      fc.property(fc.array(char, { maxLength: 24 }), (chars) => {
        const target = `/${chars.join('')}`;
        expect(pathOf(target)).toBe(target.replace(/[?#].*$/, ''));
      }),
      { numRuns: 2000 },
    );
    for (const [target, path] of [
      ['/', '/'], ['/matchmaker/lobbies/find', '/matchmaker/lobbies/find'], ['/cloud/games/x?y=1', '/cloud/games/x'],
      ['/a/../b', '/a/../b'], ['/a/./b', '/a/./b'], ['/a/%2e%2e/b', '/a/%2e%2e/b'], ['/a//b', '/a//b'], ['/%7e', '/%7e'], ['/a\\b', '/a\\b'],
      ['//matchmaker/cloud/games', '//matchmaker/cloud/games'], ['//evil.example/x?y', '//evil.example/x'],
      // The absolute form (a proxy's request line): its path, as sent too.
      ['http://h/cloud/games', '/cloud/games'], ['http://h/v1/../cloud?x', '/v1/../cloud'], ['http://h', '/'], ['*', '/'],
    ] as const) {
      expect(pathOf(target), target).toBe(path);
    }
  });

  it('routes exactly the path sent: //, dot segments (raw or escaped), escaped letters or separators are 404, not /cloud/games (outside probe)', async () => {
    const { ADMIN, harness } = await import('./harness.js');
    const h = harness();
    try {
      const port = await serveApp(h.app);
      const get = async (path: string): Promise<{ status: number; code: unknown }> => {
        const answer = await raw(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${ADMIN}\r\nConnection: close\r\n\r\n`);
        const [head = '', body = ''] = answer.split('\r\n\r\n');
        return { status: Number(head.split(' ')[1]), code: (JSON.parse(body) as { code?: unknown }).code };
      };
      expect((await get('/cloud/games')).status).toBe(200);
      for (const path of ['//matchmaker/cloud/games', '//cloud/games', '/cloud//games', '//127.0.0.1/cloud/games', '/v1/../cloud/games',
        '/x/../cloud/games', '/cloud/./games', '/cloud/games/.', '/cloud/x/../games', '/cloud/%2e%2e/cloud/games', '/x/%2E%2e/cloud/games',
        '/x/.%2e/cloud/games', '/%63loud/games', '/cloud%2fgames', '/cloud%2Fgames', '/cloud\\games', '/cloud%5cgames', '/x/..%2fcloud/games']) {
        expect(await get(path), path).toEqual({ status: 404, code: 'API_NOT_FOUND' });
      }
    } finally {
      h.cleanup();
    }
  });

  it('a client that aborts a presigned PUT is a client event: one info line, no error, no stack (outside probe)', async () => {
    const { ADMIN, harness, str } = await import('./harness.js');
    const logged: { level: string; obj: object; msg: string | undefined }[] = [];
    let lineLogged = (): void => undefined;
    const firstLine = new Promise<void>((resolve) => (lineLogged = resolve));
    const log = (level: string) => (obj: object, msg?: string): void => {
      logged.push({ level, obj, msg });
      lineLogged();
    };
    const logger = { info: log('info'), warn: log('warn'), error: log('error') };
    const h = harness({ logger });
    try {
      const { gameId, cloud } = await h.setup();
      const build = await h.call('POST', `/cloud/games/${gameId}/builds`, {
        token: cloud, body: { display_name: 'Big', image_tag: 'big:1', image_file: { path: 'image.tar', content_length: 100_000 } },
      });
      const url = new URL(str(build.body['image_presigned_request']?.['url']));
      const port = await serveApp(h.app, logger);
      // A tenth of the declared body, then the client goes away.
      await raw(port, `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n${'x'.repeat(10_000)}`, 'destroy');
      await firstLine;
      expect(logged.filter((l) => l.level === 'error')).toEqual([]);
      expect(logged).toHaveLength(1);
      const [line] = logged;
      expect(line?.level).toBe('info');
      expect(line?.obj).not.toHaveProperty('err');
      expect(line?.obj).toMatchObject({ method: 'PUT', status: 400, code: 'UPLOAD_INVALID' });
      // The path only: the query holds the presigned signature.
      expect(JSON.stringify(line?.obj)).not.toContain('signature');
      expect((await h.call('GET', `/cloud/games/${gameId}/builds`, { token: ADMIN })).body['builds']?.[0]?.['complete']).toBe(false);
    } finally {
      h.cleanup();
    }
  });
});
