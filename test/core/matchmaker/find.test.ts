import { describe, expect, it } from 'vitest';
import type { Admission } from '../../../src/core/admission/gate.js';
import { find } from '../../../src/core/matchmaker/find.js';
import type { Seat } from '../../../src/core/matchmaker/seat.js';
import { setClosed } from '../../../src/core/lobby/lifecycle.js';
import { publishVersion } from '../../../src/core/namespace.js';
import { makeVersion, type World } from '../../../src/core/world.js';
import { at, client, ids, mode, NS, worldWith, findCommands } from '../fixtures.js';

const newId = ids('id');
const cmd = findCommands(newId);

const admitted = (a: Admission<Seat>): { world: World; seat: Seat; effects: readonly { type: string }[]; events: readonly { type: string }[] } => {
  if (a.kind !== 'admitted') throw new Error(`expected admitted, got ${JSON.stringify(a)}`);
  return { world: a.decision.world, seat: a.decision.value, effects: a.decision.effects, events: a.decision.events };
};

const code = (a: Admission<Seat>): string | undefined => (a.kind === 'rejected' ? a.error.code : undefined);

describe('find', () => {
  it('creates a lobby when none fits, and asks for its proxy route, then its container', () => {
    const r = admitted(find(worldWith([mode('default')]), cmd({ newLobbyId: 'L1' }), at(1000)));
    expect(r.seat).toMatchObject({ lobbyId: 'L1', created: true, ready: false });
    expect(r.effects.map((e) => e.type)).toEqual(['bind-route', 'start-lobby']);
    expect(r.events.map((e) => e.type)).toEqual(['lobby-created', 'player-reserved']);
    const start = r.effects[1] as unknown as { env: Record<string, string>; ports: { publicPort?: number }[] };
    expect(start.env).toMatchObject({ RIVET_LOBBY_ID: 'L1', MODE: 'default', PORT_DEFAULT: '7777', RIVET_MAX_PLAYERS_NORMAL: '4' });
    const port = start.ports[0]?.publicPort ?? 0;
    expect(port).toBeGreaterThanOrEqual(26000);
    expect(port).toBeLessThanOrEqual(31999);
  });

  it('seats players in the fullest lobby that still has room', () => {
    let w = worldWith([mode('default')]);
    w = admitted(find(w, cmd({ newLobbyId: 'A' }), at(1))).world;
    w = admitted(find(w, cmd({ newLobbyId: 'B', preventAutoCreate: false, gameModes: ['default'] }), at(2))).world; // joins A (2 players)
    expect(w.namespaces.get(NS)?.lobbies.get('A')?.playerCount).toBe(2);
    // Make B exist with 1 player by filling A to 4 first.
    w = admitted(find(w, cmd(), at(3))).world;
    w = admitted(find(w, cmd(), at(4))).world; // A full (4)
    w = admitted(find(w, cmd({ newLobbyId: 'B' }), at(5))).world; // creates B
    expect(w.namespaces.get(NS)?.lobbies.get('B')?.playerCount).toBe(1);
    const r = admitted(find(w, cmd(), at(6)));
    expect(r.seat.lobbyId).toBe('B');
  });

  it('never routes to a closed or outdated lobby', () => {
    let w = admitted(find(worldWith([mode('default')]), cmd({ newLobbyId: 'A' }), at(1))).world;
    const closed = setClosed(w, { namespaceId: NS, lobbyId: 'A', closed: true }, at(2));
    if (!closed.ok) throw new Error('close failed');
    expect(admitted(find(closed.value.world, cmd({ newLobbyId: 'B' }), at(3))).seat.lobbyId).toBe('B');
    w = publishVersion(w, NS, makeVersion('v2', { gameModes: [mode('default')] }), at(4)).world;
    expect(admitted(find(w, cmd({ newLobbyId: 'C' }), at(5))).seat.lobbyId).toBe('C');
    // Lobby A (version v1, now outdated) is not offered.
    expect(code(find(w, cmd({ preventAutoCreate: true }), at(5)))).toBe('MATCHMAKER_NO_AVAILABLE_LOBBIES');
  });

  it('answers NO_AVAILABLE_LOBBIES when auto-create is prevented', () => {
    expect(code(find(worldWith([mode('default')]), cmd({ preventAutoCreate: true }), at(1)))).toBe('MATCHMAKER_NO_AVAILABLE_LOBBIES');
  });

  it('validates game modes with the path of the offending one', () => {
    const w = worldWith([mode('default')]);
    expect(code(find(w, cmd({ gameModes: [] }), at(1)))).toBe('MATCHMAKER_NO_GAME_MODE_PROVIDED');
    const r = find(w, cmd({ gameModes: ['default', 'nope'] }), at(1));
    expect(r).toMatchObject({ kind: 'rejected', error: { code: 'MATCHMAKER_GAME_MODE_NOT_FOUND', path: ['game_modes', '1'] } });
  });

  it('checks tags: taggable, at most 8, name ≤ 128, value ≤ 512', () => {
    const plain = worldWith([mode('default')]);
    expect(code(find(plain, cmd({ tags: { a: 'b' } }), at(1)))).toBe('MATCHMAKER_TAGS_DISABLED');
    const w = worldWith([mode('default', { taggable: true })]);
    const nine = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`t${i}`, 'x']));
    expect(code(find(w, cmd({ tags: nine }), at(1)))).toBe('MATCHMAKER_TOO_MANY_TAGS');
    expect(code(find(w, cmd({ tags: { ['n'.repeat(129)]: 'x' } }), at(1)))).toBe('MATCHMAKER_TAG_NAME_TOO_LONG');
    expect(code(find(w, cmd({ tags: { n: 'v'.repeat(513) } }), at(1)))).toBe('MATCHMAKER_TAG_TOO_LONG');
    expect(code(find(w, cmd({ tags: { ['n'.repeat(128)]: 'v'.repeat(512) } }), at(1)))).toBeUndefined();
  });

  it('matches tagged lobbies only when every requested tag is equal; a tag-less find matches any', () => {
    let w = worldWith([mode('default', { taggable: true })]);
    w = admitted(find(w, cmd({ newLobbyId: 'dust', tags: { map: 'dust', mode: 'ranked' } }), at(1))).world;
    expect(admitted(find(w, cmd({ newLobbyId: 'X', tags: { map: 'dust' } }), at(2))).seat.lobbyId).toBe('dust');
    expect(admitted(find(w, cmd({ newLobbyId: 'Y', tags: { map: 'inferno' } }), at(2))).seat.lobbyId).toBe('Y');
    expect(admitted(find(w, cmd({ newLobbyId: 'Z', tags: { map: 'dust', mode: 'casual' } }), at(2))).seat.lobbyId).toBe('Z');
    expect(admitted(find(w, cmd({ newLobbyId: 'W' }), at(2))).seat.lobbyId).toBe('dust');
  });

  it('checks dynamic max players and keeps lobbies of another max apart', () => {
    expect(code(find(worldWith([mode('default')]), cmd({ maxPlayers: 2 }), at(1)))).toBe('MATCHMAKER_DYNAMIC_MAX_PLAYERS_DISABLED');
    let w = worldWith([mode('default', { allowDynamicMaxPlayers: true })]);
    expect(code(find(w, cmd({ maxPlayers: 0 }), at(1)))).toBe('MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID');
    expect(code(find(w, cmd({ maxPlayers: 7 }), at(1)))).toBe('MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID'); // > max(normal 4, direct 6)
    const r = admitted(find(w, cmd({ newLobbyId: 'two', maxPlayers: 2 }), at(1)));
    w = r.world;
    expect(w.namespaces.get(NS)?.lobbies.get('two')?.maxPlayers).toEqual({ normal: 2, direct: 2, party: 4 });
    expect(admitted(find(w, cmd({ newLobbyId: 'def' }), at(2))).seat.lobbyId).toBe('def');
    expect(admitted(find(w, cmd({ maxPlayers: 2 }), at(2))).seat.lobbyId).toBe('two');
  });

  it('treats the region list as a priority order and never auto-creates outside it', () => {
    const both = [{ name: 'eu', tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } }, { name: 'us', tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } }];
    let w = worldWith([mode('default', { regions: both })]);
    expect(find(w, cmd({ regions: ['eu', 'mars'] }), at(1))).toMatchObject({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_REGION_NOT_FOUND', path: ['regions', '1'] },
    });
    w = admitted(find(w, cmd({ newLobbyId: 'us-1', regions: ['us'] }), at(1))).world;
    // eu preferred but empty: the us lobby is used rather than creating in eu.
    expect(admitted(find(w, cmd({ regions: ['eu', 'us'] }), at(2))).seat.lobbyId).toBe('us-1');
    // eu only: a new eu lobby, never the us one.
    const r = admitted(find(w, cmd({ newLobbyId: 'eu-1', regions: ['eu'] }), at(2)));
    expect(r.world.namespaces.get(NS)?.lobbies.get('eu-1')?.region).toBe('eu');
    // A listed region the mode does not run in cannot host the lobby: AUTO_CREATE_FAILED.
    expect(code(find(w, cmd({ regions: ['local'] }), at(2)))).toBe('MATCHMAKER_AUTO_CREATE_FAILED');
  });

  it('picks the closest region without a list, or the first in the operator order without coordinates', () => {
    const both = [{ name: 'eu', tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } }, { name: 'us', tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } }];
    const w = worldWith([mode('default', { regions: both })]);
    const near = (latitude: number, longitude: number) => client('1.1.1.1', { coords: { latitude, longitude } });
    const region = (a: Admission<Seat>) => admitted(a).world.namespaces.get(NS)?.lobbies.get(admitted(a).seat.lobbyId)?.region;
    expect(region(find(w, cmd({ client: near(40.7, -74) }), at(1)))).toBe('us');
    expect(region(find(w, cmd({ client: near(48.8, 2.3) }), at(1)))).toBe('eu');
    expect(region(find(w, cmd(), at(1)))).toBe('eu');
  });

  it('rejects a disabled find', () => {
    const w = worldWith([mode('default'), mode('off', { actions: { find: { enabled: false } } })]);
    expect(find(w, cmd({ gameModes: ['default', 'off'] }), at(1))).toMatchObject({
      error: { code: 'MATCHMAKER_FIND_DISABLED', path: ['game_modes', '1'] },
    });
  });

  it('caps seats per client address, with a lower cap for VPN addresses', () => {
    let w = worldWith([mode('default', { maxPlayers: { normal: 32, direct: 32, party: 32 } })]);
    for (let i = 0; i < 8; i++) w = admitted(find(w, cmd(), at(i))).world;
    expect(code(find(w, cmd(), at(9)))).toBe('MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE');
    expect(code(find(w, cmd({ client: client('10.0.0.2') }), at(9)))).toBeUndefined();
    let v = worldWith([mode('default')]);
    const vpn = client('9.9.9.9', { kind: 'vpn' });
    for (let i = 0; i < 4; i++) v = admitted(find(v, cmd({ client: vpn }), at(i))).world;
    expect(code(find(v, cmd({ client: vpn }), at(9)))).toBe('MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE');
  });

  it('stops at lobby_count_max', () => {
    let w = worldWith([mode('default', { maxPlayers: { normal: 1, direct: 1, party: 1 } })], { settings: { lobbyCountMax: 2 } });
    w = admitted(find(w, cmd({ client: client('1.0.0.1') }), at(1))).world;
    w = admitted(find(w, cmd({ client: client('1.0.0.2') }), at(2))).world;
    expect(code(find(w, cmd({ client: client('1.0.0.3') }), at(3)))).toBe('MATCHMAKER_TOO_MANY_LOBBIES');
  });

  it('bounds party finds by max_players_party', () => {
    const w = worldWith([mode('default', { maxPlayers: { normal: 4, direct: 4, party: 6 } })]);
    const five = [newId(), newId(), newId(), newId(), newId()];
    const r = admitted(find(w, cmd({ playerIds: five, newLobbyId: 'P' }), at(1)));
    expect(r.world.namespaces.get(NS)?.lobbies.get('P')?.playerCount).toBe(5);
    expect(admitted(find(r.world, cmd({ newLobbyId: 'N' }), at(2))).seat.lobbyId).toBe('N'); // normal find: P is over 4
    expect(code(find(w, cmd({ playerIds: [...five, newId(), newId()] }), at(1)))).toBe('MATCHMAKER_LOBBY_FULL');
  });

  it('is deterministic for a seed and never changes the world it was given', () => {
    const w = worldWith([mode('a'), mode('b')]);
    const before = [...(w.namespaces.get(NS)?.lobbies.keys() ?? [])];
    const c = cmd({ gameModes: ['a', 'b'] });
    expect(find(w, c, at(1, 7))).toEqual(find(w, c, at(1, 7)));
    expect([...(w.namespaces.get(NS)?.lobbies.keys() ?? [])]).toEqual(before);
  });
});
