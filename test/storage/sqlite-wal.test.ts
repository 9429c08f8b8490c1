/**
 * The SQLite match store off the event loop's critical path: WAL checkpoints on a worker thread,
 * and group commits that wait for another connection's write lock without blocking the loop.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase, openSqlite, startCheckpointer } from '../../src/adapters/sqlite/index.js';
import { updateNamespaceSettings } from '../../src/core/namespace.js';
import { DEFAULT_NAMESPACE_SETTINGS } from '../../src/core/world.js';
import type { MatchStore } from '../../src/io/index.js';
import { matchmakerOn } from '../contracts/fakes.js';
import { eventually } from '../wait.js';

const dirs: string[] = [];
const freshDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'tavern-wal-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const PAGE = 4096;

/**
 * Frames in the WAL not yet copied into the database file, read from the wal-index (`-shm`):
 * `mxFrame` of the first header copy (offset 16) minus `nBackfill` of the checkpoint info (offset 96).
 */
const walBacklog = (dir: string): number => {
  const shm = readFileSync(join(dir, 'tavern.db-shm')).subarray(0, 104);
  return shm.readUInt32LE(16) - shm.readUInt32LE(96);
};

/**
 * Writes `rounds` transactions of 20 rows of ~1 page each. With `maxBacklog`, a round first waits
 * (up to 10 s) until at most that many frames wait for a checkpoint, so a busy machine that starves
 * the checkpointer's thread slows the writes down instead of failing the test; a checkpointer that
 * never runs still fails it.
 */
const churn = async (db: Database.Database, dir: string, rounds: number, maxBacklog?: number): Promise<void> => {
  db.exec('CREATE TABLE IF NOT EXISTS blob_rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO blob_rows (body) VALUES (?)');
  const write = db.transaction(() => {
    for (let i = 0; i < 20; i++) insert.run('x'.repeat(PAGE - 200));
  });
  for (let r = 0; r < rounds; r++) {
    if (maxBacklog !== undefined) {
      await eventually(() => `the checkpointer to catch up (${walBacklog(dir)} frames behind)`, () => walBacklog(dir) <= maxBacklog, { timeoutMs: 10_000, everyMs: 5 });
    }
    write.immediate();
  }
};

const walBytes = (dir: string): number => statSync(join(dir, 'tavern.db-wal')).size;

describe('the WAL checkpointer', () => {
  it('keeps the WAL bounded from a worker thread while the main connection never checkpoints', async () => {
    // Control: no automatic checkpoints and no checkpointer: the WAL holds every page written.
    const controlDir = freshDir();
    const control = openDatabase(controlDir);
    control.pragma('wal_autocheckpoint = 0');
    await churn(control, controlDir, 150);
    const unbounded = walBytes(controlDir);
    control.close();
    expect(unbounded).toBeGreaterThan(150 * 20 * PAGE);

    const dir = freshDir();
    const db = openDatabase(dir);
    const checkpointer = startCheckpointer(db, { intervalMs: 5, restartFrames: 200, busyTimeoutMs: 5_000, synchronous: 'normal' });
    try {
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      // The checkpointer restarts the WAL past 200 frames: the backlog stays under 200 plus a few rounds.
      await churn(db, dir, 150, 260);
      expect(walBytes(dir)).toBeLessThan(unbounded / 3);
      expect(db.prepare('SELECT COUNT(*) AS n FROM blob_rows').get()).toEqual({ n: 3000 });
    } finally {
      await checkpointer.stop();
      db.close();
    }
    // Every row is in the database file itself once the last connection closed.
    expect(existsSync(join(dir, 'tavern.db-wal'))).toBe(false);
    const reopened = new Database(join(dir, 'tavern.db'), { readonly: true });
    try {
      expect(reopened.prepare('SELECT COUNT(*) AS n FROM blob_rows').get()).toEqual({ n: 3000 });
    } finally {
      reopened.close();
    }
  });

  it('runs by default under openSqlite: close stops the worker first, so the last connection folds the WAL back', async () => {
    const dir = freshDir();
    const stores = openSqlite(dir);
    await matchmakerOn(stores.match).mm.addNamespace(randomUUID(), DEFAULT_NAMESPACE_SETTINGS);
    // The main connection never checkpoints: the frames it wrote are copied once the worker has
    // opened its connection and run.
    await eventually('the worker to checkpoint the WAL', () => walBacklog(dir) === 0, { everyMs: 10 });
    expect(existsSync(join(dir, 'tavern.db-wal'))).toBe(true);
    await stores.close();
    expect(existsSync(join(dir, 'tavern.db-wal'))).toBe(false);
  });
});

/** Raises the namespace's `lobbyCountMax` by one; resolves with the value it saw. */
const bump = (match: MatchStore, ns: string): Promise<number> =>
  match
    .transact((world) => {
      const settings = world.namespaces.get(ns)?.settings;
      if (settings === undefined) throw new Error(`no namespace ${ns}`);
      return { result: settings.lobbyCountMax, decision: { world: updateNamespaceSettings(world, ns, { ...settings, lobbyCountMax: settings.lobbyCountMax + 1 }), effects: [], events: [], value: undefined } };
    })
    .then((c) => c.result);

describe('group commits while another connection holds the write lock', () => {
  // The group's retries (every millisecond) and its busy clock run on fake timers: the test moves
  // time, and a flush that blocked the loop in SQLite's own busy wait would stall it instead.
  afterEach(() => {
    vi.useRealTimers();
  });
  const fakeTimers = (): void => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance'] });

  /** Whether each promise has settled yet. */
  const settled = (promises: readonly Promise<unknown>[]): boolean[] => {
    const done = promises.map(() => false);
    promises.forEach((p, i) => void p.then(() => (done[i] = true), () => (done[i] = true)));
    return done;
  };

  it('wait without blocking the event loop, then commit in order', async () => {
    const dir = freshDir();
    const stores = openSqlite(dir, { checkpoints: 'inline' });
    const ns = randomUUID();
    await matchmakerOn(stores.match).mm.addNamespace(ns, { ...DEFAULT_NAMESPACE_SETTINGS, lobbyCountMax: 0 });
    const other = new Database(join(dir, 'tavern.db'));
    try {
      other.prepare('BEGIN IMMEDIATE').run();
      fakeTimers();
      const bumps = [bump(stores.match, ns), bump(stores.match, ns)];
      const done = settled(bumps);
      // 50 ms of retries: the loop keeps turning (the fake clock only moves when it does), the group still waits.
      await vi.advanceTimersByTimeAsync(50);
      expect(done).toEqual([false, false]);
      // A later call joins the waiting group.
      bumps.push(bump(stores.match, ns));
      await vi.advanceTimersByTimeAsync(5);
      other.prepare('COMMIT').run();
      await vi.advanceTimersByTimeAsync(5);
      expect(await Promise.all(bumps)).toEqual([0, 1, 2]);
      expect((await stores.match.snapshot()).namespaces.get(ns)?.settings.lobbyCountMax).toBe(3);
    } finally {
      vi.useRealTimers();
      other.close();
      await stores.close();
    }
  });

  it('fail once the lock was held for the busy timeout, not before, and leave the world as it was', async () => {
    const dir = freshDir();
    const stores = openSqlite(dir, { checkpoints: 'inline', busyTimeoutMs: 50 });
    const ns = randomUUID();
    await matchmakerOn(stores.match).mm.addNamespace(ns, { ...DEFAULT_NAMESPACE_SETTINGS, lobbyCountMax: 7 });
    const other = new Database(join(dir, 'tavern.db'));
    try {
      other.prepare('BEGIN IMMEDIATE').run();
      fakeTimers();
      const failed = bump(stores.match, ns);
      const done = settled([failed]);
      await vi.advanceTimersByTimeAsync(45);
      expect(done).toEqual([false]);
      await vi.advanceTimersByTimeAsync(10);
      expect(done).toEqual([true]);
      await expect(failed).rejects.toThrow(/locked by another connection for 50 ms/);
      vi.useRealTimers();
      other.prepare('ROLLBACK').run();
      expect(await bump(stores.match, ns)).toBe(7);
    } finally {
      vi.useRealTimers();
      other.close();
      await stores.close();
    }
  });
});
