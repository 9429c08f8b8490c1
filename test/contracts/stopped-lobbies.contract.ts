/**
 * The StoppedLobbyStore contract: every adapter runs this same suite (memory.test.ts,
 * sqlite.test.ts, postgres.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoppedLobbyRecord, StoppedLobbyStore } from '../../src/io/stopped-lobbies.js';

/** A fresh, empty store, and a second store on the same database (another process's view). */
export interface StoppedLobbiesUnderTest {
  readonly stopped: StoppedLobbyStore;
  readonly twin: StoppedLobbyStore;
  close(): Promise<void>;
}

const record = (namespaceId: string, stoppedAt: number, over: Partial<StoppedLobbyRecord> = {}): StoppedLobbyRecord => ({
  lobbyId: randomUUID(), namespaceId, versionId: randomUUID(), gameMode: 'default', region: 'local',
  createdAt: stoppedAt - 5_000, stoppedAt, reason: 'idle', failed: false, lastLines: [],
  ...over,
});

const crash = (namespaceId: string, stoppedAt: number): StoppedLobbyRecord =>
  record(namespaceId, stoppedAt, { reason: 'crashed', failed: true, exitCode: 1, readyAt: stoppedAt - 4_000 });

const KEEP = { perNamespace: 50, since: 0 };
const ALL = { since: 0, failedOnly: false, limit: 100 };
const ids = (records: readonly StoppedLobbyRecord[]): string[] => records.map((r) => r.lobbyId);

/**
 * Registers the StoppedLobbyStore contract for one adapter.
 *
 * @example
 * stoppedLobbiesContract('sqlite', async () => ({ stopped, twin, close }));
 */
export const stoppedLobbiesContract = (name: string, open: () => Promise<StoppedLobbiesUnderTest>): void => {
  describe(`StoppedLobbyStore contract: ${name}`, () => {
    const opened: StoppedLobbiesUnderTest[] = [];
    const fresh = async () => {
      const s = await open();
      opened.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });

    it('keeps a stop as given, optional fields absent or present, and another connection reads it', async () => {
      const { stopped, twin } = await fresh();
      const ns = randomUUID();
      const lines = [
        { at: 1_000, stream: 'std_out' as const, line: 'héllo ✓' },
        { at: 1_001, stream: 'std_err' as const, line: 'tab\tand "quotes" \\ and a nul\u0000byte' },
        { at: 1_002, stream: 'tavern' as const, line: 'stopping: the game server crashed with code 1' },
      ];
      const full = { ...crash(ns, 2_000), lastLines: lines };
      const bare = record(ns, 1_500);
      await stopped.putStoppedLobby(full, KEEP);
      await stopped.putStoppedLobby(bare, KEEP);
      expect(await twin.stoppedLobbies(ns, ALL)).toEqual([full, bare]);
      expect(await twin.stoppedLobby(full.lobbyId)).toEqual(full);
      expect(await twin.stoppedLobby(bare.lobbyId)).toEqual(bare);
      expect(await twin.stoppedLobby(randomUUID())).toBeUndefined();
      expect(await twin.stoppedLobbies(randomUUID(), ALL)).toEqual([]);
    });

    it('lists a namespace newest first (then the greater lobby id), only failures if asked, none before since, at most limit', async () => {
      const { stopped } = await fresh();
      const ns = randomUUID();
      const other = randomUUID();
      const a = crash(ns, 3_000);
      const b = record(ns, 1_000);
      const c = crash(ns, 2_000);
      const d = record(ns, 3_000);
      for (const r of [a, b, c, d, crash(other, 5_000)]) await stopped.putStoppedLobby(r, KEEP);
      const tie = [a, d].sort((x, y) => (x.lobbyId < y.lobbyId ? 1 : -1));
      expect(ids(await stopped.stoppedLobbies(ns, ALL))).toEqual(ids([...tie, c, b]));
      expect(ids(await stopped.stoppedLobbies(ns, { ...ALL, failedOnly: true }))).toEqual(ids([a, c]));
      expect(ids(await stopped.stoppedLobbies(ns, { ...ALL, since: 2_000 }))).toEqual(ids([...tie, c]));
      expect(ids(await stopped.stoppedLobbies(ns, { ...ALL, limit: 1 }))).toEqual(ids(tie.slice(0, 1)));
    });

    it('a lobby is kept once: putting it again replaces it', async () => {
      const { stopped } = await fresh();
      const ns = randomUUID();
      const first = record(ns, 1_000);
      const again = { ...first, stoppedAt: 1_200, reason: 'crashed' as const, failed: true, exitCode: 137 };
      await stopped.putStoppedLobby(first, KEEP);
      await stopped.putStoppedLobby(again, KEEP);
      expect(await stopped.stoppedLobbies(ns, ALL)).toEqual([again]);
      expect(await stopped.stoppedLobby(first.lobbyId)).toEqual(again);
    });

    it('is bounded: per namespace the newest perNamespace failures and as many other stops, and nothing before since anywhere', async () => {
      const { stopped, twin } = await fresh();
      const ns = randomUUID();
      const other = randomUUID();
      const old = record(other, 100);
      await stopped.putStoppedLobby(old, KEEP);
      const crashes = Array.from({ length: 5 }, (_, i) => crash(ns, 1_000 + i));
      const idles = Array.from({ length: 5 }, (_, i) => record(ns, 1_010 + i));
      // Two processes keep stops of one namespace at once.
      await Promise.all([...crashes, ...idles].map((r, i) => (i % 2 === 0 ? stopped : twin).putStoppedLobby(r, { perNamespace: 3, since: 0 })));
      await stopped.putStoppedLobby(record(ns, 1_020), { perNamespace: 3, since: 0 });
      const kept = await stopped.stoppedLobbies(ns, ALL);
      expect(kept.filter((r) => r.failed).map((r) => r.stoppedAt)).toEqual([1_004, 1_003, 1_002]);
      expect(kept.filter((r) => !r.failed).map((r) => r.stoppedAt)).toEqual([1_020, 1_014, 1_013]);
      expect(await stopped.stoppedLobby(crashes[0]?.lobbyId ?? '')).toBeUndefined();
      // Another namespace's stops are not counted against this one; age applies to all.
      expect(await stopped.stoppedLobby(old.lobbyId)).toEqual(old);
      await stopped.putStoppedLobby(record(ns, 2_000), { perNamespace: 3, since: 1_003 });
      expect(await stopped.stoppedLobby(old.lobbyId)).toBeUndefined();
      expect((await stopped.stoppedLobbies(ns, ALL)).map((r) => r.stoppedAt)).toEqual([2_000, 1_020, 1_014, 1_004, 1_003]);
    });
  });
};
