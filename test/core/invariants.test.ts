import { describe, expect, it } from 'vitest';
import { inconsistencies } from '../../src/core/invariants.js';
import type { Lobby } from '../../src/core/lobby/lobby.js';
import { lobbyReady, playerConnected } from '../../src/core/lobby/lifecycle.js';
import { find } from '../../src/core/matchmaker/find.js';
import { claimPorts, lobbyPortsInUse, releasePorts } from '../../src/core/ports/index.js';
import type { PMap } from '../../src/core/pmap.js';
import type { World } from '../../src/core/world.js';
import { at, findCommands, ids, mode, NS, worldWith } from './fixtures.js';
import { admitted, lobbyIn, nsOf, okStep } from './helpers.js';

// The consistency check the storage tests and the chaos benchmark rely on: every contradiction it
// is meant to find, found with its own message, and a sound world (with lobbies in two regions, on
// TCP and UDP, in every state it counts) passes.

const newId = ids('inv');
const cmd = findCommands(newId);

const MODE = mode('default', {
  maxPlayers: { normal: 2, direct: 2, party: 2 },
  regions: [
    { name: 'local', tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } },
    { name: 'eu', tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } },
  ],
  container: {
    imageId: '00000000-0000-4000-8000-000000000001',
    args: [],
    env: {},
    networkMode: 'bridge',
    ports: [
      { label: 'game', protocol: 'udp', proxy: 'game_guard', port: 7777 },
      { label: 'web', protocol: 'tcp', proxy: 'game_guard', port: 8080 },
    ],
  },
});

/**
 * Lobby A (local, ready, p1 connected, p2 reserved), lobby B (local, creating, p3) and lobby E
 * (eu, creating, p4): each holds one UDP and one TCP port in its region.
 */
const sound = (): World => {
  let w = worldWith([MODE]);
  w = admitted(find(w, cmd({ newLobbyId: 'A', playerIds: ['p1', 'p2'], regions: ['local'] }), at(1000))).world;
  w = okStep(lobbyReady(w, { namespaceId: NS, lobbyId: 'A' }, at(2000))).world;
  w = okStep(playerConnected(w, { namespaceId: NS, lobbyId: 'A', playerId: 'p1' }, at(3000))).world;
  w = admitted(find(w, cmd({ newLobbyId: 'B', playerIds: ['p3'], regions: ['local'], client: { ip: '10.0.0.2' } }), at(4000))).world;
  w = admitted(find(w, cmd({ newLobbyId: 'E', playerIds: ['p4'], regions: ['eu'], client: { ip: '10.0.0.3' } }), at(5000))).world;
  return w;
};

/** The world with lobby `id` replaced by `f(lobby)`. */
const withLobby = (w: World, id: string, f: (l: Lobby) => Lobby): World => {
  const ns = nsOf(w);
  return { ...w, namespaces: w.namespaces.set(NS, { ...ns, lobbies: ns.lobbies.set(id, f(lobbyIn(w, id))) }) };
};

/** Per-client seat counts without the seats of lobby `l`. */
const sourcesWithout = (sources: PMap<string, number>, l: Lobby): PMap<string, number> => {
  let out = sources;
  for (const p of l.players.values()) out = out.update(p.source, (n) => (n === undefined || n <= 1 ? undefined : n - 1));
  return out;
};

/** The ports of one transport a lobby holds (its proxied port and its host port). */
const portsOf = (l: Lobby, transport: 'tcp' | 'udp'): number[] => [...lobbyPortsInUse(l.ports)[transport]];

/** How many ports of each transport a lobby holds: the same for TCP and UDP with this mode. */
const held = (l: Lobby): number => {
  const n = portsOf(l, 'udp').length;
  if (n === 0 || portsOf(l, 'tcp').length !== n) throw new Error(`lobby ${l.id} holds ${n} udp ports`);
  return n;
};

describe('inconsistencies', () => {
  it('finds nothing in a sound world', () => {
    const w = sound();
    expect([...nsOf(w).lobbies.keys()].sort()).toEqual(['A', 'B', 'E']);
    expect(lobbyIn(w, 'A').connectedCount).toBe(1);
    expect(lobbyIn(w, 'E').region).toBe('eu');
    expect(inconsistencies(w)).toEqual([]);
  });

  it('finds a lobby filed under another namespace than its own', () => {
    const w = withLobby(sound(), 'B', (l) => ({ ...l, namespaceId: 'ns-other' }));
    expect(inconsistencies(w)).toEqual([`lobby B is filed under ${NS} but says ns-other`]);
  });

  it('finds a player count that is not the number of players', () => {
    const w = withLobby(sound(), 'A', (l) => ({ ...l, playerCount: 1 }));
    expect(inconsistencies(w)).toEqual(['lobby A: playerCount 1, 2 players']);
  });

  it('finds a connected count that is not the number of connected players', () => {
    expect(inconsistencies(withLobby(sound(), 'A', (l) => ({ ...l, connectedCount: 2 })))).toEqual(['lobby A: connectedCount 2, 1 connected']);
    expect(inconsistencies(withLobby(sound(), 'B', (l) => ({ ...l, connectedCount: 1 })))).toEqual(['lobby B: connectedCount 1, 0 connected']);
  });

  it('finds more players than the larger of the direct and party limits, and allows exactly that many', () => {
    const over = withLobby(sound(), 'A', (l) => ({ ...l, maxPlayers: { normal: 1, direct: 1, party: 1 } }));
    expect(inconsistencies(over)).toEqual(['lobby A: 2 players over its limits']);
    // Two players: within a direct limit of 2 (party 1), or a party limit of 2 (direct 1).
    expect(inconsistencies(withLobby(sound(), 'A', (l) => ({ ...l, maxPlayers: { normal: 1, direct: 2, party: 1 } })))).toEqual([]);
    expect(inconsistencies(withLobby(sound(), 'A', (l) => ({ ...l, maxPlayers: { normal: 1, direct: 1, party: 2 } })))).toEqual([]);
  });

  it('finds per-client seat counts that disagree with the seats', () => {
    const w = sound();
    const ns = nsOf(w);
    const counts = [...ns.sources.entries()];
    expect(counts.length).toBeGreaterThan(0);
    const [source, n] = counts[0] ?? ['', 0];
    const changed = { ...w, namespaces: w.namespaces.set(NS, { ...ns, sources: ns.sources.set(source, n + 1) }) };
    expect(inconsistencies(changed)).toEqual([`namespace ${NS}: per-client seat counts disagree`]);
    const missing = { ...w, namespaces: w.namespaces.set(NS, { ...ns, sources: ns.sources.delete(source) }) };
    expect(inconsistencies(missing)).toEqual([`namespace ${NS}: per-client seat counts disagree`]);
  });

  it('counts creating and ready lobbies as active, not stopping or stopped ones', () => {
    const w = sound();
    const ns = nsOf(w);
    expect(ns.activeLobbies).toBe(3);
    const off = { ...w, namespaces: w.namespaces.set(NS, { ...ns, activeLobbies: 4 }) };
    expect(inconsistencies(off)).toEqual([`namespace ${NS}: activeLobbies 4, 3 active`]);
    // Stopping: no longer active, still holding its ports.
    const stopping = withLobby(w, 'B', (l) => ({ ...l, lifecycle: { status: 'stopping', stoppingAt: 6000, reason: 'requested' } }));
    expect(inconsistencies(stopping)).toEqual([`namespace ${NS}: activeLobbies 3, 2 active`]);
  });

  it('does not count the ports of a stopped lobby as held', () => {
    const w = sound();
    const b = lobbyIn(w, 'B');
    const stopped = withLobby(w, 'B', (l) => ({ ...l, lifecycle: { status: 'stopped', stoppedAt: 6000, reason: 'requested', failed: false } }));
    const a = held(lobbyIn(w, 'A'));
    const both = a + held(b);
    expect(inconsistencies(stopped)).toEqual([
      `namespace ${NS}: activeLobbies 3, 2 active`,
      `local tcp: ${both} ports taken, lobbies hold ${a}`,
      `local udp: ${both} ports taken, lobbies hold ${a}`,
    ]);
    // With its ports given back to the space, and the count fixed, the world is sound again.
    const local = w.ports.get('local');
    if (local === undefined) throw new Error('no local port space');
    const freed = releasePorts(releasePorts(local, 'tcp', portsOf(b, 'tcp')), 'udp', portsOf(b, 'udp'));
    const ns = nsOf(stopped);
    const fixed = { ...stopped, ports: stopped.ports.set('local', freed), namespaces: stopped.namespaces.set(NS, { ...ns, activeLobbies: 2 }) };
    expect(inconsistencies(fixed)).toEqual([]);
  });

  it('finds a port held by two lobbies of a region, on each transport', () => {
    const w = sound();
    const a = lobbyIn(w, 'A');
    const shared = withLobby(w, 'B', (l) => ({ ...l, ports: a.ports }));
    // Lobbies are scanned in the namespace's order: the later one is named second.
    const order = [...nsOf(shared).lobbies.keys()].filter((id) => id !== 'E').join(' and ');
    const n = held(a);
    expect(inconsistencies(shared)).toEqual([
      ...portsOf(a, 'tcp').map((port) => `tcp port ${port} held by ${order}`),
      ...portsOf(a, 'udp').map((port) => `udp port ${port} held by ${order}`),
      `local tcp: ${2 * n} ports taken, lobbies hold ${n}`,
      `local udp: ${2 * n} ports taken, lobbies hold ${n}`,
    ]);
  });

  it('lets lobbies of different regions hold the same port number', () => {
    const w = sound();
    const a = lobbyIn(w, 'A');
    const e = lobbyIn(w, 'E');
    const eu = w.ports.get('eu');
    if (eu === undefined) throw new Error('no eu port space');
    // E takes A's port numbers in its own region's space.
    const moved = releasePorts(releasePorts(eu, 'tcp', portsOf(e, 'tcp')), 'udp', portsOf(e, 'udp'));
    const euSpace = claimPorts(claimPorts(moved, 'tcp', portsOf(a, 'tcp')), 'udp', portsOf(a, 'udp'));
    const same = withLobby({ ...w, ports: w.ports.set('eu', euSpace) }, 'E', (l) => ({ ...l, ports: a.ports }));
    expect(inconsistencies(same)).toEqual([]);
  });

  it('finds a port a lobby holds that its region has free, and a count that differs', () => {
    const w = sound();
    const a = lobbyIn(w, 'A');
    const local = w.ports.get('local');
    if (local === undefined) throw new Error('no local port space');
    const [port = 0] = portsOf(a, 'udp');
    const all = held(a) + held(lobbyIn(w, 'B'));
    const freed = { ...w, ports: w.ports.set('local', releasePorts(local, 'udp', [port])) };
    expect(inconsistencies(freed)).toEqual([`local udp: ${all - 1} ports taken, lobbies hold ${all}`, `local udp port ${port} held but free`]);
  });

  it('finds ports taken in a region where no lobby holds any', () => {
    const w = sound();
    const e = lobbyIn(w, 'E');
    const ns = nsOf(w);
    const gone = { ...w, namespaces: w.namespaces.set(NS, { ...ns, lobbies: ns.lobbies.delete('E'), activeLobbies: 2, sources: sourcesWithout(ns.sources, e) }) };
    const n = held(e);
    expect(n).toBeGreaterThan(0);
    expect(inconsistencies(gone)).toEqual([`eu tcp: ${n} ports taken, lobbies hold 0`, `eu udp: ${n} ports taken, lobbies hold 0`]);
  });
});
