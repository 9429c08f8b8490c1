import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GameMode } from '../../src/core/config/types.js';
import { applyIdlePlan, type IdlePlan, planIdle } from '../../src/core/idle.js';
import { playerDisconnected, setClosed } from '../../src/core/lobby/lifecycle.js';
import { create } from '../../src/core/matchmaker/create.js';
import { find } from '../../src/core/matchmaker/find.js';
import { publishVersion } from '../../src/core/namespace.js';
import { makeVersion, type NamespaceSettings, type World } from '../../src/core/world.js';
import { at, client, findCommands, ids, mode, NS, worldWith } from './fixtures.js';
import { admitted, effectsOf, eventsOf, lobbyIn, nsOf, okStep } from './helpers.js';

const newId = ids('i');
const findCmd = findCommands(newId);

const idleMode = (min: number, max: number, over: Parameters<typeof mode>[1] = {}): GameMode =>
  mode('default', { regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min, max } }], ...over });

/** Plan and apply with fresh ids, returning the next world and the outcome. */
const reconcile = (w: World, now: number) => {
  const plan = planIdle(nsOf(w));
  const d = applyIdlePlan(w, NS, plan, plan.create.map(() => newId()), at(now));
  return { plan, d };
};

/** Idle lobbies `ids` (in creation order, t = 1, 2, ...) of a mode with max_players 1: each created by a find, then emptied. */
const idleLobbies = (m: GameMode, lobbyIds: readonly string[], settings: Partial<NamespaceSettings> = {}): World => {
  let w = worldWith([m], { settings });
  for (const [i, id] of lobbyIds.entries()) {
    w = admitted(find(w, findCmd({ newLobbyId: id, playerIds: [`player-of-${id}`], client: client(`10.1.0.${i}`) }), at(i + 1))).world;
  }
  for (const id of lobbyIds) w = okStep(playerDisconnected(w, { namespaceId: NS, lobbyId: id, playerId: `player-of-${id}` }, at(100))).world;
  return w;
};
const one = { maxPlayers: { normal: 1, direct: 1, party: 1 } };

describe('planIdle / applyIdlePlan', () => {
  it('creates pooled public lobbies up to idle_lobbies.min', () => {
    const w = worldWith([idleMode(2, 3)]);
    const plan = planIdle(nsOf(w));
    expect(plan).toEqual({ create: [{ region: 'local', gameMode: 'default' }, { region: 'local', gameMode: 'default' }], stop: [] });
    const d = applyIdlePlan(w, NS, plan, ['I1', 'I2', 'unused'], at(50));
    expect(d.value).toEqual({ created: ['I1', 'I2'], stopped: [], failed: [] });
    for (const id of ['I1', 'I2']) {
      expect(lobbyIn(d.world, id)).toMatchObject({ origin: 'pooled', publicity: 'public', playerCount: 0, tags: {}, createdAt: 50 });
    }
    expect(effectsOf(d, 'start-lobby').map((e) => e.lobbyId)).toEqual(['I1', 'I2']);
    expect(nsOf(d.world).lobbies.has('unused')).toBe(false);
    // Within bounds now: nothing more to do, and a find uses a pooled lobby rather than creating one.
    expect(planIdle(nsOf(d.world))).toEqual({ create: [], stop: [] });
    const seat = admitted(find(d.world, findCmd({ newLobbyId: 'new' }), at(60))).value;
    expect(seat.created).toBe(false);
    expect(['I1', 'I2']).toContain(seat.lobbyId);
  });

  it('stops the oldest idle lobbies above idle_lobbies.max', () => {
    const w = idleLobbies(idleMode(0, 1, one), ['L1', 'L2', 'L3']);
    const { plan, d } = reconcile(w, 200);
    expect(plan).toEqual({ create: [], stop: ['L1', 'L2'] });
    expect(d.value.stopped).toEqual(['L1', 'L2']);
    expect(lobbyIn(d.world, 'L1').lifecycle).toMatchObject({ status: 'stopping', reason: 'idle' });
    expect(lobbyIn(d.world, 'L3').lifecycle.status).toBe('creating');
    expect(eventsOf(d, 'lobby-stopping').map((e) => [e.lobbyId, e.reason])).toEqual([['L1', 'idle'], ['L2', 'idle']]);
  });

  it('with the default max 0, an emptied lobby is stopped', () => {
    const { plan } = reconcile(idleLobbies(mode('default', one), ['L1']), 200);
    expect(plan.stop).toEqual(['L1']);
  });

  it('stops idle lobbies of an outdated version after a publish, and refills the pool in the new one', () => {
    let w = reconcile(worldWith([idleMode(1, 1)]), 10).d.world;
    const [old] = [...nsOf(w).lobbies.keys()];
    w = publishVersion(w, NS, makeVersion('v2', { gameModes: [idleMode(1, 1)] }), at(20)).world;
    const { plan, d } = reconcile(w, 30);
    expect(plan.stop).toEqual([old]);
    expect(plan.create).toEqual([{ region: 'local', gameMode: 'default' }]);
    expect(lobbyIn(d.world, old ?? '')).toMatchObject({ lifecycle: { status: 'stopping', reason: 'outdated' } });
    const [created] = d.value.created;
    expect(lobbyIn(d.world, created ?? '').versionId).toBe('v2');
  });

  it('bounds creations by lobby_count_max, counting the lobbies it stops as freed', () => {
    expect(planIdle(nsOf(worldWith([idleMode(5, 5)], { settings: { lobbyCountMax: 3 } }))).create).toHaveLength(3);
    // One busy lobby takes one of the three.
    let w = worldWith([idleMode(5, 5)], { settings: { lobbyCountMax: 3 } });
    w = admitted(find(w, findCmd(), at(1))).world;
    expect(planIdle(nsOf(w)).create).toHaveLength(2);
    // Two outdated idle lobbies at the cap: they are stopped, so two new ones fit.
    let x = reconcile(worldWith([idleMode(2, 2)], { settings: { lobbyCountMax: 2 } }), 10).d.world;
    x = publishVersion(x, NS, makeVersion('v2', { gameModes: [idleMode(2, 2)] }), at(20)).world;
    const { plan, d } = reconcile(x, 30);
    expect(plan.stop).toHaveLength(2);
    expect(plan.create).toHaveLength(2);
    expect(d.value.created).toHaveLength(2);
    expect(d.value.failed).toEqual([]);
    expect(nsOf(d.world).activeLobbies).toBe(2);
  });

  it('never stops a lobby that holds a player, even outdated, closed or above max', () => {
    let w = worldWith([mode('default')]); // max 0
    w = admitted(find(w, findCmd({ newLobbyId: 'busy' }), at(1))).world;
    expect(planIdle(nsOf(w)).stop).toEqual([]);
    w = okStep(setClosed(w, { namespaceId: NS, lobbyId: 'busy', closed: true }, at(2))).world;
    w = publishVersion(w, NS, makeVersion('v2', { gameModes: [mode('default')] }), at(3)).world;
    expect(planIdle(nsOf(w)).stop).toEqual([]);
    // A stale plan naming it does not stop it either.
    const stale: IdlePlan = { create: [], stop: ['busy'] };
    const d = applyIdlePlan(w, NS, stale, [], at(4));
    expect(d.value.stopped).toEqual([]);
    expect(lobbyIn(d.world, 'busy').lifecycle.status).toBe('creating');
  });

  it('stops an idle closed lobby and an emptied private custom lobby (find can never use them)', () => {
    let w = reconcile(worldWith([idleMode(1, 1)]), 10).d.world;
    const [pooled] = [...nsOf(w).lobbies.keys()];
    w = okStep(setClosed(w, { namespaceId: NS, lobbyId: pooled ?? '', closed: true }, at(11))).world;
    const plan = planIdle(nsOf(w));
    expect(plan.stop).toEqual([pooled]);
    expect(plan.create).toHaveLength(1); // the closed one does not count toward the pool

    const custom = mode('default', { actions: { create: { enabled: true } } });
    let c = worldWith([custom]);
    c = admitted(create(c, { namespaceId: NS, gameMode: 'default', playerId: 'cp', newLobbyId: 'C', client: client() }, at(1))).world;
    expect(planIdle(nsOf(c)).stop).toEqual([]);
    c = okStep(playerDisconnected(c, { namespaceId: NS, lobbyId: 'C', playerId: 'cp' }, at(2))).world;
    expect(planIdle(nsOf(c)).stop).toEqual(['C']);
  });

  it('reports creations that fail (ports exhausted) and keeps the rest', () => {
    const ranged = idleMode(2, 2, {
      container: {
        imageId: '00000000-0000-4000-8000-000000000003',
        args: [],
        env: {},
        networkMode: 'host',
        ports: [{ label: 'game', protocol: 'udp', proxy: 'none', portRange: { min: 28000, max: 28001 } }],
      },
    });
    const { d } = reconcile(worldWith([ranged]), 10);
    expect(d.value.created).toHaveLength(1);
    expect(d.value.failed).toMatchObject([{ region: 'local', gameMode: 'default', error: { code: 'PORT_RANGE_EXHAUSTED' } }]);
  });

  it('is a fixpoint: reconciling twice changes nothing the second time', () => {
    const bounds = fc.integer({ min: 0, max: 4 }).chain((min) => fc.record({ min: fc.constant(min), max: fc.integer({ min, max: 6 }) }));
    fc.assert(
      fc.property(bounds, bounds, fc.integer({ min: 0, max: 5 }), fc.integer({ min: 1, max: 12 }), (b1, b2, emptied, cap) => {
        const n = Math.min(emptied, cap);
        let w = idleLobbies(idleMode(b1.min, b1.max, one), Array.from({ length: n }, (_, i) => `E${i}`), { lobbyCountMax: cap });
        w = reconcile(w, 200).d.world;
        w = publishVersion(w, NS, makeVersion('v2', { gameModes: [idleMode(b2.min, b2.max, one)] }), at(300)).world;
        w = reconcile(w, 400).d.world;
        expect(planIdle(nsOf(w))).toEqual({ create: [], stop: [] });
      }),
      { numRuns: 100 },
    );
  });
});
