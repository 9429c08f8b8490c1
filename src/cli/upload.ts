/**
 * PUTs files (or byte ranges of them) to presigned URLs: several at once, each retried with a
 * growing pause when the connection fails or the server answers 5xx/408/429, streamed from disk
 * with its bytes counted on the progress bar.
 */
import { createReadStream } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Progress } from './progress.js';

/** One PUT: `length` bytes of `file` from `offset`. */
export interface PartUpload {
  readonly url: string;
  readonly file: string;
  readonly offset: number;
  readonly length: number;
  readonly contentType?: string;
  /** For messages: the file's path in the upload (and part). */
  readonly name: string;
}

export interface UploadOptions {
  /** PUTs at once (default 8, Rivet CLI's). */
  readonly concurrency?: number;
  /** Attempts per PUT beyond the first (default 5). */
  readonly retries?: number;
  /** Pause before the first retry, doubled each time (default 500 ms). */
  readonly backoffMs?: number;
  readonly progress?: Progress;
}

/** A PUT that failed all its attempts. */
export class UploadFailed extends Error {}

/**
 * Parts are read 1 MiB at a time: a 256 MiB PUT through fetch to a local server took 250-410 ms of
 * CPU (client and server in one process) against 410-690 ms with the 64 KiB default (bench/RESULTS.md).
 */
const READ_CHUNK = 2 ** 20;

const retryable = (status: number): boolean => status >= 500 || status === 408 || status === 429;

async function putOnce(part: PartUpload, progress: Progress | undefined): Promise<{ ok: true } | { ok: false; retry: boolean; why: string }> {
  let counted = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      counted += chunk.length;
      progress?.add(chunk.length);
      done(null, chunk);
    },
  });
  const source = part.length === 0 ? Readable.from([]) : createReadStream(part.file, { start: part.offset, end: part.offset + part.length - 1, highWaterMark: READ_CHUNK });
  source.on('error', (e: Error) => counter.destroy(e));
  const body = Readable.toWeb(source.pipe(counter)) as ReadableStream<Uint8Array>;
  const headers: Record<string, string> = { 'content-length': String(part.length) };
  if (part.contentType !== undefined) headers['content-type'] = part.contentType;
  try {
    const res = await fetch(part.url, { method: 'PUT', body, headers, duplex: 'half' });
    const text = await res.text();
    if (res.ok) return { ok: true };
    progress?.add(-counted);
    return { ok: false, retry: retryable(res.status), why: `HTTP ${res.status} ${text.slice(0, 300)}` };
  } catch (e) {
    progress?.add(-counted);
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return { ok: false, retry: true, why: cause?.code ?? cause?.message ?? (e as Error).message };
  }
}

async function putWithRetries(part: PartUpload, options: UploadOptions): Promise<void> {
  const retries = options.retries ?? 5;
  let pause = options.backoffMs ?? 500;
  for (let attempt = 0; ; attempt++) {
    const r = await putOnce(part, options.progress);
    if (r.ok) return;
    if (!r.retry || attempt >= retries) throw new UploadFailed(`uploading ${part.name} failed after ${attempt + 1} attempt(s): ${r.why}`);
    await sleep(pause);
    pause *= 2;
  }
}

/**
 * Uploads every part, `concurrency` at a time; rejects with the first part that failed all its
 * attempts (the others still in flight finish first, so nothing is left writing).
 *
 * @example
 * await uploadParts(parts, { concurrency: 8, progress });
 */
export async function uploadParts(parts: readonly PartUpload[], options: UploadOptions = {}): Promise<void> {
  const queue = [...parts];
  const failures: Error[] = [];
  const worker = async (): Promise<void> => {
    for (let part = queue.shift(); part !== undefined && failures.length === 0; part = queue.shift()) {
      try {
        await putWithRetries(part, options);
      } catch (e) {
        failures.push(e as Error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 8, parts.length)) }, worker));
  if (failures[0] !== undefined) throw failures[0];
}
