/**
 * The MatchStore contract: every adapter runs this same suite (memory.test.ts, sqlite.test.ts,
 * postgres.test.ts). Decisions come from the real Matchmaker service (fakes for everything else).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { updateNamespaceSettings } from '../../src/core/namespace.js';
import type { MatchStore } from '../../src/io/index.js';
import { canonicalRows as rows, inconsistencies, matchmakerOn, readyAll, version } from './fakes.js';

/** A fresh, empty world store, and how to open another store on the same database. */
export interface MatchStoreUnderTest {
  readonly match: MatchStore;
  /** A new store on the same database (a restart, or another process). */
  reopen(): Promise<MatchStore>;
  close(): Promise<void>;
}

const client = () => ({ ip: `10.${(Math.random() * 255) | 0}.${(Math.random() * 255) | 0}.${(Math.random() * 255) | 0}` });

/**
 * Registers the MatchStore contract for one adapter.
 *
 * @example
 * matchStoreContract('sqlite', async () => ({ match, reopen, close }));
 */
export const matchStoreContract = (name: string, open: () => Promise<MatchStoreUnderTest>): void => {
  describe(`MatchStore contract: ${name}`, () => {
    const opened: MatchStoreUnderTest[] = [];
    const fresh = async () => {
      const s = await open();
      opened.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });

    it('starts empty, persists every decision, and a reopened store sees the same world', async () => {
      const store = await fresh();
      expect([...(await store.match.snapshot()).namespaces.keys()]).toEqual([]);
      const { mm, clock } = matchmakerOn(store.match);
      const ns = randomUUID();
      await mm.addNamespace(ns);
      await mm.publish(ns, version(4, 2));
      await readyAll(mm, ns);
      const seats = [];
      for (let i = 0; i < 11; i++) {
        const outcome = await mm.find({ namespaceId: ns, gameModes: ['default'], client: client() });
        if (!outcome.ok) throw new Error(outcome.error.code);
        seats.push(outcome.seat);
      }
      await readyAll(mm, ns);
      const [first, second, third] = seats;
      if (first === undefined || second === undefined || third === undefined) throw new Error('setup');
      expect((await mm.playerConnected({ namespaceId: ns, lobbyId: first.lobbyId, playerId: first.playerIds[0] ?? '' })).ok).toBe(true);
      expect((await mm.playerDisconnected({ namespaceId: ns, lobbyId: second.lobbyId, playerId: second.playerIds[0] ?? '' })).ok).toBe(true);
      expect((await mm.setClosed({ namespaceId: ns, lobbyId: third.lobbyId }, true)).ok).toBe(true);
      const stopped = seats[10];
      if (stopped === undefined) throw new Error('setup');
      expect((await mm.stopLobby({ namespaceId: ns, lobbyId: stopped.lobbyId })).ok).toBe(true);
      expect((await mm.lobbyExited({ namespaceId: ns, lobbyId: stopped.lobbyId }, 'exited')).ok).toBe(true);
      clock.t += 20 * 60_000;
      await mm.maintain();

      const world = await store.match.snapshot();
      expect(inconsistencies(world)).toEqual([]);
      const lobbies = [...(world.namespaces.get(ns)?.lobbies.values() ?? [])];
      expect(lobbies.length).toBeGreaterThan(2);
      expect(lobbies.find((l) => l.id === first.lobbyId)?.players.get(first.playerIds[0] ?? '')?.status).toBe('connected');
      expect(lobbies.find((l) => l.id === third.lobbyId)?.closed).toBe(true);

      const reopened = await store.reopen();
      const again = await reopened.snapshot();
      expect(rows(again)).toEqual(rows(world));
      expect(inconsistencies(again)).toEqual([]);
      // The reopened store carries on where the first left off.
      const next = await matchmakerOn(reopened).mm.find({ namespaceId: ns, gameModes: ['default'], client: client() });
      expect(next.ok).toBe(true);
      expect(rows(await store.match.snapshot())).toEqual(rows(await reopened.snapshot()));
    });

    it('a result without a decision persists nothing; a failing decide persists nothing and rejects', async () => {
      const store = await fresh();
      const { mm } = matchmakerOn(store.match);
      const ns = randomUUID();
      await mm.addNamespace(ns);
      const before = rows(await store.match.snapshot());
      const out = await store.match.transact((world) => {
        // A change computed but not returned as the decision.
        updateNamespaceSettings(world, ns, { ...(world.namespaces.get(ns)?.settings ?? ({} as never)), lobbyCountMax: 1 });
        return { result: 'nothing' };
      });
      expect(out).toEqual({ result: 'nothing' });
      // Wrapped: the memory store throws synchronously, the database stores reject.
      await expect(async () =>
        store.match.transact((world) => {
          const next = updateNamespaceSettings(world, ns, { ...(world.namespaces.get(ns)?.settings ?? ({} as never)), lobbyCountMax: 2 });
          if (next !== world) throw new Error('decide failed');
          return { result: 0 };
        }),
      ).rejects.toThrow('decide failed');
      expect(rows(await store.match.snapshot())).toEqual(before);
      expect(rows(await (await store.reopen()).snapshot())).toEqual(before);
    });

    it('transact returns the decision it persisted', async () => {
      const store = await fresh();
      const ns = randomUUID();
      const { mm } = matchmakerOn(store.match);
      await mm.addNamespace(ns);
      const out = await store.match.transact((world) => {
        const next = updateNamespaceSettings(world, ns, { ...(world.namespaces.get(ns)?.settings ?? ({} as never)), lobbyCountMax: 3 });
        return { result: 'set', decision: { world: next, effects: [], events: [], value: undefined } };
      });
      expect(out.result).toBe('set');
      expect(out.decision?.world.namespaces.get(ns)?.settings.lobbyCountMax).toBe(3);
      expect((await (await store.reopen()).snapshot()).namespaces.get(ns)?.settings.lobbyCountMax).toBe(3);
    });

    it('transacts started together are decided in order, each on what the previous ones decided; a failing one fails alone', async () => {
      const store = await fresh();
      const ns = randomUUID();
      await matchmakerOn(store.match).mm.addNamespace(ns);
      const start = (await store.match.snapshot()).namespaces.get(ns)?.settings.lobbyCountMax ?? 0;
      const bump = (fails: boolean) => async () =>
        store.match.transact((world) => {
          const current = world.namespaces.get(ns)?.settings;
          if (current === undefined) throw new Error('no namespace');
          if (fails) throw new Error('this one fails');
          const next = updateNamespaceSettings(world, ns, { ...current, lobbyCountMax: current.lobbyCountMax + 1 });
          return { result: current.lobbyCountMax + 1, decision: { world: next, effects: [], events: [], value: undefined } };
        });
      // Started in one turn: the database stores commit them as one group.
      const settled = await Promise.allSettled([false, false, true, false, false].map((fails) => bump(fails)()));
      expect(settled.map((s) => (s.status === 'fulfilled' ? s.value.result : String(s.reason)))).toEqual([
        start + 1, start + 2, 'Error: this one fails', start + 3, start + 4,
      ]);
      expect((await store.match.snapshot()).namespaces.get(ns)?.settings.lobbyCountMax).toBe(start + 4);
      expect((await (await store.reopen()).snapshot()).namespaces.get(ns)?.settings.lobbyCountMax).toBe(start + 4);
    });

    it('concurrent transacts, through two stores on one database, never lose an update', async () => {
      const store = await fresh();
      const twin = await store.reopen();
      const ns = randomUUID();
      await matchmakerOn(store.match).mm.addNamespace(ns);
      const bump = (s: MatchStore) =>
        s.transact((world) => {
          const current = world.namespaces.get(ns)?.settings;
          if (current === undefined) throw new Error('no namespace');
          const next = updateNamespaceSettings(world, ns, { ...current, lobbyCountMax: current.lobbyCountMax + 1 });
          return { result: current.lobbyCountMax, decision: { world: next, effects: [], events: [], value: undefined } };
        });
      const start = (await store.match.snapshot()).namespaces.get(ns)?.settings.lobbyCountMax ?? 0;
      const seen = await Promise.all(Array.from({ length: 40 }, (_, i) => bump(i % 2 === 0 ? store.match : twin)));
      // Each transact saw a different committed value: they ran one after another.
      expect(seen.map((s) => s.result).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => start + i));
      expect((await store.match.snapshot()).namespaces.get(ns)?.settings.lobbyCountMax).toBe(start + 40);
      expect((await twin.snapshot()).namespaces.get(ns)?.settings.lobbyCountMax).toBe(start + 40);
    });

    it('a burst of finds into one lobby, decided as one group, stores every seat and the reopened store holds them all', async () => {
      const store = await fresh();
      const ns = randomUUID();
      const { mm } = matchmakerOn(store.match);
      await mm.addNamespace(ns);
      await mm.publish(ns, version(64, 0));
      const first = await mm.find({ namespaceId: ns, gameModes: ['default'], client: client() });
      expect(first.ok).toBe(true);
      // 21 at once: whole multi-seat statements and single ones in one commit (SQLite writes seats 8 at a time).
      const burst = await Promise.all(Array.from({ length: 21 }, () => mm.find({ namespaceId: ns, gameModes: ['default'], client: client() })));
      expect(burst.every((o) => o.ok)).toBe(true);
      const seated = new Set(burst.flatMap((o) => (o.ok ? o.seat.playerIds : [])));
      expect(seated.size).toBe(21);
      const world = await (await store.reopen()).snapshot();
      expect(inconsistencies(world)).toEqual([]);
      expect(rows(world)).toEqual(rows(await store.match.snapshot()));
      const lobbies = [...(world.namespaces.get(ns)?.lobbies.values() ?? [])];
      expect(lobbies).toHaveLength(1);
      const stored = new Set(lobbies[0]?.players.keys() ?? []);
      for (const id of seated) expect(stored.has(id)).toBe(true);
      expect(stored.size).toBe(22);
    });

    it('concurrent finds through two stores seat every player once, within the limits, on distinct ports', async () => {
      const store = await fresh();
      const twin = await store.reopen();
      const ns = randomUUID();
      const a = matchmakerOn(store.match);
      const b = matchmakerOn(twin);
      await a.mm.addNamespace(ns);
      await a.mm.publish(ns, version(3, 0));
      const outcomes = await Promise.all(
        Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).mm.find({ namespaceId: ns, gameModes: ['default'], client: client() })),
      );
      expect(outcomes.every((o) => o.ok)).toBe(true);
      const world = await (await store.reopen()).snapshot();
      expect(inconsistencies(world)).toEqual([]);
      const lobbies = [...(world.namespaces.get(ns)?.lobbies.values() ?? [])];
      expect(lobbies.reduce((n, l) => n + l.playerCount, 0)).toBe(30);
      expect(lobbies.every((l) => l.playerCount <= 3)).toBe(true);
      expect(lobbies).toHaveLength(10);
    });

    /** A namespace with `n` ready lobbies (idle ones), and their ids. */
    const readyLobbies = async (store: MatchStoreUnderTest, n: number) => {
      const { mm, clock } = matchmakerOn(store.match);
      const ns = randomUUID();
      await mm.addNamespace(ns);
      await mm.publish(ns, version(4, n));
      await readyAll(mm, ns);
      const ids = [...((await store.match.snapshot()).namespaces.get(ns)?.lobbies.keys() ?? [])];
      expect(ids).toHaveLength(n);
      return { mm, clock, ns, ids };
    };

    it('a lobby state is stored with its lobby: set, replaced, cleared; a reopened store and a twin see it', async () => {
      const store = await fresh();
      const twin = await store.reopen();
      const { mm, ns, ids } = await readyLobbies(store, 2);
      const [a = '', b = ''] = ids;
      expect(await store.match.lobbyState(a)).toBeUndefined();
      expect(await mm.setLobbyState({ namespaceId: ns, lobbyId: a }, '{"map":"dust","players":[1,2]}')).toEqual({ ok: true, value: undefined });
      expect(await store.match.lobbyState(a)).toBe('{"map":"dust","players":[1,2]}');
      expect(await twin.lobbyState(a)).toBe('{"map":"dust","players":[1,2]}');
      expect(await (await store.reopen()).lobbyState(a)).toBe('{"map":"dust","players":[1,2]}');
      expect(await store.match.lobbyState(b)).toBeUndefined();
      // A state of 1 MiB (the body cap), with text a database must keep exactly (escapes, astral characters).
      const big = JSON.stringify({ s: 'é😀\u0000"\\', pad: 'x'.repeat(1024 * 1024 - 64) });
      expect((await matchmakerOn(twin).mm.setLobbyState({ namespaceId: ns, lobbyId: b }, big)).ok).toBe(true);
      expect(await store.match.lobbyState(b)).toBe(big);
      expect((await mm.setLobbyState({ namespaceId: ns, lobbyId: a }, '{"map":"nuke"}')).ok).toBe(true);
      expect(await twin.lobbyState(a)).toBe('{"map":"nuke"}');
      expect((await mm.setLobbyState({ namespaceId: ns, lobbyId: a }, undefined)).ok).toBe(true);
      expect(await store.match.lobbyState(a)).toBeUndefined();
      expect(await (await store.reopen()).lobbyState(a)).toBeUndefined();
      expect(await (await store.reopen()).lobbyState(b)).toBe(big);
    });

    it('a stopped lobby loses its state and refuses a new one; an unknown lobby or another namespace\'s is not found', async () => {
      const store = await fresh();
      const { mm, clock, ns, ids } = await readyLobbies(store, 2);
      const [a = '', b = ''] = ids;
      for (const id of ids) expect((await mm.setLobbyState({ namespaceId: ns, lobbyId: id }, '{"n":1}')).ok).toBe(true);
      expect((await mm.stopLobby({ namespaceId: ns, lobbyId: a })).ok).toBe(true);
      expect(await store.match.lobbyState(a)).toBeUndefined();
      expect(await (await store.reopen()).lobbyState(a)).toBeUndefined();
      expect(await mm.setLobbyState({ namespaceId: ns, lobbyId: a }, '{"n":2}')).toMatchObject({ ok: false, error: { code: 'MATCHMAKER_LOBBY_STOPPED', params: { lobby_id: a } } });
      expect(await mm.setLobbyState({ namespaceId: ns, lobbyId: a }, undefined)).toMatchObject({ ok: false, error: { code: 'MATCHMAKER_LOBBY_STOPPED', params: { lobby_id: a } } });
      expect(await store.match.lobbyState(a)).toBeUndefined();
      // The container goes (stopped), then the lobby is forgotten: nothing comes back.
      expect((await mm.lobbyExited({ namespaceId: ns, lobbyId: a }, 'exited')).ok).toBe(true);
      clock.t += 20 * 60_000;
      await mm.maintain();
      expect((await store.match.snapshot()).namespaces.get(ns)?.lobbies.has(a)).toBe(false);
      expect(await mm.setLobbyState({ namespaceId: ns, lobbyId: a }, '{"n":3}')).toEqual({ ok: false, error: { code: 'MATCHMAKER_LOBBY_NOT_FOUND' } });
      expect(await store.match.lobbyState(a)).toBeUndefined();
      expect(await mm.setLobbyState({ namespaceId: randomUUID(), lobbyId: b }, '{"n":4}')).toEqual({ ok: false, error: { code: 'MATCHMAKER_LOBBY_NOT_FOUND' } });
      // A lobby that crashed (stopped at once) loses it too.
      expect((await mm.lobbyExited({ namespaceId: ns, lobbyId: b }, 'crashed')).ok).toBe(true);
      expect(await store.match.lobbyState(b)).toBeUndefined();
    });

    it('a state write and a stop started together are committed in order: the state never outlives its lobby', async () => {
      const store = await fresh();
      const { mm, ns, ids } = await readyLobbies(store, 2);
      const [a = '', b = ''] = ids;
      const [setA, stopA] = await Promise.all([mm.setLobbyState({ namespaceId: ns, lobbyId: a }, '{"x":1}'), mm.stopLobby({ namespaceId: ns, lobbyId: a })]);
      expect([setA.ok, stopA.ok]).toEqual([true, true]);
      const [stopB, setB] = await Promise.all([mm.stopLobby({ namespaceId: ns, lobbyId: b }), mm.setLobbyState({ namespaceId: ns, lobbyId: b }, '{"x":2}')]);
      expect(stopB.ok).toBe(true);
      expect(setB).toMatchObject({ ok: false, error: { code: 'MATCHMAKER_LOBBY_STOPPED', params: { lobby_id: b } } });
      const reopened = await store.reopen();
      for (const s of [store.match, reopened]) {
        expect(await s.lobbyState(a)).toBeUndefined();
        expect(await s.lobbyState(b)).toBeUndefined();
      }
    });

    it('lobbyStates: the states of the lobbies asked for, in their order, within a byte budget; those left out are named', async () => {
      const store = await fresh();
      const { mm, ns, ids } = await readyLobbies(store, 4);
      const [a = '', b = '', c = '', d = ''] = ids;
      const sized = (n: number) => JSON.stringify({ p: 'y'.repeat(n - 8) });
      await mm.setLobbyState({ namespaceId: ns, lobbyId: a }, sized(40));
      await mm.setLobbyState({ namespaceId: ns, lobbyId: b }, sized(50));
      await mm.setLobbyState({ namespaceId: ns, lobbyId: c }, sized(20));
      // d has no state; an unknown id is ignored.
      const page = await store.match.lobbyStates([a, b, c, d, randomUUID()], 64);
      expect([...page.states.entries()]).toEqual([[a, sized(40)], [c, sized(20)]]);
      expect([...page.omitted]).toEqual([b]);
      const all = await (await store.reopen()).lobbyStates([c, b, a, d], 1024 * 1024);
      expect([...all.states.keys()]).toEqual([c, b, a]);
      expect(all.omitted.size).toBe(0);
      expect((await store.match.lobbyStates([], 10)).states.size).toBe(0);
      // Bytes, not characters: 'é' is two.
      await mm.setLobbyState({ namespaceId: ns, lobbyId: d }, JSON.stringify('é'.repeat(10)));
      const utf8 = await store.match.lobbyStates([d], 21);
      expect([...utf8.omitted]).toEqual([d]);
      expect([...(await store.match.lobbyStates([d], 22)).states.keys()]).toEqual([d]);
    });
  });
};
