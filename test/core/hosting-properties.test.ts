import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Admission } from '../../src/core/admission/gate.js';
import type { Effect } from '../../src/core/effects.js';
import type { Hosting } from '../../src/core/hosting.js';
import { applyIdlePlan, planIdle } from '../../src/core/idle.js';
import { NO_BACKOFF, type StartBackoffs } from '../../src/core/lobby/backoff.js';
import { create } from '../../src/core/matchmaker/create.js';
import { find } from '../../src/core/matchmaker/find.js';
import type { Seat } from '../../src/core/matchmaker/seat.js';
import { namespaceOf, type World } from '../../src/core/world.js';
import { mode, NS, worldWith } from './fixtures.js';

const pooled = (name: string) =>
  mode(name, {
    regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min: 1, max: 2 } }, { name: 'eu', tier: 'basic-1d1', idleLobbies: { min: 0, max: 1 } }],
    maxPlayers: { normal: 3, direct: 4, party: 3 },
    container: { args: [], env: {}, networkMode: 'bridge', ports: [] },
    actions: { create: { enabled: true, enablePublic: true, enablePrivate: true } },
  });
const MODES = [pooled('a'), pooled('b')];
const UP: Hosting = { canStartIn: () => true, backoff: NO_BACKOFF };
const DOWN: Hosting = { canStartIn: () => false, backoff: NO_BACKOFF };

let counter = 0;
const fresh = (p: string): string => `${p}-${++counter}`;
const starts = (effects: readonly Effect[]) => effects.filter((e) => e.type === 'start-lobby');

/** One matchmaking call: a find (some modes, some players), a create, or an idle reconciliation. */
type Call = { k: 'find'; modes: string[]; n: number; region: 'local' | 'eu' } | { k: 'create'; mode: string } | { k: 'idle' };
const call: fc.Arbitrary<Call> = fc.oneof(
  fc.record({ k: fc.constant('find' as const), modes: fc.shuffledSubarray(['a', 'b'], { minLength: 1 }), n: fc.integer({ min: 1, max: 3 }), region: fc.constantFrom('local' as const, 'eu' as const) }),
  fc.record({ k: fc.constant('create' as const), mode: fc.constantFrom('a', 'b') }),
  fc.constant({ k: 'idle' as const }),
);

/** Runs `c` on `w`: what it committed (undefined: nothing) and how it was refused, if it was. */
const perform = (w: World, c: Call, now: number, hosting: Hosting, seed: number): { world?: World; effects: readonly Effect[]; refused?: string } => {
  const ctx = { now, seed, hosting };
  const client = { ip: fresh('ip') };
  const of = (a: Admission<Seat>) =>
    a.kind === 'admitted' ? { world: a.decision.world, effects: a.decision.effects }
    : a.kind === 'rejected' ? { ...(a.decision === undefined ? {} : { world: a.decision.world }), effects: a.decision?.effects ?? [], refused: a.error.code }
    : { effects: [] };
  if (c.k === 'find') {
    return of(find(w, { namespaceId: NS, gameModes: c.modes, regions: [c.region], playerIds: Array.from({ length: c.n }, () => fresh('p')), newLobbyId: fresh('L'), client }, ctx));
  }
  if (c.k === 'create') return of(create(w, { namespaceId: NS, gameMode: c.mode, playerId: fresh('p'), newLobbyId: fresh('C'), client }, ctx));
  const plan = planIdle(namespaceOf(w, NS), ctx);
  const d = applyIdlePlan(w, NS, plan, plan.create.map(() => fresh('I')), ctx);
  return { world: d.world, effects: d.effects };
};

/** A world after `calls` with every runtime up (lobbies of both modes, some full). */
const build = (calls: readonly Call[]): World =>
  calls.reduce((w, c, i) => perform(w, c, 1_000, UP, i).world ?? w, worldWith(MODES, { settings: { lobbyCountMax: 1000 } }));

describe('hosting facts, as properties', () => {
  it('with the runtime unreachable, no find, create or idle plan ever returns a start effect, and a refused call commits nothing', () => {
    const seen = { seated: 0, refused: 0 };
    fc.assert(
      fc.property(fc.array(call, { maxLength: 25 }), fc.array(call, { minLength: 1, maxLength: 10 }), fc.nat(), (setup, calls, seed) => {
        let w = build(setup);
        for (const c of calls) {
          const r = perform(w, c, 2_000, DOWN, seed);
          expect(starts(r.effects)).toEqual([]);
          if (r.refused === 'MATCHMAKER_RUNTIME_UNAVAILABLE') {
            seen.refused += 1;
            expect(r.world).toBeUndefined();
          } else if (c.k !== 'idle' && r.refused === undefined) seen.seated += 1;
          w = r.world ?? w;
        }
      }),
    );
    // Both branches ran: finds seated in running lobbies, and finds and creates refused.
    expect(seen.seated).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });

  it('under back-off, no call ever starts a lobby of that version and mode before the wait is over, and the other mode starts as usual', () => {
    const seen = { held: 0, otherStarted: 0 };
    fc.assert(
      fc.property(fc.array(call, { maxLength: 15 }), fc.array(fc.tuple(call, fc.integer({ min: 2_000, max: 9_999 })), { minLength: 1, maxLength: 15 }), (setup, calls) => {
        const backoff: StartBackoffs = new Map([[NS, new Map([['v1 a', { versionId: 'v1', gameMode: 'a', lastLobbyId: 'gone', failures: 2, until: 10_000, lastFailureAt: 8_000 }]])]]);
        const hosting: Hosting = { canStartIn: () => true, backoff };
        let w = build(setup);
        for (const [c, now] of calls) {
          const r = perform(w, c, now, hosting, now);
          expect(starts(r.effects).filter((s) => s.gameMode === 'a')).toEqual([]);
          if (r.refused === 'MATCHMAKER_LOBBY_START_BACKOFF') seen.held += 1;
          seen.otherStarted += starts(r.effects).length;
          w = r.world ?? w;
        }
      }),
    );
    expect(seen.held).toBeGreaterThan(0);
    expect(seen.otherStarted).toBeGreaterThan(0);
  });
});
