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
  /** Default `POST`. */
  readonly method?: string;
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
  /**
   * The measured window on the monotonic clock (µs, `process.hrtime`), which V8's CPU profiles of
   * the server use too: `bench/profile.ts` keeps only the samples inside it.
   */
  readonly window_us: readonly [start: number, end: number];
}

interface Answer {
  readonly status: number;
  /** The body, decoded when the request asked for it or the status is not 200. */
  readonly body?: string;
}

const HEAD_END = Buffer.from('\r\n\r\n');
/** Socket reads land in one buffer per connection (`onread`), so reading allocates nothing per answer. */
const READ_BYTES = 64 * 1024;

/**
 * One kept-alive HTTP/1.1 connection, one request at a time. Answers must carry `content-length`
 * (both servers measured send it); `connection: close` reconnects before the next request.
 *
 * The socket reads into a buffer of its own (`net.connect`'s `onread`) and the answer's bytes are
 * gathered in another that is reused for every answer: with a fresh Buffer per read and a string
 * per body, this process's own garbage collections (old-generation ones, driven by the Buffers'
 * external memory) stalled every client at once a few times a second, and that stall was counted
 * in the server's latency.
 */
class Connection {
  #socket: Socket;
  readonly #read = Buffer.allocUnsafe(READ_BYTES);
  /** The bytes of the answer being read (grown when an answer is larger), `#filled` of them set. */
  #answer = Buffer.allocUnsafe(READ_BYTES);
  #filled = 0;
  /** The request being sent (grown when a request is larger). */
  #request = Buffer.allocUnsafe(4096);
  #pending: { resolve(answer: Answer): void; reject(error: Error): void; readonly body: boolean } | undefined;

  constructor(private readonly host: string, private readonly port: number) {
    this.#socket = this.#open();
  }

  #open(): Socket {
    const socket = connect({
      port: this.port,
      host: this.host,
      noDelay: true,
      onread: {
        buffer: this.#read,
        callback: (n: number): boolean => {
          this.#take(n);
          return true; // keep reading
        },
      },
    });
    socket.on('error', (error) => this.#fail(error));
    socket.on('close', () => this.#fail(Object.assign(new Error('connection closed'), { code: 'ECONNRESET' })));
    return socket;
  }

  #fail(error: Error): void {
    const pending = this.#pending;
    this.#pending = undefined;
    this.#filled = 0;
    pending?.reject(error);
  }

  /** `n` bytes arrived in the read buffer: keep them, and settle the request once its answer is whole. */
  #take(n: number): void {
    if (this.#filled + n > this.#answer.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * this.#answer.length, this.#filled + n));
      this.#answer.copy(grown, 0, 0, this.#filled);
      this.#answer = grown;
    }
    this.#read.copy(this.#answer, this.#filled, 0, n);
    this.#filled += n;
    const bytes = this.#answer;
    // Only the bytes of this answer: the rest of the buffer holds older ones.
    const end = bytes.subarray(0, this.#filled).indexOf(HEAD_END);
    if (end < 0) return;
    const head = bytes.toString('latin1', 0, end);
    const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head)?.[1];
    if (length === undefined) {
      this.#fail(new Error(`an answer without content-length: ${head.slice(0, 200)}`));
      return;
    }
    const bodyStart = end + HEAD_END.length;
    const bodyEnd = bodyStart + Number(length);
    if (this.#filled < bodyEnd) return;
    if (this.#filled > bodyEnd) {
      this.#fail(new Error(`${this.#filled - bodyEnd} bytes after the answer, with one request in flight`));
      return;
    }
    const status = Number(head.slice(9, 12));
    const pending = this.#pending;
    const answer: Answer = status === 200 && pending?.body !== true ? { status } : { status, body: bytes.toString('utf8', bodyStart, bodyEnd) };
    this.#filled = 0;
    this.#pending = undefined;
    if (/\r\nconnection:[ \t]*close/i.test(head)) {
      this.#socket.removeAllListeners().destroy();
      this.#socket = this.#open();
    }
    pending?.resolve(answer);
  }

  /**
   * Sends a request; `body`: decode the answer's body even when it is a 200. The request's bytes
   * are written from a buffer reused for every request: the server reads all of them before it
   * answers, and the next request waits for the answer.
   */
  send(shot: Shot, body: boolean): Promise<Answer> {
    let head = `${shot.method ?? 'POST'} ${shot.path} HTTP/1.1\r\nhost: ${shot.headers['host'] ?? `${this.host}:${this.port}`}\r\n`;
    for (const [name, value] of Object.entries(shot.headers)) if (name !== 'host') head += `${name}: ${value}\r\n`;
    head += '\r\n';
    const size = Buffer.byteLength(head, 'latin1') + shot.body.length;
    if (size > this.#request.length) this.#request = Buffer.allocUnsafe(Math.max(size, 2 * this.#request.length));
    const at = this.#request.write(head, 0, 'latin1');
    shot.body.copy(this.#request, at);
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject, body };
      this.#socket.write(this.#request.subarray(0, size));
    });
  }

  close(): void {
    this.#socket.removeAllListeners().destroy();
  }
}

/**
 * The window's latencies, in fixed-size typed chunks: a growing array of numbers is copied into a
 * larger one as it grows, and those copies (megabytes by the end of a run) set off this process's
 * old-generation collections while the clients wait.
 */
class Latencies {
  static readonly #CHUNK = 16_384;
  readonly #full: Float64Array[] = [];
  #chunk = new Float64Array(Latencies.#CHUNK);
  #used = 0;

  add(ms: number): void {
    if (this.#used === this.#chunk.length) {
      this.#full.push(this.#chunk);
      this.#chunk = new Float64Array(Latencies.#CHUNK);
      this.#used = 0;
    }
    this.#chunk[this.#used++] = ms;
  }

  sorted(): Float64Array {
    const all = new Float64Array(this.#full.length * Latencies.#CHUNK + this.#used);
    this.#full.forEach((chunk, i) => all.set(chunk, i * Latencies.#CHUNK));
    all.set(this.#chunk.subarray(0, this.#used), this.#full.length * Latencies.#CHUNK);
    return all.sort();
  }
}

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
  const latencies = new Latencies();
  const errorKinds: Record<string, number> = {};
  let errorSample: string | undefined;
  let errors = 0;
  let next = 0;
  let checked = opts.check === undefined;
  const start = performance.now();
  const windowStart = start + opts.warmupMs;
  const windowEnd = windowStart + opts.durationMs;
  const monotonicUs = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;

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
        answer = await connection.send(shot, !checked);
      } catch (error) {
        failure = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
        connection.close();
        connection = new Connection(origin.hostname, Number(origin.port));
        connections.push(connection);
      }
      const t1 = performance.now();
      if (answer !== undefined && answer.status !== 200) {
        failure = `status ${answer.status}`;
        errorSample ??= (answer.body ?? '').slice(0, 500);
      } else if (answer !== undefined && !checked) {
        checked = true;
        try {
          opts.check?.(answer.body ?? '');
        } catch (error) {
          stopped = true;
          throw error;
        }
      }
      if (failure !== undefined) errorKinds[failure] = (errorKinds[failure] ?? 0) + 1;
      if (t1 < windowStart || t1 > windowEnd) continue;
      latencies.add(t1 - t0);
      if (failure !== undefined) errors++;
    }
  };

  try {
    await Promise.all(Array.from({ length: opts.concurrency }, client));
    await sampled;
  } finally {
    for (const c of connections) c.close();
  }
  const sorted = latencies.sorted();
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
    window_us: [Math.round(monotonicUs + windowStart * 1000), Math.round(monotonicUs + windowEnd * 1000)],
  };
}
