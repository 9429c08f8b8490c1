/**
 * The load generator of the `runtime` benchmark's data-plane part: UDP and TCP round trips of
 * fixed-size messages against an echo server, by `clients` sockets each keeping one message in
 * flight (a new one as soon as its echo is back), counted over a bounded window after a warm-up.
 *
 * - UDP: one connected socket per client; each message carries the client's sequence number, an
 *   echo of an older message is ignored, and a message without an echo after `lostAfterMs` is
 *   counted lost and replaced, so a dropped datagram never stalls a client.
 * - TCP: one connection per client (Nagle off); a round trip is `size` bytes written and the same
 *   number read back, however the stream splits them.
 *
 * Messages are printable text ending in a newline, so the test game server (which also reads
 * commands from what it echoes) treats each as one unknown command and only echoes it.
 *
 * Run as a program (`node runtime-load.js '<plan JSON>'`) it carries out a whole plan and prints
 * one JSON line: the `runtime` benchmark runs it as a separate process, pinned to a core, so its
 * own event loop measures nothing but the sockets.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, type Socket as TcpSocket } from 'node:net';
import { fileURLToPath } from 'node:url';

export type Protocol = 'udp' | 'tcp';

export interface EchoLoad {
  readonly protocol: Protocol;
  readonly host: string;
  readonly port: number;
  /** Sockets, each with one message in flight. */
  readonly clients: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** Bytes per message (at least 16). */
  readonly size: number;
  /** UDP: a message without an echo after this long is lost (default 200 ms). */
  readonly lostAfterMs?: number;
}

export interface EchoResult {
  /** Round trips completed in the measured window. */
  readonly roundTrips: number;
  readonly seconds: number;
  readonly perSecond: number;
  /** UDP messages given up as lost in the measured window. */
  readonly lost: number;
  /** This process's CPU time over the window / its length (1 = one core busy). */
  readonly cpuShare: number;
}

const MIN_SIZE = 16;

/** A message of `size` bytes: the sequence number in base 36, padding, a newline. */
export const message = (seq: number, size: number): Buffer => {
  const head = `${seq.toString(36).padStart(10, '0')} `;
  return Buffer.from(`${head}${'x'.repeat(size - head.length - 1)}\n`);
};

const seqOf = (data: Buffer): number => parseInt(data.subarray(0, 10).toString(), 36);

interface Window {
  measuring: boolean;
  roundTrips: number;
  lost: number;
}

const udpClient = async (o: EchoLoad, w: Window, running: () => boolean): Promise<() => void> => {
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
  const send = (): void => {
    seq++;
    sentAt = performance.now();
    socket.send(message(seq, o.size));
  };
  socket.on('message', (data) => {
    if (data.length !== o.size || seqOf(data) !== seq) return;
    if (w.measuring) w.roundTrips++;
    if (running()) send();
  });
  // A refused datagram (nothing listening yet) or a lost one: the watchdog sends the next.
  socket.on('error', () => undefined);
  const lostAfter = o.lostAfterMs ?? 200;
  const watchdog = setInterval(() => {
    if (!running() || performance.now() - sentAt < lostAfter) return;
    if (w.measuring) w.lost++;
    send();
  }, Math.max(10, lostAfter / 4));
  send();
  return () => {
    clearInterval(watchdog);
    socket.close();
  };
};

const tcpClient = async (o: EchoLoad, w: Window, running: () => boolean): Promise<() => void> => {
  const socket: TcpSocket = await new Promise((resolve, reject) => {
    const s = connect({ port: o.port, host: o.host, noDelay: true }, () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });
  socket.on('error', () => undefined);
  let seq = 0;
  let pending = 0;
  const send = (): void => {
    seq++;
    pending = o.size;
    socket.write(message(seq, o.size));
  };
  socket.on('data', (data: Buffer) => {
    pending -= data.length;
    if (pending > 0) return;
    if (pending < 0) throw new Error(`the echo server sent ${-pending} bytes more than it was sent`);
    if (w.measuring) w.roundTrips++;
    if (running()) send();
  });
  send();
  return () => socket.destroy();
};

/**
 * Round trips per second against one echo server.
 *
 * @example
 * const r = await echoLoad({ protocol: 'udp', host: '127.0.0.1', port: 7777, clients: 16, warmupMs: 100, durationMs: 1000, size: 100 });
 */
export async function echoLoad(o: EchoLoad): Promise<EchoResult> {
  if (o.size < MIN_SIZE) throw new RangeError(`messages must be at least ${MIN_SIZE} bytes`);
  const w: Window = { measuring: false, roundTrips: 0, lost: 0 };
  let running = true;
  const client = o.protocol === 'udp' ? udpClient : tcpClient;
  const closers = await Promise.all(Array.from({ length: o.clients }, () => client(o, w, () => running)));
  try {
    await new Promise((r) => setTimeout(r, o.warmupMs));
    const cpu = process.cpuUsage();
    const start = performance.now();
    w.measuring = true;
    await new Promise((r) => setTimeout(r, o.durationMs));
    w.measuring = false;
    const seconds = (performance.now() - start) / 1000;
    const used = process.cpuUsage(cpu);
    return { roundTrips: w.roundTrips, seconds, perSecond: w.roundTrips / seconds, lost: w.lost, cpuShare: (used.user + used.system) / 1e6 / seconds };
  } finally {
    running = false;
    for (const close of closers) close();
  }
}

/** An echo server the plan measures: where its UDP and TCP echo listen. */
export interface EchoTarget {
  readonly name: string;
  readonly host: string;
  readonly udpPort: number;
  readonly tcpPort: number;
}

export interface LoadPlan {
  readonly targets: readonly EchoTarget[];
  readonly protocols: readonly Protocol[];
  readonly clients: readonly number[];
  /** Each (protocol, clients, target) is measured once per round, the targets in a rotated order. */
  readonly rounds: number;
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
}

/**
 * Every run of a plan, the targets interleaved within each round so a drift in the machine's speed
 * touches each of them alike.
 *
 * @example
 * const runs = await runPlan({ targets, protocols: ['udp', 'tcp'], clients: [1, 16], rounds: 3, warmupMs: 100, sliceMs: 1000, size: 100 });
 */
export async function runPlan(plan: LoadPlan): Promise<PlannedRun[]> {
  const runs: PlannedRun[] = [];
  for (let round = 1; round <= plan.rounds; round++) {
    for (const protocol of plan.protocols) {
      for (const clients of plan.clients) {
        const shift = (round - 1) % plan.targets.length;
        const order = [...plan.targets.slice(shift), ...plan.targets.slice(0, shift)];
        for (const t of order) {
          const port = protocol === 'udp' ? t.udpPort : t.tcpPort;
          const r = await echoLoad({ protocol, host: t.host, port, clients, warmupMs: plan.warmupMs, durationMs: plan.sliceMs, size: plan.size });
          runs.push({ ...r, round, protocol, clients, target: t.name });
        }
      }
    }
  }
  return runs;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const plan = JSON.parse(process.argv[2] ?? '') as LoadPlan;
  process.stdout.write(`${JSON.stringify(await runPlan(plan))}\n`);
}
