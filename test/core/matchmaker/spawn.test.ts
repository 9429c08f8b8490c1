import { describe, expect, it } from 'vitest';
import type { VerificationCheck } from '../../../src/core/admission/verification.js';
import type { GameMode } from '../../../src/core/config/types.js';
import { applyIdlePlan } from '../../../src/core/idle.js';
import { create } from '../../../src/core/matchmaker/create.js';
import { find } from '../../../src/core/matchmaker/find.js';
import { join } from '../../../src/core/matchmaker/join.js';
import type { Seat } from '../../../src/core/matchmaker/seat.js';
import type { Admission } from '../../../src/core/admission/gate.js';
import { addNamespace, publishVersion } from '../../../src/core/namespace.js';
import { createWorld, DEFAULT_NAMESPACE_SETTINGS, makeVersion } from '../../../src/core/world.js';
import { at, client, ids, mode, NS, REGIONS, worldWith, findCommands } from '../fixtures.js';
import { admitted, effectsOf, lobbyIn } from '../helpers.js';

const newId = ids('s');
const cmd = findCommands(newId);

const IMAGE = '00000000-0000-4000-8000-00000000abcd';
const twoRegions = (over: Parameters<typeof mode>[1] = {}): GameMode =>
  mode('default', {
    regions: [
      { name: 'eu', tier: 'basic-1d2', idleLobbies: { min: 0, max: 0 } },
      { name: 'us', tier: 'basic-4d1', idleLobbies: { min: 0, max: 0 } },
    ],
    container: {
      imageId: IMAGE,
      args: ['--serve', '--fast'],
      env: { MODE: 'default', RIVET_REGION_ID: 'overridden by Tavern' },
      networkMode: 'bridge',
      ports: [{ label: 'game-udp', protocol: 'udp', proxy: 'game_guard', port: 7777 }],
    },
    ...over,
  });

describe('spawnLobby (through find)', () => {
  it("starts the container with the region's tier, the image, args, network mode and Tavern's env over the developer's", () => {
    const w = worldWith([twoRegions()]);
    const d = admitted(find(w, cmd({ newLobbyId: 'L', regions: ['us'] }), at(1000)));
    const lobby = lobbyIn(d.world, 'L');
    const [start, ...more] = effectsOf(d, 'start-lobby');
    expect(more).toEqual([]);
    expect(start).toEqual({
      type: 'start-lobby',
      lobbyId: 'L',
      namespaceId: NS,
      versionId: 'v1',
      gameMode: 'default',
      region: 'us',
      tier: 'basic-4d1',
      imageId: IMAGE,
      args: ['--serve', '--fast'],
      env: {
        MODE: 'default',
        RIVET_LOBBY_ID: 'L',
        RIVET_NAMESPACE_ID: NS,
        RIVET_VERSION_ID: 'v1',
        RIVET_GAME_MODE_ID: 'v1/default',
        RIVET_GAME_MODE_NAME: 'default',
        RIVET_LOBBY_GROUP_ID: 'v1/default',
        RIVET_LOBBY_GROUP_NAME: 'default',
        RIVET_REGION_ID: 'us',
        RIVET_REGION_NAME: 'us',
        RIVET_MAX_PLAYERS_NORMAL: '4',
        RIVET_MAX_PLAYERS_DIRECT: '6',
        RIVET_MAX_PLAYERS_PARTY: '4',
        PORT_GAME_UDP: '7777',
      },
      networkMode: 'bridge',
      ports: lobby.ports,
    });
    expect(effectsOf(admitted(find(w, cmd({ regions: ['eu'] }), at(1000))), 'start-lobby')[0]?.tier).toBe('basic-1d2');
    const [bind] = effectsOf(d, 'bind-route');
    const port = lobby.ports[0];
    expect(bind?.route).toEqual({ lobbyId: 'L', region: 'us', label: 'game-udp', protocol: 'udp', publicPort: port?.publicPort, hostPort: port?.hostPort });
  });

  it('records the lobby as created: ready deadline, lobby group, limits, timeouts; then the player', () => {
    const m = twoRegions({ allowDynamicMaxPlayers: true, timeouts: { lobbyReadyMs: 5_000, playerConnectMs: 7_000 } });
    const d = admitted(find(worldWith([m]), cmd({ newLobbyId: 'L', regions: ['eu'], maxPlayers: 3 }), at(1000)));
    const lobby = lobbyIn(d.world, 'L');
    expect(lobby).toMatchObject({
      id: 'L',
      namespaceId: NS,
      versionId: 'v1',
      gameMode: 'default',
      lobbyGroupId: 'v1/default',
      region: 'eu',
      createdAt: 1000,
      readyDeadline: 6000,
      lifecycle: { status: 'creating' },
      closed: false,
      publicity: 'public',
      origin: 'pooled',
      maxPlayers: { normal: 3, direct: 3, party: 4 },
      dynamicMaxPlayers: 3,
      tags: {},
      playerCount: 1,
      connectedCount: 0,
      timeouts: { lobbyReadyMs: 5_000, playerConnectMs: 7_000 },
    });
    expect(lobby).not.toHaveProperty('lobbyConfig');
    expect(d.events.map((e) => e.type)).toEqual(['lobby-created', 'player-reserved']);
    // A seat in a lobby still starting may connect until the ready deadline plus the connect window.
    expect([...lobby.players.values()][0]).toMatchObject({ status: 'reserved', connectDeadline: 6000 + 7000, createdAt: 1000 });
    expect(effectsOf(d, 'start-lobby')[0]?.env).toMatchObject({ RIVET_MAX_PLAYERS_NORMAL: '3', RIVET_MAX_PLAYERS_DIRECT: '3', RIVET_MAX_PLAYERS_PARTY: '4' });
  });

  it('uses the lobby group id the version minted', () => {
    const world = addNamespace(createWorld(REGIONS), NS, DEFAULT_NAMESPACE_SETTINGS);
    const w = publishVersion(world, NS, makeVersion('v7', { gameModes: [mode('default')] }, { default: 'group-123' }), at(0)).world;
    const d = admitted(find(w, cmd({ newLobbyId: 'L' }), at(1)));
    expect(lobbyIn(d.world, 'L').lobbyGroupId).toBe('group-123');
    expect(effectsOf(d, 'start-lobby')[0]?.env).toMatchObject({ RIVET_GAME_MODE_ID: 'group-123', RIVET_LOBBY_GROUP_ID: 'group-123', RIVET_VERSION_ID: 'v7' });
  });

  it('starts a mode without a container section with no image, no args and bridge networking', () => {
    const { container: _, ...bare } = mode('default');
    const d = admitted(find(worldWith([bare]), cmd({ newLobbyId: 'N' }), at(1)));
    const [start] = effectsOf(d, 'start-lobby');
    expect(start).not.toHaveProperty('imageId');
    expect(start).toMatchObject({ args: [], networkMode: 'bridge', ports: [] });
    expect(effectsOf(d, 'bind-route')).toEqual([]);
  });

  it('reports why a lobby cannot be created, with the details', () => {
    const w = worldWith([twoRegions()], { settings: { lobbyCountMax: 1 } });
    const planned = (region: string) => ({ create: [{ region, gameMode: 'default' }], stop: [] });
    // `local` is in the world but not in the mode; `mars` is in the mode's config only.
    expect(applyIdlePlan(w, NS, planned('local'), ['x'], at(1)).value.failed).toEqual([
      { region: 'local', gameMode: 'default', error: { code: 'MATCHMAKER_REGION_NOT_ENABLED_FOR_GAME_MODE', params: { region: 'local', game_mode: 'default' } } },
    ]);
    const mars = worldWith([mode('default', { regions: [{ name: 'mars', tier: 't', idleLobbies: { min: 0, max: 0 } }] })]);
    expect(applyIdlePlan(mars, NS, planned('mars'), ['x'], at(1)).value.failed).toEqual([
      { region: 'mars', gameMode: 'default', error: { code: 'MATCHMAKER_REGION_NOT_FOUND', params: { region: 'mars' } } },
    ]);
    const one = applyIdlePlan(w, NS, { create: [{ region: 'eu', gameMode: 'default' }, { region: 'us', gameMode: 'default' }], stop: [] }, ['x', 'y'], at(1));
    expect(one.value).toEqual({
      created: ['x'],
      stopped: [],
      failed: [{ region: 'us', gameMode: 'default', error: { code: 'MATCHMAKER_TOO_MANY_LOBBIES', params: { max: 1 } } }],
    });
  });
});

const checksOf = (a: Admission<Seat>): readonly VerificationCheck[] => {
  if (a.kind !== 'verify') throw new Error(`expected verify, got ${JSON.stringify(a)}`);
  return a.checks;
};

describe('verification payloads: join_kind and dynamic_max_players', () => {
  const verification = { url: 'https://game.example/verify', headers: {} };

  it('create sends the dynamic max players and a Normal join', () => {
    const m = mode('custom', { allowDynamicMaxPlayers: true, actions: { create: { enabled: true, verification } } });
    const c = { namespaceId: NS, gameMode: 'custom', playerId: 'p', newLobbyId: 'C', client: client() };
    const [check] = checksOf(create(worldWith([m]), { ...c, maxPlayers: 2 }, at(1)));
    expect(check?.body).toMatchObject({ join_kind: 'Normal', kind: 'Create', game: { dynamic_max_players: 2, lobby: null, config: null, state: null } });
    const [plain] = checksOf(create(worldWith([m]), c, at(1)));
    expect(plain?.body.game.dynamic_max_players).toBeNull();
  });

  it("join sends the lobby's dynamic max players, and Normal for one player, Party for more", () => {
    const m = mode('default', { allowDynamicMaxPlayers: true, taggable: true, actions: { join: { enabled: true, verification } } });
    const w = admitted(find(worldWith([m]), cmd({ newLobbyId: 'D', maxPlayers: 5, tags: { map: 'dust' } }), at(1))).world;
    const joinCmd = (playerIds: string[]) => ({ namespaceId: NS, lobbyId: 'D', playerIds, client: client('9.9.9.9') });
    const [one] = checksOf(join(w, joinCmd(['j1']), at(2)));
    expect(one?.body).toMatchObject({ join_kind: 'Normal', kind: 'Join', game: { dynamic_max_players: 5, tags: { map: 'dust' }, state: null, config: null } });
    const [two] = checksOf(join(w, joinCmd(['j1', 'j2']), at(2)));
    expect(two?.body.join_kind).toBe('Party');
    // A lobby without a dynamic max sends null.
    const plain = admitted(find(worldWith([m]), cmd({ newLobbyId: 'P' }), at(1))).world;
    const [none] = checksOf(join(plain, { ...joinCmd(['j1']), lobbyId: 'P' }, at(2)));
    expect(none?.body.game.dynamic_max_players).toBeNull();
  });

  it("join sends the lobby's lobby_config", () => {
    const m = mode('custom', { actions: { create: { enabled: true }, join: { enabled: true, verification } } });
    const w = admitted(create(worldWith([m]), { namespaceId: NS, gameMode: 'custom', playerId: 'p', newLobbyId: 'C', client: client(), lobbyConfig: { rounds: 3 } }, at(1))).world;
    const [check] = checksOf(join(w, { namespaceId: NS, lobbyId: 'C', playerIds: ['j'], client: client('9.9.9.9') }, at(2)));
    expect(check?.body.game.config).toEqual({ rounds: 3 });
  });
});
