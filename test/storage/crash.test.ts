import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/adapters/sqlite/index.js';
import type { LobbyDoc, NamespaceRow, PlayerFields } from '../../src/core/persist.js';
import { DEFAULT_NAMESPACE_SETTINGS } from '../../src/core/world.js';
import { inconsistencies, matchmakerOn, version } from '../contracts/fakes.js';

const WORKER = new URL('./crash-worker.ts', import.meta.url).pathname;
const ROOT = new URL('../../', import.meta.url).pathname;

describe('crash safety (SQLite)', () => {
  it('after kill -9 mid-stream, every acknowledged seat is stored and the world is consistent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tavern-crash-'));
    try {
      const ns = randomUUID();
      const setup = openSqlite(dir);
      const { mm } = matchmakerOn(setup.match);
      await mm.addNamespace(ns, { ...DEFAULT_NAMESPACE_SETTINGS, lobbyCountMax: 10_000 });
      await mm.publish(ns, version(4, 0));
      await setup.close();

      const child = spawn(process.execPath, ['--import', 'tsx', WORKER, dir, ns], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = once(child, 'exit');
      const acked = new Map<string, string>();
      for await (const line of createInterface({ input: child.stdout })) {
        const [word, player, lobby] = line.split(' ');
        if (word === 'seat' && player !== undefined && lobby !== undefined) acked.set(player, lobby);
        if (acked.size === 200) child.kill('SIGKILL');
      }
      const [code, signal] = (await exited) as [number | null, string | null];
      expect({ code, signal }).toEqual({ code: null, signal: 'SIGKILL' });
      expect(acked.size).toBeGreaterThanOrEqual(200);

      // The rows as stored: a sound file, every lobby under a stored namespace, every player in a stored lobby.
      const raw = new Database(join(dir, 'tavern.db'));
      try {
        expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
        const namespaces = (raw.prepare('SELECT id, doc FROM match_namespaces').all() as { id: string; doc: string }[]).map((r) => ({ id: r.id, row: JSON.parse(r.doc) as NamespaceRow }));
        const lobbies = (raw.prepare('SELECT id, namespace_id, doc FROM match_lobbies').all() as { id: string; namespace_id: string; doc: string }[]).map((r) => ({
          id: r.id,
          namespaceId: r.namespace_id,
          doc: JSON.parse(r.doc) as LobbyDoc,
        }));
        const players = (raw.prepare('SELECT lobby_id, id, doc FROM match_players').all() as { lobby_id: string; id: string; doc: string }[]).map((r) => ({
          lobbyId: r.lobby_id,
          id: r.id,
          doc: JSON.parse(r.doc) as PlayerFields,
        }));
        expect(namespaces.map((n) => [n.id, n.row.id])).toEqual([[ns, ns]]);
        for (const l of lobbies) {
          expect([l.doc.id, l.doc.namespaceId]).toEqual([l.id, ns]);
          expect(l.namespaceId).toBe(ns);
        }
        const lobbyIds = new Set(lobbies.map((l) => l.id));
        for (const p of players) {
          expect(Object.keys(p.doc).sort()).toEqual(['connectDeadline', 'createdAt', 'source', 'status']);
          expect(lobbyIds.has(p.lobbyId)).toBe(true);
        }
        expect(players.length).toBeGreaterThanOrEqual(200);
      } finally {
        raw.close();
      }

      const reopened = openSqlite(dir);
      try {
        const world = await reopened.match.snapshot();
        expect(inconsistencies(world)).toEqual([]);
        const state = world.namespaces.get(ns);
        const missing = [...acked].filter(([player, lobby]) => state?.lobbies.get(lobby)?.players.get(player) === undefined);
        expect(missing).toEqual([]);
        // The store carries on from there.
        const next = await matchmakerOn(reopened.match).mm.find({ namespaceId: ns, gameModes: ['default'], client: { ip: '192.0.2.1' } });
        expect(next.ok).toBe(true);
      } finally {
        await reopened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
