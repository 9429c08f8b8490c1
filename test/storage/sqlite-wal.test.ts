/**
 * The SQLite match store off the event loop's critical path: WAL checkpoints on a worker thread,
 * and group commits that wait for another connection's write lock without blocking the loop.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, openSqlite, startCheckpointer } from '../../src/adapters/sqlite/index.js';
import { updateNamespaceSettings } from '../../src/core/namespace.js';
import { DEFAULT_NAMESPACE_SETTINGS } from '../../src/core/world.js';
import type { MatchStore } from '../../src/io/index.js';
import { matchmakerOn } from '../contracts/fakes.js';

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
 * Writes `rounds` transactions of 20 rows of ~1 page each, yielding 5 ms between them. With
 * `maxBacklog`, a round first waits (up to 10 s) until at most that many frames wait for a
 * checkpoint, so a busy machine that starves the checkpointer's thread slows the writes down
 * instead of failing the test; a checkpointer that never runs still fails it.
 */
const churn = async (db: Database.Database, dir: string, rounds: number, maxBacklog?: number): Promise<void> => {
  db.exec('CREATE TABLE IF NOT EXISTS blob_rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO blob_rows (body) VALUES (?)');
  const write = db.transaction(() => {
    for (let i = 0; i < 20; i++) insert.run('x'.repeat(PAGE - 200));
  });
  for (let r = 0; r < rounds; r++) {
    for (let waited = 0; maxBacklog !== undefined && walBacklog(dir) > maxBacklog; waited += 5) {
      if (waited >= 10_000) throw new Error(`the checkpointer left ${walBacklog(dir)} frames behind for 10 s`);
      await sleep(5);
    }
    write.immediate();
    await sleep(5);
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
    await sleep(50); // the worker has opened its connection
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
  it('wait without blocking the event loop, then commit in order', async () => {
    const dir = freshDir();
    const stores = openSqlite(dir, { checkpoints: 'inline' });
    const ns = randomUUID();
    await matchmakerOn(stores.match).mm.addNamespace(ns, { ...DEFAULT_NAMESPACE_SETTINGS, lobbyCountMax: 0 });
    const other = new Database(join(dir, 'tavern.db'));
    try {
      other.prepare('BEGIN IMMEDIATE').run();
      const bumps = [bump(stores.match, ns), bump(stores.match, ns)];
      // The loop keeps turning while the group waits: timers fire, and a later call joins the group.
      let ticks = 0;
      for (let i = 0; i < 10; i++) {
        await sleep(5);
        ticks++;
      }
      bumps.push(bump(stores.match, ns));
      await sleep(5);
      expect(ticks).toBe(10);
      other.prepare('COMMIT').run();
      expect(await Promise.all(bumps)).toEqual([0, 1, 2]);
      expect((await stores.match.snapshot()).namespaces.get(ns)?.settings.lobbyCountMax).toBe(3);
    } finally {
      other.close();
      await stores.close();
    }
  });

  it('fail once the lock was held for the busy timeout, and leave the world as it was', async () => {
    const dir = freshDir();
    const stores = openSqlite(dir, { checkpoints: 'inline', busyTimeoutMs: 50 });
    const ns = randomUUID();
    await matchmakerOn(stores.match).mm.addNamespace(ns, { ...DEFAULT_NAMESPACE_SETTINGS, lobbyCountMax: 7 });
    const other = new Database(join(dir, 'tavern.db'));
    try {
      other.prepare('BEGIN IMMEDIATE').run();
      const started = performance.now();
      await expect(bump(stores.match, ns)).rejects.toThrow(/locked by another connection for 50 ms/);
      expect(performance.now() - started).toBeGreaterThanOrEqual(45);
      other.prepare('ROLLBACK').run();
      expect(await bump(stores.match, ns)).toBe(7);
    } finally {
      other.close();
      await stores.close();
    }
  });
});
