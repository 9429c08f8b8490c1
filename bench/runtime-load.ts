/**
 * The load generator of the `runtime` benchmark's data-plane part: UDP and TCP round trips of
 * fixed-size messages against an echo server, by `clients` sockets each keeping one message in
 * flight (a new one as soon as its echo is back), counted over bounded windows.
 *
 * - UDP: one connected socket per client; each message carries the client's sequence number, an
 *   echo of an older message is ignored, and a message without an echo after `lostAfterMs` is
 *   counted lost and replaced, so a dropped datagram never stalls a client.
 * - TCP: one connection per client (Nagle off); a round trip is `size` bytes written and the same
 *   number read back, however the stream splits them.
 *
 * A {@link Session} keeps its sockets open between windows: a plan opens one per target, warms
 * each up once, then measures the targets in many short windows, one after another in a rotating
 * order, so a change in the machine's speed (other work on a shared machine comes and goes within
 * seconds) touches every target alike, and each window starts on connected sockets.
 *
 * Messages are printable text ending in a newline, so the test game server (which also reads
 * commands from what it echoes) treats each as one unknown command and only echoes it.
 *
 * Run as a program (`node runtime-load.js '<plan JSON>'`) it carries out a whole plan and prints
 * one JSON line: the `runtime` benchmark runs it as a separate process, so its event loop serves
 * nothing but these sockets.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, type Socket as TcpSocket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { cpuSeconds } from './http-child.js';

export type Protocol = 'udp' | 'tcp';

export interface SessionOptions {
  readonly protocol: Protocol;
  readonly host: string;
  readonly port: number;
  /** Sockets, each with one message in flight. */
  readonly clients: number;
  /** Bytes per message (at least 16). */
  readonly size: number;
  /** UDP: a message without an echo after this long is lost (default 200 ms). */
  readonly lostAfterMs?: number;
}

export interface EchoResult {
  /** Round trips completed in the window. */
  readonly roundTrips: number;
  readonly seconds: number;
  readonly perSecond: number;
  /** UDP messages given up as lost in the window. */
  readonly lost: number;
  /** This process's CPU time over the window / its length (1 = one core busy). */
  readonly cpuShare: number;
}

/** Open sockets to one echo server, measured in windows. */
export interface Session {
  /** Every client sends until `durationMs` passed; resolves once none has a message in flight. */
  run(durationMs: number): Promise<EchoResult>;
  close(): void;
}

const MIN_SIZE = 16;

/** A message of `size` bytes: the sequence number in base 36, padding, a newline. */
export const message = (seq: number, size: number): Buffer => {
  const head = `${seq.toString(36).padStart(10, '0')} `;
  return Buffer.from(`${head}${'x'.repeat(size - head.length - 1)}\n`);
};

const seqOf = (data: Buffer): number => parseInt(data.subarray(0, 10).toString(), 36);

/** What the clients of a session share: whether to go on sending, and the window's counts. */
interface Window {
  active: boolean;
  roundTrips: number;
  lost: number;
}

interface Client {
  /** Send the first message of a window. */
  kick(): void;
  /** Whether a message is in flight. */
  busy(): boolean;
  close(): void;
}

const udpClient = async (o: SessionOptions, w: Window): Promise<Client> => {
  const socket: UdpSocket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.connect(o.port, o.host, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  let seq = 0;
  let sentAt = 0;
  let inFlight = false;
  const send = (): void => {
    seq++;
    sentAt = performance.now();
    inFlight = true;
    socket.send(message(seq, o.size));
  };
  socket.on('message', (data) => {
    if (data.length !== o.size || seqOf(data) !== seq) return;
    inFlight = false;
    if (!w.active) return;
    w.roundTrips++;
    send();
  });
  // A refused datagram (nothing listening) or a lost one: the watchdog moves on.
  socket.on('error', () => undefined);
  const lostAfter = o.lostAfterMs ?? 200;
  const watchdog = setInterval(() => {
    if (!inFlight || performance.now() - sentAt < lostAfter) return;
    inFlight = false;
    if (!w.active) return;
    w.lost++;
    send();
  }, Math.max(5, lostAfter / 4));
  return {
    kick: send,
    busy: () => inFlight,
    close: () => {
      clearInterval(watchdog);
      socket.close();
    },
  };
};

const tcpClient = async (o: SessionOptions, w: Window): Promise<Client> => {
  const socket: TcpSocket = await new Promise((resolve, reject) => {
    const s = connect({ port: o.port, host: o.host, noDelay: true }, () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });
  let failure: Error | undefined;
  socket.on('error', (e) => {
    failure = e;
  });
  let seq = 0;
  let pending = 0;
  const send = (): void => {
    if (failure !== undefined) throw new Error(`TCP ${o.host}:${o.port}: ${failure.message}`);
    seq++;
    pending = o.size;
    socket.write(message(seq, o.size));
  };
  socket.on('data', (data: Buffer) => {
    pending -= data.length;
    if (pending > 0) return;
    if (pending < 0) {
      failure = new Error(`the echo server sent ${-pending} bytes more than it was sent`);
      socket.destroy();
      return;
    }
    if (!w.active) return;
    w.roundTrips++;
    send();
  });
  return { kick: send, busy: () => pending > 0 && failure === undefined && !socket.destroyed, close: () => socket.destroy() };
};

/**
 * Opens `clients` sockets to an echo server.
 *
 * @example
 * const session = await openSession({ protocol: 'udp', host: '127.0.0.1', port: 7777, clients: 16, size: 100 });
 * await session.run(100); // warm-up
 * const { perSecond } = await session.run(1000);
 * session.close();
 */
export async function openSession(o: SessionOptions): Promise<Session> {
  if (o.size < MIN_SIZE) throw new RangeError(`messages must be at least ${MIN_SIZE} bytes`);
  const w: Window = { active: false, roundTrips: 0, lost: 0 };
  const make = o.protocol === 'udp' ? udpClient : tcpClient;
  const clients: Client[] = [];
  try {
    for (let i = 0; i < o.clients; i++) clients.push(await make(o, w));
  } catch (error) {
    for (const c of clients) c.close();
    throw error;
  }
  const lostAfter = o.lostAfterMs ?? 200;
  return {
    async run(durationMs) {
      w.roundTrips = 0;
      w.lost = 0;
      const cpu = process.cpuUsage();
      const start = performance.now();
      w.active = true;
      for (const c of clients) c.kick();
      await new Promise((r) => setTimeout(r, durationMs));
      w.active = false;
      const seconds = (performance.now() - start) / 1000;
      const used = process.cpuUsage(cpu);
      const result = { roundTrips: w.roundTrips, seconds, perSecond: w.roundTrips / seconds, lost: w.lost, cpuShare: (used.user + used.system) / 1e6 / seconds };
      // The messages still in flight come back (or are given up) before the next window starts.
      const drained = performance.now() + 2 * lostAfter + 1000;
      while (clients.some((c) => c.busy()) && performance.now() < drained) await new Promise((r) => setTimeout(r, 1));
      return result;
    },
    close() {
      for (const c of clients) c.close();
    },
  };
}

/** An echo server the plan measures: where its UDP and TCP echo listen. */
export interface EchoTarget {
  readonly name: string;
  readonly host: string;
  readonly udpPort: number;
  readonly tcpPort: number;
  /** The echo server's process, whose CPU use each run reports (so a saturated server shows). */
  readonly pid?: number;
}

export interface LoadPlan {
  readonly targets: readonly EchoTarget[];
  readonly protocols: readonly Protocol[];
  readonly clients: readonly number[];
  /** Each (protocol, clients, target) is measured once per round, the targets in a rotated order. */
  readonly rounds: number;
  /** One unmeasured window per session before the rounds. */
  readonly warmupMs: number;
  /** The measured window of one run. */
  readonly sliceMs: number;
  readonly size: number;
}

export interface PlannedRun extends EchoResult {
  readonly round: number;
  readonly protocol: Protocol;
  readonly clients: number;
  readonly target: string;
  /** The echo server's CPU time over the run / the run's length, when its pid was given and readable. */
  readonly serverCpuShare?: number;
}

/**
 * Every run of a plan: per (protocol, clients), a session to each target, warmed up, then
 * `rounds` windows each, the targets interleaved.
 *
 * @example
 * const runs = await runPlan({ targets, protocols: ['udp', 'tcp'], clients: [1, 16], rounds: 30, warmupMs: 100, sliceMs: 100, size: 100 });
 */
export async function runPlan(plan: LoadPlan): Promise<PlannedRun[]> {
  const runs: PlannedRun[] = [];
  for (const protocol of plan.protocols) {
    for (const clients of plan.clients) {
      const sessions: Session[] = [];
      try {
        for (const t of plan.targets) {
          sessions.push(await openSession({ protocol, host: t.host, port: protocol === 'udp' ? t.udpPort : t.tcpPort, clients, size: plan.size }));
        }
        for (const s of sessions) await s.run(plan.warmupMs);
        for (let round = 1; round <= plan.rounds; round++) {
          const shift = (round - 1) % plan.targets.length;
          for (let k = 0; k < plan.targets.length; k++) {
            const i = (k + shift) % plan.targets.length;
            const t = plan.targets[i] as EchoTarget;
            const before = t.pid === undefined ? undefined : cpuSeconds(t.pid);
            const r = await (sessions[i] as Session).run(plan.sliceMs);
            const after = t.pid === undefined ? undefined : cpuSeconds(t.pid);
            const serverCpuShare = before === undefined || after === undefined ? undefined : (after - before) / r.seconds;
            runs.push({ ...r, round, protocol, clients, target: t.name, ...(serverCpuShare === undefined ? {} : { serverCpuShare }) });
          }
        }
      } finally {
        for (const s of sessions) s.close();
      }
    }
  }
  return runs;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const plan = JSON.parse(process.argv[2] ?? '') as LoadPlan;
  process.stdout.write(`${JSON.stringify(await runPlan(plan))}\n`);
}
