/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the commit that
 * crosses 1,000 WAL pages and fsyncs the WAL and the database file there: under the http bench's
 * finds that made ~1.5% of the group commits take 6–9 ms instead of ~0.7 ms, on the one thread
 * that answers every request (the largest share of the server's p99). With a checkpointer, the
 * main connection never checkpoints (`wal_autocheckpoint = 0`); a worker thread with its own
 * connection to the same file runs `wal_checkpoint(PASSIVE)` every `intervalMs`, which copies the
 * committed frames and fsyncs without taking the write lock, so commits go on meanwhile.
 *
 * Under steady writes a passive checkpoint never finds the WAL fully copied (commits land during
 * its fsync), and SQLite rewinds the WAL only then: once the WAL holds `restartFrames` frames, the
 * worker runs `wal_checkpoint(RESTART)` instead, which holds the write lock while it copies the
 * last frames and fsyncs (7–14 ms here), and the next commit starts the WAL from its beginning. The
 * group commits waiting for the lock meanwhile do not stop the event loop (`GroupQueue`), but
 * their finds wait: under the http bench's ~18k finds/s the WAL grows ~8,000 frames a second, so
 * a rewind at 8,000 frames delayed a whole wave of finds every ~1.1 s (0.3 % of them), and 32,000
 * frames (a WAL file of up to ~128 MB) makes that every ~4 s (p99 9.0 against 10.0 ms in three
 * alternating pairs).
 *
 * Durability is SQLite's own: the worker's connection uses the main one's `synchronous`, and a
 * checkpoint is SQLite's checkpoint, only on another thread. If the worker fails, the main
 * connection goes back to automatic checkpoints.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

export interface CheckpointerOptions {
  /** How often the worker checkpoints (default 200 ms). */
  readonly intervalMs?: number;
  /** WAL frames (pages) at which a blocking `RESTART` checkpoint rewinds the WAL (default 32,000, ~128 MB). */
  readonly restartFrames?: number;
  /** The worker's lock wait for `RESTART` (the main connection's busy timeout). */
  readonly busyTimeoutMs: number;
  readonly synchronous: 'normal' | 'full';
  /** Called when the worker fails (after the main connection went back to automatic checkpoints). */
  readonly onError?: (error: Error) => void;
}

interface WorkerData {
  readonly driver: string;
  readonly file: string;
  readonly intervalMs: number;
  readonly restartFrames: number;
  readonly busyTimeoutMs: number;
  readonly synchronous: string;
}

/** The worker's program (CommonJS, evaluated): plain JavaScript so it runs the same under tsx, vitest and compiled output. */
const WORKER_SOURCE = `
const { parentPort, workerData: w } = require('node:worker_threads');
const Database = require(w.driver);
const db = new Database(w.file);
db.pragma('busy_timeout = ' + w.busyTimeoutMs);
db.pragma('synchronous = ' + w.synchronous);
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)');
const timer = setInterval(() => {
  const { log } = passive.get();
  if (log >= w.restartFrames) restart.get();
}, w.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Starts checkpointing `db`'s WAL on a worker thread; `stop` ends it (the worker closes its
 * connection) and resolves once the worker exited.
 *
 * @example
 * const checkpointer = startCheckpointer(db, { busyTimeoutMs: 10_000, synchronous: 'normal' });
 * await checkpointer.stop(); db.close();
 */
export const startCheckpointer = (db: Database.Database, options: CheckpointerOptions): { stop(): Promise<void> } => {
  const data: WorkerData = {
    driver: createRequire(import.meta.url).resolve('better-sqlite3'),
    file: db.name,
    intervalMs: options.intervalMs ?? 200,
    restartFrames: options.restartFrames ?? 32_000,
    busyTimeoutMs: options.busyTimeoutMs,
    synchronous: options.synchronous === 'full' ? 'FULL' : 'NORMAL',
  };
  db.pragma('wal_autocheckpoint = 0');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: data, execArgv: [] });
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let stopping = false;
  worker.once('error', (error) => {
    if (db.open) db.pragma('wal_autocheckpoint = 1000');
    options.onError?.(error);
  });
  return {
    stop: () => {
      if (!stopping) {
        stopping = true;
        // Referenced again, so the process waits for the worker's connection to close.
        worker.ref();
        worker.postMessage('stop');
      }
      return exited;
    },
  };
};
