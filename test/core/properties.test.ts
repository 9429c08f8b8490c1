import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Admission } from '../../src/core/admission/gate.js';
import type { GameMode } from '../../src/core/config/types.js';
import { applyIdlePlan, planIdle } from '../../src/core/idle.js';
import { isActive, isFindable } from '../../src/core/lobby/flags.js';
import { lobbyExited, lobbyReady, setClosed, stopLobby } from '../../src/core/lobby/lifecycle.js';
import { create } from '../../src/core/matchmaker/create.js';
import { find } from '../../src/core/matchmaker/find.js';
import { join } from '../../src/core/matchmaker/join.js';
import type { Seat } from '../../src/core/matchmaker/seat.js';
import { publishVersion } from '../../src/core/namespace.js';
import type { Decision } from '../../src/core/tx.js';
import { makeVersion, namespaceOf, type World } from '../../src/core/world.js';
import { mode, NS, worldWith } from './fixtures.js';

const MODE = mode('m', {
  maxPlayers: { normal: 3, direct: 5, party: 4 },
  container: { args: [], env: {}, networkMode: 'bridge', ports: [] },
  actions: { create: { enabled: true, enablePublic: true, enablePrivate: true } },
});

/** Random setup steps that leave lobbies in every state: private, closed, stopping, stopped, outdated, full. */
type Setup =
  | { k: 'find'; n: number }
  | { k: 'create'; publicity: 'public' | 'private' }
  | { k: 'close' | 'ready' | 'stop' | 'exit'; at: number }
  | { k: 'publish' };

const setup: fc.Arbitrary<Setup> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 3 }).map((n) => ({ k: 'find' as const, n })) },
  { weight: 2, arbitrary: fc.constantFrom('public' as const, 'private' as const).map((publicity) => ({ k: 'create' as const, publicity })) },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('close' as const, 'ready' as const, 'stop' as const, 'exit' as const), fc.nat()).map(([k, at]) => ({ k, at })) },
  { weight: 1, arbitrary: fc.constant({ k: 'publish' as const }) },
);

let counter = 0;
const fresh = (p: string) => `${p}-${++counter}`;
const client = () => ({ ip: fresh('ip') });

const build = (steps: readonly Setup[]): World => {
  let w = worldWith([MODE], { settings: { lobbyCountMax: 1000 } });
  const take = (d: Decision<unknown> | undefined) => {
    if (d) w = d.world;
  };
  const admitted = (a: Admission<Seat>) => (a.kind === 'admitted' ? a.decision : undefined);
  for (const s of steps) {
    const lobbies = [...namespaceOf(w, NS).lobbies.keys()];
    const ctx = { now: 1000, seed: counter };
    if (s.k === 'find') {
      take(admitted(find(w, { namespaceId: NS, gameModes: ['m'], playerIds: Array.from({ length: s.n }, () => fresh('p')), newLobbyId: fresh('L'), client: client() }, ctx)));
    } else if (s.k === 'create') {
      take(admitted(create(w, { namespaceId: NS, gameMode: 'm', publicity: s.publicity, playerId: fresh('p'), newLobbyId: fresh('C'), client: client() }, ctx)));
    } else if (s.k === 'publish') {
      take(publishVersion(w, NS, makeVersion(fresh('v'), { gameModes: [MODE] }), ctx));
    } else if (lobbies.length > 0) {
      const ref = { namespaceId: NS, lobbyId: lobbies[s.at % lobbies.length] as string };
      const r =
        s.k === 'close' ? setClosed(w, { ...ref, closed: true }, ctx)
        : s.k === 'ready' ? lobbyReady(w, ref, ctx)
        : s.k === 'stop' ? stopLobby(w, { ...ref, reason: 'requested' }, ctx)
        : lobbyExited(w, { ...ref, reason: 'exited' }, ctx);
      if (r.ok) take(r.value);
    }
  }
  return w;
};

/**
 * How many runs of a property reached the branch it is about: a property whose generator stopped
 * reaching it would pass on early returns alone, so each such property also asks that a share of
 * its runs got there (a share a few standard deviations below what the generator gives, so that a
 * run of 50 cases under Stryker holds it too).
 */
const reach = () => {
  const counts = { runs: 0, reached: 0 };
  return { run: () => void (counts.runs += 1), hit: () => void (counts.reached += 1), share: () => counts.reached / Math.max(1, counts.runs) };
};

describe('matchmaking rules, as properties', () => {
  it('find never returns a closed, stopping, stopped, outdated, full or private lobby', () => {
    // Runs where find put the players in a lobby that existed (about 1 in 4 here).
    const joined = reach();
    fc.assert(
      fc.property(fc.array(setup, { maxLength: 40 }), fc.integer({ min: 1, max: 4 }), fc.nat(), (steps, n, seed) => {
        joined.run();
        const w = build(steps);
        const before = namespaceOf(w, NS);
        const a = find(w, { namespaceId: NS, gameModes: ['m'], playerIds: Array.from({ length: n }, () => fresh('p')), newLobbyId: fresh('L'), client: client() }, { now: 2000, seed });
        if (a.kind !== 'admitted' || a.decision.value.created) return;
        joined.hit();
        const chosen = before.lobbies.get(a.decision.value.lobbyId);
        expect(chosen).toBeDefined();
        if (chosen === undefined) return;
        // Checked on the raw fields, not through isFindable (which the index itself uses).
        expect(chosen.closed).toBe(false);
        expect(chosen.publicity).toBe('public');
        expect(['creating', 'ready']).toContain(chosen.lifecycle.status);
        expect(chosen.versionId).toBe(before.currentVersionId);
        expect(chosen.playerCount + n).toBeLessThanOrEqual(n > 1 ? chosen.maxPlayers.party : chosen.maxPlayers.normal);
        // And it is the fullest such lobby, a ready one if any of the fullest is ready.
        const open = (l: typeof chosen) =>
          !l.closed && l.publicity === 'public' && (l.lifecycle.status === 'creating' || l.lifecycle.status === 'ready') && l.versionId === before.currentVersionId;
        const fits = [...before.lobbies.values()].filter((l) => open(l) && l.playerCount + n <= (n > 1 ? l.maxPlayers.party : l.maxPlayers.normal));
        const most = Math.max(...fits.map((l) => l.playerCount));
        expect(chosen.playerCount).toBe(most);
        const readyAmongFullest = fits.some((l) => l.playerCount === most && l.lifecycle.status === 'ready');
        expect(chosen.lifecycle.status === 'ready').toBe(readyAmongFullest);
      }),
    );
    expect(joined.share()).toBeGreaterThanOrEqual(0.05);
  });

  it('seats never exceed the bound of the call that took them (normal for find, party for party finds, direct for join)', () => {
    // Runs where a call filled its lobby exactly to its bound, where a bound off by one would show (about 3 in 5 here).
    const filled = reach();
    fc.assert(
      fc.property(fc.array(setup, { maxLength: 30 }), fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 5 }), fc.nat()), { maxLength: 30 }), (steps, calls) => {
        filled.run();
        let atBound = false;
        let w = build(steps);
        for (const [direct, n, at] of calls) {
          const lobbies = [...namespaceOf(w, NS).lobbies.values()];
          const target = lobbies[at % Math.max(1, lobbies.length)];
          const playerIds = Array.from({ length: n }, () => fresh('p'));
          const a = direct && target
            ? join(w, { namespaceId: NS, lobbyId: target.id, playerIds, client: client() }, { now: 3000, seed: at })
            : find(w, { namespaceId: NS, gameModes: ['m'], playerIds, newLobbyId: fresh('L'), client: client() }, { now: 3000, seed: at });
          if (a.kind !== 'admitted') continue;
          w = a.decision.world;
          const lobby = namespaceOf(w, NS).lobbies.get(a.decision.value.lobbyId);
          const bound = direct && target ? MODE.maxPlayers.direct : n > 1 ? MODE.maxPlayers.party : MODE.maxPlayers.normal;
          expect(lobby?.playerCount ?? Infinity).toBeLessThanOrEqual(bound);
          atBound ||= lobby?.playerCount === bound;
        }
        if (atBound) filled.hit();
      }),
    );
    expect(filled.share()).toBeGreaterThanOrEqual(0.25);
  });

  it('a disabled action is always rejected, with its code', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), fc.boolean(), fc.constantFrom('find', 'join', 'create'), (f, j, c, action) => {
        const gm: GameMode = mode('m', { actions: { find: { enabled: f }, join: { enabled: j }, create: { enabled: c, enablePublic: true } } });
        const open = mode('open', { actions: { create: { enabled: true, enablePublic: true } } });
        let w = worldWith([gm, open]);
        // A lobby of mode m to join, made while everything was enabled.
        const seeded = find(worldWith([mode('m')]), { namespaceId: NS, gameModes: ['m'], playerIds: [fresh('p')], newLobbyId: 'J', client: client() }, { now: 1, seed: 1 });
        if (seeded.kind !== 'admitted') throw new Error('setup');
        w = publishVersion(seeded.decision.world, NS, makeVersion('v1', { gameModes: [gm, open] }), { now: 2, seed: 0 }).world;
        const ctx = { now: 3, seed: 3 };
        const a =
          action === 'find' ? find(w, { namespaceId: NS, gameModes: ['m'], playerIds: [fresh('p')], newLobbyId: fresh('L'), client: client() }, ctx)
          : action === 'join' ? join(w, { namespaceId: NS, lobbyId: 'J', playerIds: [fresh('p')], client: client() }, ctx)
          : create(w, { namespaceId: NS, gameMode: 'm', playerId: fresh('p'), newLobbyId: fresh('C'), client: client() }, ctx);
        const enabled = { find: f, join: j, create: c }[action];
        const code = { find: 'MATCHMAKER_FIND_DISABLED', join: 'MATCHMAKER_JOIN_DISABLED', create: 'MATCHMAKER_CUSTOM_LOBBIES_DISABLED' }[action];
        if (enabled) expect(a.kind).toBe('admitted');
        else expect(a).toMatchObject({ kind: 'rejected', error: { code } });
      }),
    );
  });

  it('after the idle plan every (region, mode) is within [min, max] unless lobby_count_max stops it', () => {
    const bounds = fc.integer({ min: 0, max: 4 }).chain((min) => fc.integer({ min, max: min + 3 }).map((max) => ({ min, max })));
    fc.assert(
      fc.property(
        fc.array(bounds, { minLength: 2, maxLength: 2 }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(setup, { maxLength: 25 }),
        fc.nat(),
        ([b1, b2], lobbyCountMax, steps, seed) => {
          const regions = [
            { name: 'local', tier: 'basic-1d1', idleLobbies: b1 ?? { min: 0, max: 0 } },
            { name: 'eu', tier: 'basic-1d1', idleLobbies: b2 ?? { min: 0, max: 0 } },
          ];
          const gm = { ...MODE, regions };
          let w = build(steps);
          w = publishVersion(w, NS, makeVersion(fresh('v'), { gameModes: [gm] }), { now: 5, seed: 0 }).world;
          const settings = { ...namespaceOf(w, NS).settings, lobbyCountMax };
          w = { ...w, namespaces: w.namespaces.set(NS, { ...namespaceOf(w, NS), settings }) };
          const plan = planIdle(namespaceOf(w, NS));
          const before = namespaceOf(w, NS);
          const d = applyIdlePlan(w, NS, plan, plan.create.map(() => fresh('I')), { now: 6, seed });
          const ns = namespaceOf(d.world, NS);
          for (const id of d.value.stopped) expect(before.lobbies.get(id)?.playerCount).toBe(0);
          for (const r of regions) {
            const idle = [...ns.lobbies.values()].filter((l) => l.region === r.name && l.playerCount === 0 && isFindable(l, ns.currentVersionId)).length;
            expect(idle).toBeLessThanOrEqual(r.idleLobbies.max);
            if (ns.activeLobbies < lobbyCountMax) expect(idle).toBeGreaterThanOrEqual(r.idleLobbies.min);
          }
          expect(ns.activeLobbies).toBeLessThanOrEqual(Math.max(lobbyCountMax, before.activeLobbies));
          expect([...ns.lobbies.values()].filter(isActive).length).toBe(ns.activeLobbies);
        },
      ),
    );
  });
});
