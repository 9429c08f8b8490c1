import { describe, expect, it } from 'vitest';
import { chooseLobby, find, routeFind } from '../../../src/core/matchmaker/find.js';
import { createRng, shuffled } from '../../../src/core/rng.js';
import { currentVersion, type World } from '../../../src/core/world.js';
import { at, client, ids, mode, worldWith, findCommands } from '../fixtures.js';
import { admitted, codeOf, lobbyIn, nsOf } from '../helpers.js';

const newId = ids('r');
const cmd = findCommands(newId);
const region = (name: string) => ({ name, tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } });

/** A world running modes `a` and `b` (in `regions`) with one lobby per listed (mode, region, players). */
const worldWithLobbies = (regions: readonly string[], lobbies: readonly (readonly [string, string, number])[]): World => {
  let w = worldWith([mode('a', { regions: regions.map(region) }), mode('b', { regions: regions.map(region) })]);
  for (const [m, r, players] of lobbies) {
    const playerIds = Array.from({ length: players }, () => newId());
    w = admitted(find(w, cmd({ gameModes: [m], regions: [r], playerIds, newLobbyId: `${m}-${r}`, client: client(`10.1.${players}.${m.length}`) }), at(1))).world;
  }
  return w;
};

const seeds = Array.from({ length: 64 }, (_, i) => i);

describe('find: game modes within a region', () => {
  it('tries the modes of one region in a random order drawn from the seed, not in request order', () => {
    // b's lobby is the fuller one; neither fullness nor request order decides between modes.
    const w = worldWithLobbies(['local'], [['a', 'local', 1], ['b', 'local', 2]]);
    const chosen = (seed: number) => admitted(find(w, cmd({ gameModes: ['a', 'b'] }), at(2, seed))).value.lobbyId;
    const picks = seeds.map(chosen);
    expect(new Set(picks)).toEqual(new Set(['a-local', 'b-local']));
    // The same seed, the same choice; over 64 seeds each mode comes first often.
    expect(seeds.map(chosen)).toEqual(picks);
    const fromA = picks.filter((id) => id === 'a-local').length;
    expect(fromA).toBeGreaterThan(8);
    expect(fromA).toBeLessThan(56);
  });

  it("shuffles only the region's own modes with the seed, whatever modes other regions add", () => {
    // a runs in eu and us, b in eu only: eu's modes are [a, b], and us's a must not weigh on eu's draw.
    let w = worldWith([mode('a', { regions: [region('eu'), region('us')] }), mode('b', { regions: [region('eu')] })]);
    for (const [m, c] of [['a', '10.2.0.1'], ['b', '10.2.0.2']] as const) {
      w = admitted(find(w, cmd({ gameModes: [m], regions: ['eu'], playerIds: [newId()], newLobbyId: `${m}-eu`, client: client(c) }), at(1))).world;
    }
    for (const seed of seeds) {
      const first = shuffled(['a', 'b'], createRng(seed))[0];
      expect(admitted(find(w, cmd({ gameModes: ['a', 'b'], regions: ['eu', 'us'] }), at(2, seed))).value.lobbyId).toBe(`${first}-eu`);
    }
  });

  it('keeps the region priority whatever the seed: a lobby of a later region only when the first has none', () => {
    const w = worldWithLobbies(['eu', 'us'], [['a', 'us', 1], ['b', 'eu', 1]]);
    for (const seed of seeds.slice(0, 16)) {
      expect(admitted(find(w, cmd({ gameModes: ['a', 'b'], regions: ['eu', 'us'] }), at(2, seed))).value.lobbyId).toBe('b-eu');
      expect(admitted(find(w, cmd({ gameModes: ['a', 'b'], regions: ['us', 'eu'] }), at(2, seed))).value.lobbyId).toBe('a-us');
      expect(admitted(find(w, cmd({ gameModes: ['a'], regions: ['eu', 'us'] }), at(2, seed))).value.lobbyId).toBe('a-us');
    }
  });

  it('chooseLobby reads lobbies without changing anything, and answers undefined when none fits', () => {
    const w = worldWithLobbies(['local'], [['a', 'local', 3]]);
    const ns = nsOf(w);
    const version = currentVersion(ns);
    if (version === undefined) throw new Error('no version');
    const a = version.modes.get('a');
    const b = version.modes.get('b');
    if (a === undefined || b === undefined) throw new Error('no modes');
    const pairs = [{ region: 'local', mode: b }, { region: 'local', mode: a }];
    expect(chooseLobby(ns, version, pairs, { playerIds: ['x'] }, 1)).toBe('a-local');
    expect(chooseLobby(ns, version, pairs, { playerIds: ['x', 'y'] }, 1)).toBeUndefined(); // party of 2 over party max 4
    expect(chooseLobby(ns, version, pairs, { playerIds: ['x'], tags: { map: 'dust' } }, 1)).toBeUndefined();
    expect(chooseLobby(ns, version, [], { playerIds: ['x'] }, 1)).toBeUndefined();
  });
});

describe('find: a command without players', () => {
  it('is a programming error: it throws rather than seat nobody', () => {
    // No lobby yet: the find goes on to create one.
    const w = worldWithLobbies(['r1'], []);
    expect(() => find(w, cmd({ gameModes: ['a'], playerIds: [] }), at(2))).toThrow('find: at least one player id is required');
  });
});

describe('routeFind', () => {
  it('names the lobby a find would seat its players in, and changes nothing', () => {
    const w = worldWithLobbies(['local'], [['a', 'local', 2]]);
    const c = cmd({ gameModes: ['a'] });
    expect(routeFind(w, c, at(2))).toEqual({ kind: 'lobby', lobbyId: 'a-local' });
    expect(admitted(find(w, c, at(2))).value.lobbyId).toBe('a-local');
    expect(lobbyIn(w, 'a-local').playerCount).toBe(2);
  });

  it('agrees with find on the mode chosen within a region, seed by seed', () => {
    const w = worldWithLobbies(['local'], [['a', 'local', 1], ['b', 'local', 1]]);
    for (const seed of seeds.slice(0, 16)) {
      const c = cmd({ gameModes: ['a', 'b'] });
      const route = routeFind(w, c, at(2, seed));
      expect(route).toEqual({ kind: 'lobby', lobbyId: admitted(find(w, c, at(2, seed))).value.lobbyId });
    }
  });

  it('answers "create" in the first listed region where the first requested mode runs', () => {
    const w = worldWith([mode('a', { regions: [region('us')] }), mode('b', { regions: [region('eu'), region('us')] })]);
    expect(routeFind(w, cmd({ gameModes: ['a', 'b'], regions: ['eu', 'us'] }), at(1))).toEqual({ kind: 'create', region: 'eu', gameMode: 'b' });
    expect(routeFind(w, cmd({ gameModes: ['a', 'b'], regions: ['us', 'eu'] }), at(1))).toEqual({ kind: 'create', region: 'us', gameMode: 'a' });
    expect(routeFind(w, cmd({ gameModes: ['b', 'a'], regions: ['us'] }), at(1))).toEqual({ kind: 'create', region: 'us', gameMode: 'b' });
  });

  it('answers NO_AVAILABLE_LOBBIES when auto-create is prevented, and the validation error of a bad request', () => {
    const w = worldWithLobbies(['local'], [['a', 'local', 1]]);
    expect(routeFind(w, cmd({ gameModes: ['b'], preventAutoCreate: true }), at(2))).toEqual({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_NO_AVAILABLE_LOBBIES' },
    });
    expect(routeFind(w, cmd({ gameModes: ['a'], preventAutoCreate: true }), at(2))).toEqual({ kind: 'lobby', lobbyId: 'a-local' });
    expect(routeFind(w, cmd({ gameModes: ['a', 'zz'] }), at(2))).toEqual({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_GAME_MODE_NOT_FOUND', params: { game_mode: 'zz' }, path: ['game_modes', '1'] },
    });
    expect(routeFind(w, cmd({ gameModes: ['a'], regions: ['eu'] }), at(2))).toEqual({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_AUTO_CREATE_FAILED' },
    });
  });

  it('consults no gate: a client over its seat cap is still routed', () => {
    let w = worldWith([mode('a', { maxPlayers: { normal: 32, direct: 32, party: 32 } })]);
    const greedy = client('10.7.7.7');
    for (let i = 0; i < 8; i++) w = admitted(find(w, cmd({ gameModes: ['a'], client: greedy, newLobbyId: 'G' }), at(i))).world;
    expect(codeOf(find(w, cmd({ gameModes: ['a'], client: greedy }), at(9)))).toBe('MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE');
    expect(routeFind(w, cmd({ gameModes: ['a'], client: greedy }), at(9))).toEqual({ kind: 'lobby', lobbyId: 'G' });
  });
});

describe('find: validation details', () => {
  it('reports a disabled or identity-bound find on the path of that mode in the request', () => {
    const w = worldWith([
      mode('a'),
      mode('off', { actions: { find: { enabled: false } } }),
      mode('id', { actions: { find: { identityRequirement: 'guest' } } }),
    ]);
    expect(find(w, cmd({ gameModes: ['a', 'id'] }), at(1))).toEqual({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_IDENTITY_REQUIRED', params: { game_mode: 'id' }, path: ['game_modes', '1'] },
    });
    expect(find(w, cmd({ gameModes: ['off', 'a'] }), at(1))).toEqual({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_FIND_DISABLED', params: { game_mode: 'off' }, path: ['game_modes', '0'] },
    });
  });

  it('checks tags before dynamic max players, and both before the action', () => {
    const w = worldWith([mode('a', { actions: { find: { enabled: false } } })]);
    expect(codeOf(find(w, cmd({ gameModes: ['a'], tags: { x: 'y' }, maxPlayers: 2 }), at(1)))).toBe('MATCHMAKER_TAGS_DISABLED');
    expect(codeOf(find(w, cmd({ gameModes: ['a'], maxPlayers: 2 }), at(1)))).toBe('MATCHMAKER_DYNAMIC_MAX_PLAYERS_DISABLED');
    expect(codeOf(find(w, cmd({ gameModes: ['a'] }), at(1)))).toBe('MATCHMAKER_FIND_DISABLED');
  });

  it('refuses a party larger than the party limit before creating, with the dynamic max for a normal find', () => {
    const w = worldWith([mode('a', { allowDynamicMaxPlayers: true, maxPlayers: { normal: 4, direct: 6, party: 3 } })]);
    expect(codeOf(find(w, cmd({ gameModes: ['a'], playerIds: ['p1', 'p2', 'p3', 'p4'] }), at(1)))).toBe('MATCHMAKER_LOBBY_FULL');
    expect(codeOf(find(w, cmd({ gameModes: ['a'], playerIds: ['p1', 'p2', 'p3'] }), at(1)))).toBeUndefined();
    // One player under a dynamic max of 1 fits a new lobby; a full one is never chosen.
    const one = admitted(find(w, cmd({ gameModes: ['a'], maxPlayers: 1, newLobbyId: 'solo' }), at(1)));
    expect(lobbyIn(one.world, 'solo').maxPlayers).toEqual({ normal: 1, direct: 1, party: 3 });
    expect(admitted(find(one.world, cmd({ gameModes: ['a'], maxPlayers: 1, newLobbyId: 'solo2' }), at(2))).value.lobbyId).toBe('solo2');
  });
});
