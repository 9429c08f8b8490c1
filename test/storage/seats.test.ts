import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { DEFAULT_NAMESPACE_SETTINGS } from '../../src/core/world.js';
import { inconsistencies, matchmakerOn, readyAll, version } from '../contracts/fakes.js';
import { DATABASE_URL, postgresProblem, schemaUnderTest } from './postgres-harness.js';

const WORKER = new URL('./seat-worker.ts', import.meta.url).pathname;
const ROOT = new URL('../../', import.meta.url).pathname;

interface WorkerReport {
  seats: { playerId: string; lobbyId: string; count: number }[];
  errors: string[];
}

/** Starts a worker; resolves once it is connected and waiting for `go`. */
const startWorker = async (args: string[]) => {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.value !== 'ready') throw new Error(`worker said ${String(first.value)}`);
  const report = (async (): Promise<WorkerReport> => {
    const next = await iterator.next();
    const [code] = (await once(child, 'exit')) as [number | null];
    if (code !== 0 || typeof next.value !== 'string') throw new Error(`worker exited with ${code}`);
    return JSON.parse(next.value) as WorkerReport;
  })();
  return { go: () => child.stdin.write('go\n'), report };
};

const problem = await postgresProblem();

describe.skipIf(problem !== undefined && process.env['CI'] === undefined)('atomic seats across processes (PostgreSQL)', () => {
  it('1,000 concurrent finds from two processes for 100 seats: exactly 100 admitted, none over a lobby limit, no port twice', async () => {
    if (problem !== undefined) throw new Error(`PostgreSQL is unreachable at ${DATABASE_URL}: ${problem}`);
    const db = schemaUnderTest();
    try {
      const setup = await db.open();
      const { mm, runtime } = matchmakerOn(setup.match);
      const ns = randomUUID();
      // Ten lobbies and no room for more: the idle update after each find cannot add seats mid-race.
      await mm.addNamespace(ns, { ...DEFAULT_NAMESPACE_SETTINGS, lobbyCountMax: 10 });
      await mm.publish(ns, version(10, 10));
      expect(runtime.started).toHaveLength(10);
      await readyAll(mm, ns);
      const lobbies = [...((await setup.match.snapshot()).namespaces.get(ns)?.lobbies.values() ?? [])];
      expect(lobbies.map((l) => l.lifecycle.status)).toEqual(Array.from({ length: 10 }, () => 'ready'));

      const workers = await Promise.all([0, 1].map((w) => startWorker([DATABASE_URL, db.schema, ns, '500', String(w)])));
      for (const w of workers) w.go();
      const reports = await Promise.all(workers.map((w) => w.report));

      const seats = reports.flatMap((r) => r.seats);
      const errors = reports.flatMap((r) => r.errors);
      expect(seats).toHaveLength(100);
      expect(errors).toHaveLength(900);
      expect(new Set(errors)).toEqual(new Set(['MATCHMAKER_NO_AVAILABLE_LOBBIES']));
      expect(new Set(seats.map((s) => s.playerId)).size).toBe(100);
      // Each admission saw the lobby as committed with its own seat: counts 1..10 once per lobby.
      const perLobby = new Map<string, number[]>();
      for (const s of seats) perLobby.set(s.lobbyId, [...(perLobby.get(s.lobbyId) ?? []), s.count]);
      expect(perLobby.size).toBe(10);
      for (const counts of perLobby.values()) expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));

      // The committed world, read fresh from the rows.
      const world = await (await db.open()).match.snapshot();
      expect(inconsistencies(world)).toEqual([]);
      const after = [...(world.namespaces.get(ns)?.lobbies.values() ?? [])];
      expect(after).toHaveLength(10);
      expect(after.every((l) => l.playerCount === 10 && l.players.size === 10)).toBe(true);
      expect(new Set(after.flatMap((l) => [...l.players.keys()]))).toEqual(new Set(seats.map((s) => s.playerId)));
      const ports = after.flatMap((l) => l.ports.flatMap((p) => [`${p.transport}:${p.hostPort}`, ...(p.protocol === 'udp' ? [`udp:${p.publicPort}`] : [])]));
      expect(new Set(ports).size).toBe(ports.length);
    } finally {
      await db.close();
    }
  });
});
