import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MemoryMatchStore } from '../../src/adapters/memory/match-store.js';
import { MIGRATIONS, migrate, openSqlite, SqliteMatchStore, type SqliteStores } from '../../src/adapters/sqlite/index.js';
import { createWorld } from '../../src/core/world.js';
import { analyticsHistoryContract } from './analytics-history.contract.js';
import { catalogContract } from './catalog.contract.js';
import { demandStoreContract } from './demand-store.contract.js';
import { canonicalRows, inconsistencies, legacyWorld } from './fakes.js';
import { matchStoreContract } from './match-store.contract.js';
import { stoppedLobbiesContract } from './stopped-lobbies.contract.js';

/** A fresh data dir; every store opened on it is closed, and the dir removed, by `close`. */
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'tavern-sqlite-'));
  const stores: SqliteStores[] = [];
  const open = () => {
    const s = openSqlite(dir);
    stores.push(s);
    return s;
  };
  const close = async () => {
    await Promise.all(stores.map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir, open, close };
};

catalogContract('sqlite', () => {
  const d = dataDir();
  return Promise.resolve({ catalog: d.open().catalog, twin: d.open().catalog, close: d.close });
});

demandStoreContract('sqlite', () => {
  const d = dataDir();
  return Promise.resolve({ demand: d.open().demand, twin: d.open().demand, close: d.close });
});

stoppedLobbiesContract('sqlite', () => {
  const d = dataDir();
  return Promise.resolve({ stopped: d.open().stopped, twin: d.open().stopped, close: d.close });
});

analyticsHistoryContract('sqlite', () => {
  const d = dataDir();
  return Promise.resolve({ history: d.open().history, twin: d.open().history, close: d.close });
});

matchStoreContract('sqlite', () => {
  const d = dataDir();
  return Promise.resolve({ match: d.open().match, reopen: () => Promise.resolve(d.open().match), close: d.close });
});

describe('SQLite schema', () => {
  it('migrates a fresh file once, in WAL mode, and records each migration', async () => {
    const d = dataDir();
    try {
      d.open();
      d.open();
      const db = new Database(join(d.dir, 'tavern.db'), { readonly: true });
      try {
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
        const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[];
        expect(versions.map((v) => v.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
      } finally {
        db.close();
      }
    } finally {
      await d.close();
    }
  });

  it('applies only the migrations a database lacks, and refuses a newer database', () => {
    const db = new Database(':memory:');
    try {
      expect(migrate(db, ['CREATE TABLE a (x INTEGER)'])).toBe(1);
      expect(migrate(db, ['CREATE TABLE a (x INTEGER)', 'CREATE TABLE b (y INTEGER)'])).toBe(2);
      expect(migrate(db, ['CREATE TABLE a (x INTEGER)', 'CREATE TABLE b (y INTEGER)'])).toBe(2);
      expect(() => migrate(db, ['CREATE TABLE a (x INTEGER)'])).toThrow(/newer than this Tavern/);
      // A failing migration leaves the database as it was.
      expect(() => migrate(db, ['', '', 'CREATE TABLE c (z INTEGER)', 'NOT SQL'])).toThrow();
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'c'").get()).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it('migrations 3 and 4 move the players out of version 2 lobby documents: the same world, stored row by row, keys in columns', async () => {
    const { world, namespaces, lobbies } = await legacyWorld(new MemoryMatchStore(createWorld()));
    const db = new Database(':memory:');
    try {
      migrate(db, MIGRATIONS.slice(0, 2));
      for (const n of namespaces) db.prepare('INSERT INTO match_namespaces (id, doc) VALUES (?, ?)').run(n.id, JSON.stringify(n.doc));
      for (const l of lobbies) db.prepare('INSERT INTO match_lobbies (id, namespace_id, doc) VALUES (?, ?, ?)').run(l.id, l.namespaceId, JSON.stringify(l.doc));
      db.prepare('UPDATE match_meta SET revision = 1').run();
      expect(migrate(db)).toBe(MIGRATIONS.length);
      const migrated = await new SqliteMatchStore(db, world.regions).snapshot();
      expect(inconsistencies(migrated)).toEqual([]);
      expect(canonicalRows(migrated)).toEqual(canonicalRows(world));
      const players = db.prepare('SELECT COUNT(*) AS n FROM match_players').get() as { n: number };
      expect(players.n).toBe(7);
      const docs = (db.prepare('SELECT doc FROM match_lobbies').all() as { doc: string }[]).map((r) => JSON.parse(r.doc) as Record<string, unknown>);
      expect(docs.filter((d) => 'players' in d || 'playerCount' in d || 'connectedCount' in d)).toEqual([]);
      const seats = (db.prepare('SELECT doc FROM match_players').all() as { doc: string }[]).map((r) => JSON.parse(r.doc) as Record<string, unknown>);
      expect(seats.filter((d) => 'id' in d || 'lobbyId' in d)).toEqual([]);
    } finally {
      db.close();
    }
  });
});
