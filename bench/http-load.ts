/**
 * The `http` benchmark's load generator: `concurrency` virtual clients, each a closed loop (send,
 * wait for the whole answer, send again) over its own kept-alive connection, for a warm-up then a
 * measured window. Counted: the requests that complete inside the window (rate, latency
 * percentiles, non-200 answers and transport errors).
 *
 * Each client writes its request's bytes on a raw TCP socket and reads the answer's status line,
 * headers and `content-length` bytes of body, the way wrk and autocannon do: on one core node:http's
 * client topped out near 13k requests/s (undici's near 16k) against a server that answers without
 * doing anything, so the client, not the server, would have set the rate and the tail latency of a
 * fast server. This one drives such a server past 30k requests/s.
 */
import { connect, type Socket } from 'node:net';

/** One request to send: the caller builds it from the request's sequence number. */
export interface Shot {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface LoadOptions {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  /** The `n`-th request (0-based over the whole run, warm-up included). */
  readonly shot: (n: number) => Shot;
  /** Checks a 200 answer's body (the first one only): throws when it is not what a seat looks like. */
  readonly check?: (body: string) => void;
  /** The server's CPU time so far (seconds), read at both ends of the window. */
  readonly serverCpu?: () => number | undefined;
}

export interface LoadResult {
  readonly concurrency: number;
  /** Requests completed in the measured window (answered 200 or not). */
  readonly requests: number;
  readonly seconds: number;
  /** Requests answered 200 per second of the window. */
  readonly rps: number;
  readonly p50_ms: number;
  readonly p90_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
  /** Non-200 answers and transport errors in the window. */
  readonly errors: number;
  /** Error kinds (`status 429`, `ECONNRESET`…) with counts, over the whole run. */
  readonly errorKinds: Readonly<Record<string, number>>;
  /** One error body, for diagnosis. */
  readonly errorSample?: string;
  /** Server CPU time per completed request in the window (µs), when `serverCpu` could be read. */
  readonly cpu_us_per_request?: number;
}

interface Answer {
  readonly status: number;
  readonly body: string;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * One kept-alive HTTP/1.1 connection, one request at a time. Answers must carry `content-length`
 * (both servers measured send it); `connection: close` reconnects before the next request.
 */
class Connection {
  #socket: Socket;
  #buffer: Buffer | undefined;
  #pending: { resolve(answer: Answer): void; reject(error: Error): void } | undefined;

  constructor(private readonly host: string, private readonly port: number) {
    this.#socket = this.#open();
  }

  #open(): Socket {
    const socket = connect(this.port, this.host);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('error', (error) => this.#fail(error));
    socket.on('close', () => this.#fail(Object.assign(new Error('connection closed'), { code: 'ECONNRESET' })));
    return socket;
  }

  #fail(error: Error): void {
    const pending = this.#pending;
    this.#pending = undefined;
    this.#buffer = undefined;
    pending?.reject(error);
  }

  #read(chunk: Buffer): void {
    const buffer = this.#buffer === undefined ? chunk : Buffer.concat([this.#buffer, chunk]);
    this.#buffer = buffer;
    const end = buffer.indexOf(HEAD_END);
    if (end < 0) return;
    const head = buffer.toString('latin1', 0, end);
    const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head)?.[1];
    if (length === undefined) {
      this.#fail(new Error(`an answer without content-length: ${head.slice(0, 200)}`));
      return;
    }
    const bodyEnd = end + HEAD_END.length + Number(length);
    if (buffer.length < bodyEnd) return;
    const answer = { status: Number(head.slice(9, 12)), body: buffer.toString('utf8', end + HEAD_END.length, bodyEnd) };
    this.#buffer = buffer.length > bodyEnd ? buffer.subarray(bodyEnd) : undefined;
    const pending = this.#pending;
    this.#pending = undefined;
    if (/\r\nconnection:[ \t]*close/i.test(head)) {
      this.#socket.removeAllListeners().destroy();
      this.#socket = this.#open();
    }
    pending?.resolve(answer);
  }

  send(request: Buffer): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject };
      this.#socket.write(request);
    });
  }

  close(): void {
    this.#socket.removeAllListeners().destroy();
  }
}

/** The request's bytes on the wire. */
const encode = (host: string, shot: Shot): Buffer => {
  let head = `POST ${shot.path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [name, value] of Object.entries(shot.headers)) head += `${name}: ${value}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), shot.body]);
};

/** Nearest-rank percentile of sorted values. */
export const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN);

/**
 * @example
 * const r = await runLoad({ origin, concurrency: 64, warmupMs: 1000, durationMs: 5000, shot: () => ({ path, headers, body }) });
 * r.rps; r.p99_ms;
 */
export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const origin = new URL(opts.origin);
  const connections: Connection[] = [];
  const latencies: number[] = [];
  const errorKinds: Record<string, number> = {};
  let errorSample: string | undefined;
  let errors = 0;
  let next = 0;
  let checked = opts.check === undefined;
  const start = performance.now();
  const windowStart = start + opts.warmupMs;
  const windowEnd = windowStart + opts.durationMs;

  // Server CPU time at both ends of the window (the end is awaited: a timer may fire after the last answer).
  let cpuStart: number | undefined;
  let cpuEnd: number | undefined;
  const serverCpu = opts.serverCpu;
  const sampled = serverCpu === undefined
    ? Promise.resolve()
    : Promise.all([
        new Promise<void>((resolve) => setTimeout(() => resolve(void (cpuStart = serverCpu())), Math.max(0, windowStart - performance.now()))),
        new Promise<void>((resolve) => setTimeout(() => resolve(void (cpuEnd = serverCpu())), Math.max(0, windowEnd - performance.now()))),
      ]);

  /** Set when a client gives up (an answer failed its check): the others stop too. */
  let stopped = false;
  const client = async (): Promise<void> => {
    let connection = new Connection(origin.hostname, Number(origin.port));
    connections.push(connection);
    while (!stopped && performance.now() < windowEnd) {
      const shot = opts.shot(next++);
      const t0 = performance.now();
      let failure: string | undefined;
      let answer: Answer | undefined;
      try {
        answer = await connection.send(encode(origin.host, shot));
      } catch (error) {
        failure = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
        connection.close();
        connection = new Connection(origin.hostname, Number(origin.port));
        connections.push(connection);
      }
      const t1 = performance.now();
      if (answer !== undefined && answer.status !== 200) {
        failure = `status ${answer.status}`;
        errorSample ??= answer.body.slice(0, 500);
      } else if (answer !== undefined && !checked) {
        checked = true;
        try {
          opts.check?.(answer.body);
        } catch (error) {
          stopped = true;
          throw error;
        }
      }
      if (failure !== undefined) errorKinds[failure] = (errorKinds[failure] ?? 0) + 1;
      if (t1 < windowStart || t1 > windowEnd) continue;
      latencies.push(t1 - t0);
      if (failure !== undefined) errors++;
    }
  };

  try {
    await Promise.all(Array.from({ length: opts.concurrency }, client));
    await sampled;
  } finally {
    for (const c of connections) c.close();
  }
  const sorted = Float64Array.from(latencies).sort();
  const seconds = opts.durationMs / 1000;
  return {
    concurrency: opts.concurrency,
    requests: sorted.length,
    seconds,
    rps: (sorted.length - errors) / seconds,
    p50_ms: percentile(sorted, 50),
    p90_ms: percentile(sorted, 90),
    p99_ms: percentile(sorted, 99),
    max_ms: sorted.length === 0 ? NaN : (sorted[sorted.length - 1] ?? NaN),
    errors,
    errorKinds,
    ...(errorSample === undefined ? {} : { errorSample }),
    ...(cpuStart === undefined || cpuEnd === undefined || sorted.length === 0 ? {} : { cpu_us_per_request: ((cpuEnd - cpuStart) * 1e6) / sorted.length }),
  };
}
