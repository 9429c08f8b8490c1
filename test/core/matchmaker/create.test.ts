import { describe, expect, it } from 'vitest';
import type { GameMode } from '../../../src/core/config/types.js';
import { lobbyExited, stopLobby } from '../../../src/core/lobby/lifecycle.js';
import { create, type CreateCommand, MAX_LOBBY_CONFIG_BYTES } from '../../../src/core/matchmaker/create.js';
import { find } from '../../../src/core/matchmaker/find.js';
import { isAllocated } from '../../../src/core/ports/index.js';
import type { World } from '../../../src/core/world.js';
import { at, client, ids, mode, NS, worldWith } from '../fixtures.js';
import { admitted, codeOf, effectsOf, lobbyIn, okStep } from '../helpers.js';

const newId = ids('c');
const cmd = (over: Partial<CreateCommand> = {}): CreateCommand => ({
  namespaceId: NS,
  gameMode: 'custom',
  playerId: newId(),
  newLobbyId: newId(),
  client: client(),
  ...over,
});

const custom = (over: Parameters<typeof mode>[1] = {}): GameMode =>
  mode('custom', { ...over, actions: { ...over.actions, create: { enabled: true, ...over.actions?.create } } });

const regions = (...names: string[]) => names.map((name) => ({ name, tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } }));

describe('create', () => {
  it('creates a custom lobby with the caller seated, asking for its proxy route, then its container', () => {
    const d = admitted(create(worldWith([custom()]), cmd({ newLobbyId: 'C', playerId: 'p1' }), at(100)));
    expect(d.value).toEqual({ lobbyId: 'C', playerIds: ['p1'], ready: false, created: true });
    expect(lobbyIn(d.world, 'C')).toMatchObject({ origin: 'custom', publicity: 'private', gameMode: 'custom', region: 'local', playerCount: 1 });
    expect(d.effects.map((e) => e.type)).toEqual(['bind-route', 'start-lobby']);
    expect(d.events.map((e) => e.type)).toEqual(['lobby-created', 'player-reserved']);
  });

  it('is disabled unless actions.create.enabled', () => {
    expect(create(worldWith([mode('custom')]), cmd(), at(1))).toEqual({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_CUSTOM_LOBBIES_DISABLED', params: { game_mode: 'custom' }, path: ['game_mode'] },
    });
  });

  it('rejects an unknown game mode on the game_mode path, and an identity requirement', () => {
    expect(create(worldWith([custom()]), cmd({ gameMode: 'nope' }), at(1))).toMatchObject({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_GAME_MODE_NOT_FOUND', path: ['game_mode'] },
    });
    const guarded = custom({ actions: { create: { identityRequirement: 'registered' } } });
    expect(codeOf(create(worldWith([guarded]), cmd(), at(1)))).toBe('MATCHMAKER_IDENTITY_REQUIRED');
  });

  it('defaults publicity to public iff enable_public, and refuses a publicity that is not enabled', () => {
    const pub = worldWith([custom({ actions: { create: { enablePublic: true, enablePrivate: false } } })]);
    expect(lobbyIn(admitted(create(pub, cmd({ newLobbyId: 'X' }), at(1))).world, 'X').publicity).toBe('public');
    expect(create(pub, cmd({ publicity: 'private' }), at(1))).toMatchObject({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID', params: { reason: 'publicity private is not enabled' }, path: ['publicity'] },
    });
    const priv = worldWith([custom()]); // enable_public false, enable_private true
    expect(lobbyIn(admitted(create(priv, cmd({ newLobbyId: 'Y' }), at(1))).world, 'Y').publicity).toBe('private');
    expect(create(priv, cmd({ publicity: 'public' }), at(1))).toMatchObject({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID', params: { reason: 'publicity public is not enabled' }, path: ['publicity'] },
    });
  });

  it('caps lobby_config at 16 KiB of UTF-8 JSON', () => {
    const w = worldWith([custom()]);
    // JSON of a string is its characters plus two quotes.
    expect(codeOf(create(w, cmd({ lobbyConfig: 'x'.repeat(MAX_LOBBY_CONFIG_BYTES - 2) }), at(1)))).toBeUndefined();
    expect(create(w, cmd({ lobbyConfig: 'x'.repeat(MAX_LOBBY_CONFIG_BYTES - 1) }), at(1))).toMatchObject({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID', path: ['lobby_config'] },
    });
    // Bytes, not characters: 'é' is two bytes.
    expect(codeOf(create(w, cmd({ lobbyConfig: 'é'.repeat(8191) }), at(1)))).toBeUndefined();
    expect(codeOf(create(w, cmd({ lobbyConfig: 'é'.repeat(8192) }), at(1)))).toBe('MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID');
  });

  it('counts lobby_config in UTF-8 bytes: 1 to U+007F, 2 to U+07FF, 3 to U+FFFF, 4 above', () => {
    const w = worldWith([custom()]);
    const fits = (config: string): boolean => codeOf(create(w, cmd({ lobbyConfig: config }), at(1))) === undefined;
    // A JSON string is its characters plus two quotes: 16,382 bytes of content fit exactly.
    const room = MAX_LOBBY_CONFIG_BYTES - 2;
    const cases: [string, number][] = [['\u007f', 1], ['\u0080', 2], ['\u07ff', 2], ['\u0800', 3], ['€', 3], ['\uffff', 3], ['\u{10000}', 4], ['😀', 4]];
    for (const [ch, bytes] of cases) {
      const n = Math.floor(room / bytes);
      const pad = 'x'.repeat(room - n * bytes); // filled to exactly 16 KiB
      expect(fits(ch.repeat(n) + pad), `${n} × U+${ch.codePointAt(0)?.toString(16)} fit`).toBe(true);
      expect(fits(ch.repeat(n) + pad + 'x'), `one byte more than ${n} × U+${ch.codePointAt(0)?.toString(16)}`).toBe(false);
    }
    expect(create(w, cmd({ lobbyConfig: '€'.repeat(5461) }), at(1))).toEqual({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID', params: { reason: 'lobby_config is larger than 16 KiB' }, path: ['lobby_config'] },
    });
  });

  it('keeps the tags on the created lobby and passes them and lobby_config to the container', () => {
    const w = worldWith([custom({ taggable: true })]);
    const tags = { map: 'dust', mode: 'ranked' };
    const config = { rounds: 3, name: 'ünï' };
    const d = admitted(create(w, cmd({ newLobbyId: 'T', tags, lobbyConfig: config }), at(1)));
    expect(lobbyIn(d.world, 'T')).toMatchObject({ tags, lobbyConfig: config });
    const [start] = effectsOf(d, 'start-lobby');
    expect(start?.env['RIVET_LOBBY_TAGS']).toBeDefined();
    expect(JSON.parse(start?.env['RIVET_LOBBY_TAGS'] ?? 'null')).toEqual(tags);
    expect(JSON.parse(start?.env['RIVET_LOBBY_CONFIG'] ?? 'null')).toEqual(config);
    // Without tags or config, neither variable is set.
    const plain = effectsOf(admitted(create(w, cmd(), at(1))), 'start-lobby')[0];
    expect(plain?.env).not.toHaveProperty('RIVET_LOBBY_TAGS');
    expect(plain?.env).not.toHaveProperty('RIVET_LOBBY_CONFIG');
  });

  it('checks tags and dynamic max players like find, and applies a dynamic max to the lobby', () => {
    expect(codeOf(create(worldWith([custom()]), cmd({ tags: { a: 'b' } }), at(1)))).toBe('MATCHMAKER_TAGS_DISABLED');
    expect(codeOf(create(worldWith([custom()]), cmd({ maxPlayers: 2 }), at(1)))).toBe('MATCHMAKER_DYNAMIC_MAX_PLAYERS_DISABLED');
    const w = worldWith([custom({ allowDynamicMaxPlayers: true })]);
    expect(codeOf(create(w, cmd({ maxPlayers: 7 }), at(1)))).toBe('MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID');
    const lobby = lobbyIn(admitted(create(w, cmd({ newLobbyId: 'D', maxPlayers: 2 }), at(1))).world, 'D');
    expect(lobby).toMatchObject({ maxPlayers: { normal: 2, direct: 2, party: 4 }, dynamicMaxPlayers: 2 });
  });

  it('resolves the region: unknown → REGION_NOT_FOUND, not in the mode → REGION_NOT_ENABLED_FOR_GAME_MODE', () => {
    const w = worldWith([custom({ regions: regions('eu', 'us') })]);
    expect(create(w, cmd({ region: 'mars' }), at(1))).toMatchObject({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_REGION_NOT_FOUND', params: { region: 'mars' }, path: ['region'] },
    });
    expect(create(w, cmd({ region: 'local' }), at(1))).toMatchObject({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_REGION_NOT_ENABLED_FOR_GAME_MODE', params: { region: 'local', game_mode: 'custom' }, path: ['region'] },
    });
    expect(lobbyIn(admitted(create(w, cmd({ newLobbyId: 'U', region: 'us' }), at(1))).world, 'U').region).toBe('us');
    // No region given: the closest one the mode runs in.
    const nearUs = client('1.1.1.1', { coords: { latitude: 40.7, longitude: -74 } });
    expect(lobbyIn(admitted(create(w, cmd({ newLobbyId: 'N', client: nearUs }), at(1))).world, 'N').region).toBe('us');
  });

  it('never offers a private custom lobby to find; a public one is findable', () => {
    const both = custom({ actions: { create: { enablePublic: true, enablePrivate: true } } });
    let w = worldWith([both]);
    w = admitted(create(w, cmd({ newLobbyId: 'priv', publicity: 'private' }), at(1))).world;
    const findCmd = { namespaceId: NS, gameModes: ['custom'], playerIds: [newId()], newLobbyId: 'F', client: client() };
    expect(codeOf(find(w, { ...findCmd, preventAutoCreate: true }, at(2)))).toBe('MATCHMAKER_NO_AVAILABLE_LOBBIES');
    expect(admitted(find(w, findCmd, at(2))).value.lobbyId).toBe('F');
    w = admitted(create(w, cmd({ newLobbyId: 'pub', publicity: 'public' }), at(3))).world;
    expect(admitted(find(w, { ...findCmd, playerIds: [newId()] }, at(4))).value.lobbyId).toBe('pub');
  });

  it('stops at lobby_count_max', () => {
    let w = worldWith([custom()], { settings: { lobbyCountMax: 2 } });
    w = admitted(create(w, cmd({ client: client('1.0.0.1') }), at(1))).world;
    w = admitted(create(w, cmd({ client: client('1.0.0.2') }), at(2))).world;
    expect(create(w, cmd({ client: client('1.0.0.3') }), at(3))).toMatchObject({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_TOO_MANY_LOBBIES', params: { max: 2 } },
    });
  });

  it('counts the creator against the per-client cap', () => {
    let w = worldWith([custom()], { settings: { maxPlayersPerClient: 1 } });
    w = admitted(create(w, cmd(), at(1))).world;
    expect(codeOf(create(w, cmd(), at(2)))).toBe('MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE');
  });

  it('fails with PORT_RANGE_EXHAUSTED when a host-network port range is taken in the region', () => {
    const ranged = custom({
      regions: regions('local', 'eu'),
      container: {
        imageId: '00000000-0000-4000-8000-000000000002',
        args: [],
        env: {},
        networkMode: 'host',
        ports: [{ label: 'game', protocol: 'tcp', proxy: 'none', portRange: { min: 27000, max: 27009 } }],
      },
    });
    let w: World = worldWith([ranged]);
    const first = admitted(create(w, cmd({ newLobbyId: 'R1', region: 'local' }), at(1)));
    w = first.world;
    const [start] = effectsOf(first, 'start-lobby');
    expect(start?.env).toMatchObject({ PORT_RANGE_MIN_GAME: '27000', PORT_RANGE_MAX_GAME: '27009' });
    expect(isAllocated(w.ports.get('local') ?? fail(), 'tcp', 27005)).toBe(true);
    expect(create(w, cmd({ region: 'local' }), at(2))).toMatchObject({
      kind: 'rejected',
      error: { code: 'PORT_RANGE_EXHAUSTED', params: { pool: 'range', min: 27000, max: 27009 } },
    });
    // Ports are per region (host), and come back when the lobby's container is gone.
    expect(codeOf(create(w, cmd({ region: 'eu' }), at(2)))).toBeUndefined();
    w = okStep(stopLobby(w, { namespaceId: NS, lobbyId: 'R1', reason: 'requested' }, at(3))).world;
    expect(codeOf(create(w, cmd({ region: 'local' }), at(4)))).toBe('PORT_RANGE_EXHAUSTED');
    w = okStep(lobbyExited(w, { namespaceId: NS, lobbyId: 'R1', reason: 'exited' }, at(5))).world;
    expect(codeOf(create(w, cmd({ region: 'local' }), at(6)))).toBeUndefined();
  });
});

function fail(): never {
  throw new Error('missing');
}
