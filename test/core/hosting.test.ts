import { describe, expect, it } from 'vitest';
import type { Ctx } from '../../src/core/context.js';
import type { Hosting } from '../../src/core/hosting.js';
import { applyIdlePlan, planIdle } from '../../src/core/idle.js';
import { followStarts, NO_BACKOFF, type StartBackoffs } from '../../src/core/lobby/backoff.js';
import { lobbyExited, lobbyReady } from '../../src/core/lobby/lifecycle.js';
import { create } from '../../src/core/matchmaker/create.js';
import { find } from '../../src/core/matchmaker/find.js';
import { publishVersion } from '../../src/core/namespace.js';
import { makeVersion, namespaceOf, type World } from '../../src/core/world.js';
import { admitted, okStep } from './helpers.js';
import { client, findCommands, ids, mode, NS, worldWith } from './fixtures.js';

const UP: Hosting = { canStartIn: () => true, backoff: NO_BACKOFF };
const DOWN: Hosting = { canStartIn: () => false, backoff: NO_BACKOFF };
const ctx = (now: number, hosting: Hosting, seed = 1): Ctx => ({ now, seed, hosting });

const TWO_REGIONS = mode('default', { regions: [{ name: 'eu', tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } }, { name: 'us', tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } }] });
const CUSTOM = mode('custom', { actions: { create: { enabled: true, enablePublic: true, enablePrivate: true } } });

/** A lobby of `gameMode` found and then failed to start at `now`: the committed world and events of the failure. */
const failedStart = (world: World, gameMode: string, now: number, newId: () => string) => {
  const found = admitted(find(world, findCommands(newId)({ gameModes: [gameMode] }), ctx(now, UP)));
  const failed = okStep(lobbyExited(found.world, { namespaceId: NS, lobbyId: found.value.lobbyId, reason: 'start-failed' }, ctx(now, UP)));
  return { world: failed.world, events: failed.events, lobbyId: found.value.lobbyId };
};

/** `failures` failed starts of `gameMode` at `now`, folded into a back-off. */
const failTimes = (world: World, gameMode: string, failures: number, now: number, newId: () => string) => {
  let w = world;
  let backoffs: StartBackoffs = NO_BACKOFF;
  let lastLobbyId = '';
  const lines: string[] = [];
  for (let i = 0; i < failures; i++) {
    const f = failedStart(w, gameMode, now, newId);
    const followed = followStarts(backoffs, f.world, f.events);
    if (followed === undefined) throw new Error('a failed start left the back-off as it was');
    backoffs = followed.backoffs;
    lines.push(...followed.effects.map((e) => `${e.lobbyId}: ${e.line}`));
    w = f.world;
    lastLobbyId = f.lobbyId;
  }
  return { world: w, backoffs, lastLobbyId, lines };
};

describe('find and create where no runtime can start a lobby', () => {
  it('refuses a find that needs a new lobby with MATCHMAKER_RUNTIME_UNAVAILABLE, committing nothing', () => {
    const a = find(worldWith([mode('default')]), findCommands(ids('x'))(), ctx(0, DOWN));
    expect(a).toEqual({ kind: 'rejected', error: { code: 'MATCHMAKER_RUNTIME_UNAVAILABLE', params: { region: 'local' } } });
  });

  it('still seats a find in a lobby that already runs', () => {
    const newId = ids('x');
    const first = admitted(find(worldWith([mode('default')]), findCommands(newId)(), ctx(0, UP)));
    const second = admitted(find(first.world, findCommands(newId)(), ctx(1, DOWN)));
    expect(second.value.lobbyId).toBe(first.value.lobbyId);
    expect(second.effects.some((e) => e.type === 'start-lobby')).toBe(false);
  });

  it('refuses a create the same way', () => {
    const a = create(worldWith([CUSTOM]), { namespaceId: NS, gameMode: 'custom', playerId: 'p', newLobbyId: 'l', client: client() }, ctx(0, DOWN));
    expect(a).toEqual({ kind: 'rejected', error: { code: 'MATCHMAKER_RUNTIME_UNAVAILABLE', params: { region: 'local' } } });
  });

  it('asks per region: refused where no runtime can start, admitted where one can', () => {
    const usOnly: Hosting = { canStartIn: (region) => region === 'us', backoff: NO_BACKOFF };
    const w = worldWith([TWO_REGIONS]);
    const find1 = findCommands(ids('x'));
    expect(find(w, find1({ regions: ['eu'] }), ctx(0, usOnly))).toEqual({ kind: 'rejected', error: { code: 'MATCHMAKER_RUNTIME_UNAVAILABLE', params: { region: 'eu' } } });
    expect(admitted(find(w, find1({ regions: ['us'] }), ctx(0, usOnly))).effects).toContainEqual(expect.objectContaining({ type: 'start-lobby', region: 'us' }));
  });

  it("answers the lobby's own refusal first (the namespace's lobby count), as the service did", () => {
    const a = find(worldWith([mode('default')], { settings: { lobbyCountMax: 0 } }), findCommands(ids('x'))(), ctx(0, DOWN));
    expect(a).toMatchObject({ kind: 'rejected', error: { code: 'MATCHMAKER_TOO_MANY_LOBBIES' } });
  });
});

describe('start back-off, decided by the core', () => {
  const modes = [mode('default'), mode('other')];

  it('grows: one failure is tolerated, the second waits 2 s and says so in the failed lobby log, the third 4 s', () => {
    const newId = ids('x');
    const one = failTimes(worldWith(modes), 'default', 1, 10_000, newId);
    expect(one.backoffs.get(NS)?.get('v1 default')).toMatchObject({ failures: 1, until: 10_000 });
    expect(one.lines).toEqual([]);
    const two = failTimes(worldWith(modes), 'default', 2, 10_000, newId);
    expect(two.backoffs.get(NS)?.get('v1 default')).toEqual({ versionId: 'v1', gameMode: 'default', lastLobbyId: two.lastLobbyId, failures: 2, until: 12_000, lastFailureAt: 10_000 });
    expect(two.lines).toEqual([`${two.lastLobbyId}: game mode default failed to start 2 times in a row: no new lobby of it for 2 s`]);
    const three = failTimes(worldWith(modes), 'default', 3, 10_000, newId);
    expect(three.backoffs.get(NS)?.get('v1 default')).toMatchObject({ failures: 3, until: 14_000 });
    // The value given in is never changed.
    expect(one.backoffs.get(NS)?.get('v1 default')?.failures).toBe(1);
  });

  it('refuses a find or create of that mode with the code, message parameters and metadata the service gave, naming the last failed lobby', () => {
    const f = failTimes(worldWith([...modes, CUSTOM]), 'default', 2, 10_000, ids('x'));
    const held: Hosting = { canStartIn: () => true, backoff: f.backoffs };
    const refused = find(f.world, findCommands(ids('y'))(), ctx(10_500, held));
    expect(refused).toEqual({
      kind: 'rejected',
      error: {
        code: 'MATCHMAKER_LOBBY_START_BACKOFF',
        params: { game_mode: 'default', failures: 2, lobby_id: f.lastLobbyId, seconds: 2 },
        metadata: { retry_after_ms: 1_500, lobby_id: f.lastLobbyId },
      },
    });
    // Other modes start as usual.
    expect(find(f.world, findCommands(ids('z'))({ gameModes: ['other'] }), ctx(10_500, held)).kind).toBe('admitted');
    expect(create(f.world, { namespaceId: NS, gameMode: 'custom', playerId: 'p', newLobbyId: 'l', client: client() }, ctx(10_500, held)).kind).toBe('admitted');
  });

  it('expires: a start is tried again once the wait is over, and a failure then doubles the wait', () => {
    const newId = ids('x');
    const f = failTimes(worldWith(modes), 'default', 2, 10_000, newId);
    const held: Hosting = { canStartIn: () => true, backoff: f.backoffs };
    expect(find(f.world, findCommands(newId)(), ctx(11_999, held)).kind).toBe('rejected');
    const retried = admitted(find(f.world, findCommands(newId)(), ctx(12_000, held)));
    const failed = okStep(lobbyExited(retried.world, { namespaceId: NS, lobbyId: retried.value.lobbyId, reason: 'start-failed' }, ctx(12_000, held)));
    expect(followStarts(f.backoffs, failed.world, failed.events)?.backoffs.get(NS)?.get('v1 default')).toMatchObject({ failures: 3, until: 16_000 });
  });

  it('resets: a lobby of the mode that becomes ready clears it; other events leave it as it was', () => {
    const newId = ids('x');
    const f = failTimes(worldWith(modes), 'default', 1, 10_000, newId);
    const found = admitted(find(f.world, findCommands(newId)(), ctx(10_000, UP)));
    expect(followStarts(f.backoffs, found.world, found.events)).toBeUndefined();
    const ready = okStep(lobbyReady(found.world, { namespaceId: NS, lobbyId: found.value.lobbyId }, ctx(10_100, UP)));
    expect(followStarts(f.backoffs, ready.world, ready.events)).toEqual({ backoffs: new Map(), effects: [] });
  });
});

describe('the idle plan, under back-off and outage', () => {
  const pooled = (name: string) => mode(name, { regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min: 1, max: 1 } }] });

  it('creates nothing while no runtime can start a lobby, and still stops what it would stop', () => {
    const w = worldWith([pooled('default')]);
    expect(planIdle(namespaceOf(w, NS), { now: 0, hosting: DOWN })).toEqual({ create: [], stop: [] });
    const filled = applyIdlePlan(w, NS, planIdle(namespaceOf(w, NS)), ['i1'], ctx(0, UP)).world;
    // A new version makes the pooled lobby outdated: it is stopped, outage or not.
    const outdated = publishVersion(filled, NS, makeVersion('v2', { gameModes: [pooled('default')] }), ctx(0, UP)).world;
    expect(planIdle(namespaceOf(outdated, NS), { now: 0, hosting: DOWN })).toEqual({ create: [], stop: ['i1'] });
  });

  it('leaves out the modes under back-off, and plans them again once the wait is over', () => {
    const f = failTimes(worldWith([pooled('default'), pooled('other')]), 'default', 2, 10_000, ids('x'));
    const held: Hosting = { canStartIn: () => true, backoff: f.backoffs };
    const ns = namespaceOf(f.world, NS);
    expect(planIdle(ns, { now: 11_000, hosting: held }).create).toEqual([{ region: 'local', gameMode: 'other' }]);
    expect(planIdle(ns, { now: 12_000, hosting: held }).create).toEqual([{ region: 'local', gameMode: 'default' }, { region: 'local', gameMode: 'other' }]);
  });
});
