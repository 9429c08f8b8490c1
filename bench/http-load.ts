/**
 * The `http` benchmark's load generator: `concurrency` virtual clients, each a closed loop (send,
 * wait for the whole answer, send again) over kept-alive `node:http` connections, for a warm-up
 * then a measured window. Counted: the requests that complete inside the window (rate, latency
 * percentiles, non-200 answers and transport errors).
 */
import { Agent, request as httpRequest } from 'node:http';

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

const send = (agent: Agent, origin: URL, shot: Shot): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(
      { agent, host: origin.hostname, port: origin.port, method: 'POST', path: shot.path, headers: shot.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(shot.body);
  });

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
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency, maxFreeSockets: opts.concurrency });
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
    while (!stopped && performance.now() < windowEnd) {
      const shot = opts.shot(next++);
      const t0 = performance.now();
      let failure: string | undefined;
      let answer: Answer | undefined;
      try {
        answer = await send(agent, origin, shot);
      } catch (error) {
        failure = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
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
    agent.destroy();
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
