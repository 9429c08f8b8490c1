/**
 * Carries a container's output into its lobby's log: the engine's timestamped lines, split and
 * batched, each line cut at a byte limit, and the lobby's total capped so a chatty container can
 * neither exhaust memory nor fill the disk. What is dropped is said in the log itself, on the
 * lobby's `tavern` stream (Tavern's own lines, apart from the container's output).
 */
import { PassThrough } from 'node:stream';
import type Dockerode from 'dockerode';
import type { GameStream, LogLine, LogStream } from '../../io/catalog.js';

/** Where lines go (the server's `LogBook`, which also wakes long polls). */
export interface LogSink {
  write(lobbyId: string, stream: LogStream, lines: readonly LogLine[]): Promise<unknown>;
}

export interface LogLimits {
  /** A longer line is cut to this many bytes (Rivet cut at 1,024). */
  readonly maxLineBytes: number;
  /** Bytes of output kept per lobby; later lines are counted and dropped. */
  readonly maxBytes: number;
}

export const DEFAULT_LOG_LIMITS: LogLimits = Object.freeze({ maxLineBytes: 4096, maxBytes: 8 * 1024 * 1024 });

/** Lines per write to the sink, and how long a line may wait for its batch. */
const BATCH_LINES = 256;
const BATCH_MS = 50;

/**
 * A line as the engine sends it with `timestamps: true`: an RFC 3339 time with nanoseconds, a
 * space, the text. Returns the time in epoch ms (undefined if the prefix is missing).
 *
 * @example
 * splitTimestamp('2026-11-26T11:20:00.123456789Z hello'); // { at: 1795692000123, text: 'hello' }
 */
export const splitTimestamp = (line: string): { at?: number; text: string } => {
  const space = line.indexOf(' ');
  if (space > 0) {
    const at = Date.parse(line.slice(0, space));
    if (!Number.isNaN(at)) return { at, text: line.slice(space + 1) };
  }
  return { text: line };
};

/** Cuts `text` to at most `max` UTF-8 bytes, never inside a character. */
const cut = (text: string, max: number): string => {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  let end = max;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
};

/**
 * @example
 * const pump = new LogPump(lobbyId, logBook, DEFAULT_LOG_LIMITS, () => Date.now());
 * pump.push('std_out', chunk); // as the engine's demultiplexed output arrives
 * await pump.end();
 */
export class LogPump {
  readonly #lobbyId: string;
  readonly #sink: LogSink;
  readonly #limits: LogLimits;
  readonly #now: () => number;
  readonly #partial: Record<GameStream, string> = { std_out: '', std_err: '' };
  readonly #pending: Record<LogStream, LogLine[]> = { std_out: [], std_err: [], tavern: [] };
  #kept = 0;
  #dropped = { lines: 0, bytes: 0 };
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #failure: Error | undefined;

  constructor(lobbyId: string, sink: LogSink, limits: LogLimits, now: () => number) {
    this.#lobbyId = lobbyId;
    this.#sink = sink;
    this.#limits = limits;
    this.#now = now;
  }

  /** Lines dropped so far for the byte cap. */
  get dropped(): { readonly lines: number; readonly bytes: number } {
    return this.#dropped;
  }

  /** Takes a chunk of one stream's output (lines may span chunks). */
  push(stream: GameStream, chunk: Buffer | string): void {
    const text = this.#partial[stream] + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    const lines = text.split('\n');
    this.#partial[stream] = lines.pop() ?? '';
    for (const line of lines) this.#accept(stream, line);
    // A line that never ends must not grow without bound either.
    if (this.#partial[stream].length > this.#limits.maxLineBytes * 4) {
      this.#accept(stream, this.#partial[stream]);
      this.#partial[stream] = '';
    }
  }

  /** A line Tavern writes itself, on the `tavern` stream (it counts against nothing). */
  note(line: string): void {
    this.#pending.tavern.push({ at: this.#now(), line });
    this.#schedule();
  }

  #accept(stream: GameStream, raw: string): void {
    const { at, text } = splitTimestamp(raw.endsWith('\r') ? raw.slice(0, -1) : raw);
    const line = cut(text, this.#limits.maxLineBytes);
    const bytes = Buffer.byteLength(line, 'utf8') + 1;
    if (this.#kept + bytes > this.#limits.maxBytes) {
      if (this.#dropped.lines === 0) this.note(`this lobby's log reached ${this.#limits.maxBytes} bytes: further lines are dropped`);
      this.#dropped = { lines: this.#dropped.lines + 1, bytes: this.#dropped.bytes + bytes };
      return;
    }
    this.#kept += bytes;
    this.#pending[stream].push({ at: at ?? this.#now(), line });
    if (this.#pending[stream].length >= BATCH_LINES) this.#flush();
    else this.#schedule();
  }

  #schedule(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => this.#flush(), BATCH_MS);
    this.#timer.unref();
  }

  #flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const stream of ['std_out', 'std_err', 'tavern'] as const) {
      const lines = this.#pending[stream];
      if (lines.length === 0) continue;
      this.#pending[stream] = [];
      this.#flushing = this.#flushing.then(
        () => this.#sink.write(this.#lobbyId, stream, lines).then(() => undefined),
      ).catch((error: unknown) => {
        this.#failure ??= error instanceof Error ? error : new Error(`writing the log failed: ${JSON.stringify(error)}`);
      });
    }
  }

  /** Writes what is left (an unfinished last line too) and what was dropped; rejects if a write failed. */
  async end(): Promise<void> {
    for (const stream of ['std_out', 'std_err'] as const) {
      if (this.#partial[stream] !== '') this.#accept(stream, this.#partial[stream]);
      this.#partial[stream] = '';
    }
    if (this.#dropped.lines > 0) this.note(`${this.#dropped.lines} lines (${this.#dropped.bytes} bytes) were dropped over this lobby's log limit`);
    this.#flush();
    await this.#flushing;
    if (this.#failure !== undefined) throw this.#failure;
  }
}

/**
 * Feeds an engine's multiplexed log stream (a container's, or a Swarm service's) into `pump`;
 * resolves once the stream ends, closes or fails.
 *
 * @example
 * const ended = followLogs(docker.modem, await container.logs({ follow: true, stdout: true, stderr: true, timestamps: true }), pump);
 */
export const followLogs = (modem: Dockerode['modem'], logs: NodeJS.ReadableStream, pump: LogPump): Promise<void> =>
  new Promise<void>((resolve) => {
    const out = new PassThrough();
    const err = new PassThrough();
    out.on('data', (chunk: Buffer) => pump.push('std_out', chunk));
    err.on('data', (chunk: Buffer) => pump.push('std_err', chunk));
    modem.demuxStream(logs, out, err);
    logs.on('end', () => resolve());
    logs.on('close', () => resolve());
    logs.on('error', () => resolve());
  });
