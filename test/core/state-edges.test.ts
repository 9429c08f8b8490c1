import { describe, expect, it } from 'vitest';
import { lobbyReady, playerConnected } from '../../src/core/lobby/lifecycle.js';
import { hashKey, PMap } from '../../src/core/pmap.js';
import { routeHostname } from '../../src/core/lobby/routes.js';
import { find } from '../../src/core/matchmaker/find.js';
import { tick } from '../../src/core/tick.js';
import { Tx } from '../../src/core/tx.js';
import { createWorld, LOCAL_REGION, namespaceOf, type World } from '../../src/core/world.js';
import { at, findCommands, ids, mode, NS, worldWith } from './fixtures.js';
import { admitted, eventsOf, lobbyIn, lobbyIndexes, nsOf, okStep, playerIn, scannedLobbyIndexes } from './helpers.js';

// Edges of the state machinery the larger tests reach only by luck: the tick's reasons when two
// timers meet, the working copy's own guards and counters, and the world's defaults.

const newId = ids('se');
const cmd = findCommands(newId);

/** Lobby A created at t=1000 for p1 (reserved) with mode `m`. */
const creating = (m = mode('default')): World => admitted(find(worldWith([m]), cmd({ newLobbyId: 'A', playerIds: ['p1'] }), at(1000))).world;

describe('tick: a reserved player whose max lifetime ends first', () => {
  it('is removed for its lifetime, before its connect deadline', () => {
    // Connect window 120 s, max lifetime 60 s: at 61 s the seat ends by lifetime, still reserved.
    const w = okStep(lobbyReady(creating(mode('default', { timeouts: { playerMaxLifetimeMs: 60_000, playerConnectMs: 120_000 } })), { namespaceId: NS, lobbyId: 'A' }, at(1000))).world;
    expect(playerIn(w, 'p1')).toMatchObject({ status: 'reserved', createdAt: 1000, connectDeadline: 121_000 });
    expect(playerIn(tick(w, NS, at(60_999)).world, 'p1')).toBeDefined();
    const d = tick(w, NS, at(61_000));
    expect(d.value).toMatchObject({ connectExpired: 0, lifetimeExpired: 1 });
    expect(eventsOf(d, 'player-removed')).toMatchObject([{ playerId: 'p1', reason: 'lifetime', wasConnected: false }]);
  });

  it('is removed for its connect deadline when that comes first, and named so', () => {
    const w = okStep(lobbyReady(creating(mode('default', { timeouts: { playerMaxLifetimeMs: 600_000, playerConnectMs: 30_000 } })), { namespaceId: NS, lobbyId: 'A' }, at(1000))).world;
    const d = tick(w, NS, at(31_001));
    expect(d.value).toMatchObject({ connectExpired: 1, lifetimeExpired: 0 });
    expect(eventsOf(d, 'player-removed')).toMatchObject([{ playerId: 'p1', reason: 'connect-expired', wasConnected: false }]);
  });

  it('refuses an index that names a lobby the namespace does not have', () => {
    const w = creating();
    const ns = nsOf(w);
    const broken = { ...w, namespaces: w.namespaces.set(NS, { ...ns, timedLobbies: ns.timedLobbies.set('ghost', 0) }) };
    expect(() => tick(broken, NS, at(2000))).toThrow('indexed lobby ghost is not in the namespace');
  });
});

describe('Tx', () => {
  const tx = (w: World) => new Tx(w, nsOf(w), 5000);

  it('refuses a player of an unknown lobby, and a player id already seated', () => {
    const w = creating();
    const p1 = playerIn(w, 'p1');
    if (p1 === undefined) throw new Error('no p1');
    expect(() => tx(w).addPlayer({ ...p1, id: 'p9', lobbyId: 'nope' })).toThrow('addPlayer: no lobby nope');
    expect(() => tx(w).addPlayer(p1)).toThrow('addPlayer: player id p1 is already taken');
    expect(() => tx(w).updatePlayer({ ...p1, id: 'p9' })).toThrow('updatePlayer: no player p9 in A');
  });

  it('counts a connected player once however often it is updated', () => {
    let w = okStep(lobbyReady(creating(), { namespaceId: NS, lobbyId: 'A' }, at(2000))).world;
    w = okStep(playerConnected(w, { namespaceId: NS, lobbyId: 'A', playerId: 'p1' }, at(3000))).world;
    const t = tx(w);
    const p1 = playerIn(w, 'p1');
    if (p1 === undefined) throw new Error('no p1');
    t.updatePlayer({ ...p1, connectDeadline: p1.connectDeadline + 1 });
    const after = t.commit(undefined).world;
    expect(lobbyIn(after, 'A')).toMatchObject({ connectedCount: 1, playerCount: 1 });
    const back = tx(after);
    back.updatePlayer({ ...p1, status: 'reserved' });
    expect(lobbyIn(back.commit(undefined).world, 'A').connectedCount).toBe(0);
  });

  it('forgets an active idle lobby from the active count and the idle set', () => {
    const w = worldWith([mode('default', { regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min: 1, max: 1 } }] })]);
    const seeded = admitted(find(w, cmd({ newLobbyId: 'B', playerIds: ['q1'] }), at(1))).world;
    const withIdle = (() => {
      const s = new Tx(seeded, nsOf(seeded), 2);
      s.removePlayer('B', 'q1');
      return s.commit(undefined).world;
    })();
    expect(nsOf(withIdle)).toMatchObject({ activeLobbies: 1 });
    expect(lobbyIndexes(nsOf(withIdle)).idle.map(([id]) => id)).toEqual(['B']);
    const f = new Tx(withIdle, nsOf(withIdle), 3);
    f.forgetLobby('B');
    const gone = f.commit(undefined).world;
    expect(nsOf(gone).activeLobbies).toBe(0);
    expect(lobbyIndexes(nsOf(gone))).toEqual(scannedLobbyIndexes(nsOf(gone)));
    expect(lobbyIndexes(nsOf(gone)).idle).toEqual([]);
  });
});

describe('world', () => {
  it('has one local region by default', () => {
    expect(createWorld().regions).toEqual([{ id: 'local', displayName: 'Local', provider: 'Tavern' }]);
    expect(LOCAL_REGION).toEqual({ id: 'local', displayName: 'Local', provider: 'Tavern' });
    expect([...createWorld().ports.keys()]).toEqual(['local']);
  });

  it('refuses an unknown namespace', () => {
    expect(() => namespaceOf(createWorld(), 'nope')).toThrow('unknown namespace nope');
  });

  it('names a route by lobby, label, region and job domain, lowercased', () => {
    expect(routeHostname({ lobbyId: 'L-1', label: 'Web', region: 'EU' }, 'Example.Test')).toBe('l-1-web.lobby.eu.example.test');
  });
});

describe('PMap edges', () => {
  it('is the shared empty map again once its last key is deleted', () => {
    expect(PMap.from([['a', 1]]).delete('a')).toBe(PMap.empty());
    expect(PMap.from([['a', 1], ['b', 2]]).delete('a').delete('b')).toBe(PMap.empty());
  });

  it('lists the values of keys whose whole hashes collide', () => {
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; pair === undefined && i < 2_000_000; i++) {
      const k = `k${i}`;
      const prev = seen.get(hashKey(k));
      if (prev !== undefined) pair = [prev, k];
      else seen.set(hashKey(k), k);
    }
    const [a = '', b = ''] = pair ?? [];
    expect(hashKey(a)).toBe(hashKey(b));
    const m = PMap.from([[a, 'first'], [b, 'second'], ['other', 'third']]);
    expect(new Map(m.entries())).toEqual(new Map([[a, 'first'], [b, 'second'], ['other', 'third']]));
    expect([...m.values()].sort()).toEqual(['first', 'second', 'third']);
  });
});
