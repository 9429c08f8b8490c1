import { describe, expect, it } from 'vitest';
import type { GameMode } from '../../src/core/config/types.js';
import { applyIdlePlan, planIdle } from '../../src/core/idle.js';
import { playerDisconnected } from '../../src/core/lobby/lifecycle.js';
import { find } from '../../src/core/matchmaker/find.js';
import { publishVersion } from '../../src/core/namespace.js';
import { makeVersion, type World } from '../../src/core/world.js';
import { at, client, findCommands, ids, mode, NS, worldWith } from './fixtures.js';
import { admitted, eventsOf, lobbyIn, nsOf, okStep } from './helpers.js';

const newId = ids('io');
const findCmd = findCommands(newId);
const one = { normal: 1, direct: 1, party: 1 };
const pool = (min: number, max: number, name = 'default'): GameMode =>
  mode(name, { maxPlayers: one, regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min, max } }] });

/** Idle lobbies created by finds at the given times (then emptied), ids unrelated to their age. */
const emptied = (w: World, lobbies: readonly (readonly [string, number])[], gameMode = 'default'): World => {
  for (const [id, t] of lobbies) {
    w = admitted(find(w, findCmd({ gameModes: [gameMode], newLobbyId: id, playerIds: [`p-${id}`], client: client(`10.2.0.${t}`) }), at(t))).world;
  }
  for (const [id] of lobbies) w = okStep(playerDisconnected(w, { namespaceId: NS, lobbyId: id, playerId: `p-${id}` }, at(99))).world;
  return w;
};

describe('idle plan: which lobbies stop, in which order', () => {
  it('stops the oldest first, whatever their ids', () => {
    const w = emptied(worldWith([pool(0, 1)]), [['zeta', 1], ['alpha', 2], ['mu', 3], ['beta', 4]]);
    const plan = planIdle(nsOf(w));
    expect(plan).toEqual({ create: [], stop: ['zeta', 'alpha', 'mu'] });
    const d = applyIdlePlan(w, NS, plan, [], at(100));
    expect(d.value.stopped).toEqual(['zeta', 'alpha', 'mu']);
    expect(eventsOf(d, 'lobby-stopping').map((e) => e.lobbyId)).toEqual(['zeta', 'alpha', 'mu']);
    expect(lobbyIn(d.world, 'beta').lifecycle.status).toBe('creating');
  });

  it('breaks a tie of creation times by lobby id', () => {
    // Three lobbies created by one plan, at one instant.
    let w = worldWith([pool(0, 1)]);
    const three = { create: [0, 1, 2].map(() => ({ region: 'local', gameMode: 'default' })), stop: [] };
    w = applyIdlePlan(w, NS, three, ['c', 'a', 'b'], at(50)).world;
    expect(planIdle(nsOf(w)).stop).toEqual(['a', 'b']);
    // With an older one too: age first, then id.
    let x = emptied(worldWith([pool(0, 1)]), [['z', 10]]);
    x = applyIdlePlan(x, NS, three, ['c', 'a', 'b'], at(50)).world;
    expect(planIdle(nsOf(x)).stop).toEqual(['z', 'a', 'b']);
  });

  it('orders every stop by age, outdated lobbies and pool excess together', () => {
    let w = emptied(worldWith([pool(0, 5)]), [['old-b', 5], ['old-a', 30]]);
    w = publishVersion(w, NS, makeVersion('v2', { gameModes: [pool(0, 0)] }), at(31)).world;
    w = emptied(w, [['new-y', 32], ['new-x', 40]]);
    const plan = planIdle(nsOf(w));
    expect(plan.stop).toEqual(['old-b', 'old-a', 'new-y', 'new-x']);
    const d = applyIdlePlan(w, NS, plan, [], at(100));
    expect(eventsOf(d, 'lobby-stopping').map((e) => [e.lobbyId, e.reason])).toEqual([
      ['old-b', 'outdated'],
      ['old-a', 'outdated'],
      ['new-y', 'idle'],
      ['new-x', 'idle'],
    ]);
  });

  it('keeps each (mode, region) pool to its own bounds', () => {
    const regions = [
      { name: 'local', tier: 't', idleLobbies: { min: 1, max: 1 } },
      { name: 'eu', tier: 't', idleLobbies: { min: 0, max: 2 } },
    ];
    let w = worldWith([mode('a', { maxPlayers: one, regions }), mode('b', { maxPlayers: one, regions })]);
    w = emptied(w, [['a1', 1], ['a2', 2]], 'a');
    const plan = planIdle(nsOf(w));
    // a/local holds two (max 1): the older stops; b/local has none (min 1): one is created.
    expect(plan).toEqual({ create: [{ region: 'local', gameMode: 'b' }], stop: ['a1'] });
  });
});
