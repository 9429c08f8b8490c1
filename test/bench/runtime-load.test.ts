import { createSocket, type Socket } from 'node:dgram';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { message, openSession, runPlan, type SessionOptions } from '../../bench/runtime-load.js';
import { firstTcpEcho, firstUdpEcho } from '../../bench/runtime-probe.js';

/** A UDP echo that drops every `dropEvery`-th datagram (0: none) and records the sizes it got. */
const udpEcho = async (dropEvery: number): Promise<{ socket: Socket; port: number; sizes: Set<number> }> => {
  const socket = createSocket('udp4');
  const sizes = new Set<number>();
  let n = 0;
  socket.on('message', (data, from) => {
    sizes.add(data.length);
    n++;
    if (dropEvery > 0 && n % dropEvery === 0) return;
    socket.send(data, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { socket, port: socket.address().port, sizes };
};

/** A TCP echo that answers each chunk in two writes, the second a little later. */
const tcpEcho = async (): Promise<{ server: Server; port: number }> => {
  const server = createServer((s) => {
    s.on('data', (data: Buffer) => {
      s.write(data.subarray(0, 7));
      setImmediate(() => s.write(data.subarray(7)));
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
};

describe('the runtime bench load generator', () => {
  const closers: (() => void)[] = [];
  afterEach(() => {
    for (const close of closers.splice(0)) close();
  });

  it('makes messages of the asked size that end in a newline and carry their sequence number', () => {
    const m = message(123_456, 100);
    expect(m.length).toBe(100);
    expect(m.at(-1)).toBe(0x0a);
    expect(parseInt(m.subarray(0, 10).toString(), 36)).toBe(123_456);
    expect(m.toString()).not.toMatch(/^\s*(connect|disconnect|close|open|crash|oom|log|err|spam)\b/);
  });

  /** One session, one warm-up window, one measured window. */
  const measure = async (o: SessionOptions, ms: number) => {
    const session = await openSession(o);
    try {
      await session.run(20);
      return await session.run(ms);
    } finally {
      session.close();
    }
  };

  it('counts UDP round trips of whole messages, and replaces lost datagrams instead of stalling', async () => {
    const echo = await udpEcho(7);
    closers.push(() => echo.socket.close());
    const r = await measure({ protocol: 'udp', host: '127.0.0.1', port: echo.port, clients: 4, size: 100, lostAfterMs: 20 }, 400);
    expect(r.roundTrips).toBeGreaterThan(4);
    expect(r.lost).toBeGreaterThan(0);
    expect(r.perSecond).toBeCloseTo(r.roundTrips / r.seconds, 6);
    expect([...echo.sizes]).toEqual([100]);
  });

  it('counts a TCP round trip only once all its bytes came back, however they are split', async () => {
    const echo = await tcpEcho();
    closers.push(() => echo.server.close());
    const r = await measure({ protocol: 'tcp', host: '127.0.0.1', port: echo.port, clients: 3, size: 100 }, 300);
    expect(r.roundTrips).toBeGreaterThan(3);
    expect(r.lost).toBe(0);
    expect(r.cpuShare).toBeGreaterThan(0);
  });

  it('lets a session pause between windows: nothing is sent while it waits, and the next window starts afresh', async () => {
    const echo = await udpEcho(0);
    closers.push(() => echo.socket.close());
    let got = 0;
    echo.socket.on('message', () => got++);
    const session = await openSession({ protocol: 'udp', host: '127.0.0.1', port: echo.port, clients: 2, size: 32 });
    closers.push(() => session.close());
    const first = await session.run(50);
    const after = got;
    // Ten round trips of a probe of our own, one after another, reach the echo and nothing else does:
    // a client still sending would slip datagrams in between.
    const probe = createSocket('udp4');
    closers.push(() => probe.close());
    for (let i = 0; i < 10; i++) {
      const echoed = new Promise<void>((resolve) => probe.once('message', () => resolve()));
      probe.send(`probe ${i}`, echo.port, '127.0.0.1');
      await echoed;
    }
    expect(got).toBe(after + 10);
    expect(after).toBeGreaterThanOrEqual(first.roundTrips);
    const second = await session.run(50);
    expect(second.roundTrips).toBeGreaterThan(0);
    expect(got).toBeGreaterThan(after);
  });

  it('runs each (protocol, clients) of a plan round by round, rotating the order of the targets', async () => {
    const a = await udpEcho(0);
    const b = await udpEcho(0);
    closers.push(() => a.socket.close(), () => b.socket.close());
    const runs = await runPlan({
      targets: [{ name: 'a', host: '127.0.0.1', udpPort: a.port, tcpPort: 1 }, { name: 'b', host: '127.0.0.1', udpPort: b.port, tcpPort: 1 }],
      protocols: ['udp'], clients: [1, 2], rounds: 2, warmupMs: 5, sliceMs: 30, size: 64,
    });
    expect(runs.map((r) => `${r.round}:${r.clients}:${r.target}`)).toEqual(['1:1:a', '1:1:b', '2:1:b', '2:1:a', '1:2:a', '1:2:b', '2:2:b', '2:2:a']);
    for (const r of runs) expect(r.roundTrips).toBeGreaterThan(0);
  });
});

describe('the runtime bench readiness probe', () => {
  it('answers once the echo starts answering, after attempts it left unanswered, and gives up at its timeout', async () => {
    // Silent for the first three probes, an echo from the fourth on.
    const echo = createSocket('udp4');
    let probes = 0;
    let firstAnswer = '';
    echo.on('message', (data, from) => {
      probes += 1;
      if (probes < 4) return;
      firstAnswer ||= data.toString();
      echo.send(data, from.port, from.address);
    });
    await new Promise<void>((resolve) => echo.bind(0, '127.0.0.1', resolve));
    const port = echo.address().port;
    try {
      await firstUdpEcho('127.0.0.1', port, { everyMs: 5, timeoutMs: 5_000 });
      expect(probes).toBeGreaterThanOrEqual(4);
      expect(firstAnswer).toMatch(/^probe /);
    } finally {
      echo.close();
    }
    await expect(firstUdpEcho('127.0.0.1', port, { timeoutMs: 100 })).rejects.toThrow(/no UDP echo from 127\.0\.0\.1:\d+ within 100 ms/);
  });

  it('TCP: tries again after connections closed unanswered (as docker-proxy does while the game server starts), then answers', async () => {
    // The first three connections are closed unanswered, the fourth echoes.
    let closed = 0;
    let echoed = 0;
    const server = createServer((s) => {
      if (closed < 3) {
        closed++;
        s.destroy();
        return;
      }
      s.on('data', (data: Buffer) => {
        echoed++;
        s.write(data);
      });
      s.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await firstTcpEcho('127.0.0.1', (server.address() as AddressInfo).port, { timeoutMs: 5_000 });
      expect(closed).toBe(3);
      expect(echoed).toBeGreaterThan(0);
    } finally {
      server.close();
    }
  });
});
