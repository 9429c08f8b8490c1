import { describe, expect, it } from 'vitest';
import { verificationVerdict } from '../../../src/core/admission/verification.js';
import type { GameMode } from '../../../src/core/config/types.js';
import { lobbyExited, lobbyReady, recordCaptcha, setClosed, stopLobby } from '../../../src/core/lobby/lifecycle.js';
import { create } from '../../../src/core/matchmaker/create.js';
import { find } from '../../../src/core/matchmaker/find.js';
import { join, type JoinCommand } from '../../../src/core/matchmaker/join.js';
import { publishVersion } from '../../../src/core/namespace.js';
import { STOPPED_RETENTION_MS, tick } from '../../../src/core/tick.js';
import { makeVersion, type World } from '../../../src/core/world.js';
import { at, client, ids, mode, NS, worldWith } from '../fixtures.js';
import { admitted, codeOf, lobbyIn, nsOf, okStep, playerIn } from '../helpers.js';

const newId = ids('p');
const cmd = (lobbyId: string, over: Partial<JoinCommand> = {}): JoinCommand => ({
  namespaceId: NS,
  lobbyId,
  playerIds: [newId()],
  client: client(),
  ...over,
});

/** A world with lobby `A` (created by a find at t=1234, made ready at t=2000) holding one player. */
const withLobby = (m: GameMode = mode('default'), opts: Parameters<typeof worldWith>[1] = {}): World => {
  const w = admitted(find(worldWith([m], opts), { namespaceId: NS, gameModes: [m.name], playerIds: [newId()], newLobbyId: 'A', client: client('10.9.9.9') }, at(1234))).world;
  return okStep(lobbyReady(w, { namespaceId: NS, lobbyId: 'A' }, at(2000))).world;
};

describe('join', () => {
  it('seats the player in the named lobby, ready at once, with a connect deadline from now', () => {
    const d = admitted(join(withLobby(), cmd('A', { playerIds: ['j1'] }), at(5000)));
    expect(d.value).toEqual({ lobbyId: 'A', playerIds: ['j1'], ready: true, created: false });
    expect(lobbyIn(d.world, 'A').playerCount).toBe(2);
    expect(playerIn(d.world, 'j1')).toMatchObject({ lobbyId: 'A', status: 'reserved', connectDeadline: 5000 + 120_000 });
    expect(d.events.map((e) => e.type)).toEqual(['player-reserved']);
    expect(d.effects).toEqual([]);
  });

  it('is a programming error to join with no player id: it throws and changes nothing', () => {
    expect(() => join(withLobby(), cmd('A', { playerIds: [] }), at(5000))).toThrow('join: at least one player id is required');
  });

  it('answers LOBBY_NOT_FOUND with the path of lobby_id for an unknown lobby', () => {
    expect(join(withLobby(), cmd('nope'), at(3000))).toEqual({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_LOBBY_NOT_FOUND', path: ['lobby_id'] },
    });
  });

  it('answers LOBBY_STOPPED for a stopping or stopped lobby, and LOBBY_NOT_FOUND once it is forgotten', () => {
    const stopping = okStep(stopLobby(withLobby(), { namespaceId: NS, lobbyId: 'A', reason: 'requested' }, at(3000))).world;
    expect(codeOf(join(stopping, cmd('A'), at(3001)))).toBe('MATCHMAKER_LOBBY_STOPPED');
    const stopped = okStep(lobbyExited(stopping, { namespaceId: NS, lobbyId: 'A', reason: 'exited' }, at(3002))).world;
    expect(codeOf(join(stopped, cmd('A'), at(3003)))).toBe('MATCHMAKER_LOBBY_STOPPED');
    const forgotten = tick(stopped, NS, at(3002 + STOPPED_RETENTION_MS)).world;
    expect(codeOf(join(forgotten, cmd('A'), at(3002 + STOPPED_RETENTION_MS)))).toBe('MATCHMAKER_LOBBY_NOT_FOUND');
  });

  it('is bounded by max_players_direct, which may exceed max_players_normal', () => {
    let w = withLobby(mode('default', { maxPlayers: { normal: 2, direct: 4, party: 2 } }));
    w = admitted(find(w, { namespaceId: NS, gameModes: ['default'], playerIds: [newId()], newLobbyId: 'B', client: client() }, at(3000))).world;
    expect(lobbyIn(w, 'A').playerCount).toBe(2); // full for find
    expect(admitted(find(w, { namespaceId: NS, gameModes: ['default'], playerIds: [newId()], newLobbyId: 'B', client: client() }, at(3001))).value.lobbyId).toBe('B');
    expect(codeOf(join(w, cmd('A', { playerIds: [newId(), newId(), newId()] }), at(3001)))).toBe('MATCHMAKER_LOBBY_FULL');
    w = admitted(join(w, cmd('A', { playerIds: [newId(), newId()] }), at(3001))).world;
    expect(lobbyIn(w, 'A').playerCount).toBe(4);
    expect(codeOf(join(w, cmd('A'), at(3002)))).toBe('MATCHMAKER_LOBBY_FULL');
  });

  it('joins a closed lobby by id', () => {
    const w = okStep(setClosed(withLobby(), { namespaceId: NS, lobbyId: 'A', closed: true }, at(3000))).world;
    expect(admitted(join(w, cmd('A'), at(3001))).value.lobbyId).toBe('A');
  });

  it('joins a private custom lobby by id', () => {
    const m = mode('custom', { actions: { create: { enabled: true } } });
    const w = admitted(create(worldWith([m]), { namespaceId: NS, gameMode: 'custom', playerId: newId(), newLobbyId: 'P', client: client() }, at(10))).world;
    expect(lobbyIn(w, 'P').publicity).toBe('private');
    const d = admitted(join(w, cmd('P'), at(11)));
    expect(d.value).toMatchObject({ lobbyId: 'P', ready: false });
    expect(lobbyIn(d.world, 'P').playerCount).toBe(2);
  });

  it("joins an outdated lobby under its own version's rules", () => {
    // v1: join enabled, direct 3. v2: join disabled, direct 10.
    let w = withLobby(mode('default', { maxPlayers: { normal: 2, direct: 3, party: 2 } }));
    const v2 = mode('default', { maxPlayers: { normal: 10, direct: 10, party: 10 }, actions: { join: { enabled: false } } });
    w = publishVersion(w, NS, makeVersion('v2', { gameModes: [v2] }), at(3000)).world;
    w = admitted(join(w, cmd('A', { playerIds: [newId(), newId()] }), at(3001))).world;
    expect(lobbyIn(w, 'A').playerCount).toBe(3);
    expect(codeOf(join(w, cmd('A'), at(3002)))).toBe('MATCHMAKER_LOBBY_FULL');
    // And the other way round: a lobby of a version whose join was disabled stays closed to joins.
    let x = withLobby(mode('default', { actions: { join: { enabled: false } } }));
    x = publishVersion(x, NS, makeVersion('v2', { gameModes: [mode('default')] }), at(3000)).world;
    expect(codeOf(join(x, cmd('A'), at(3001)))).toBe('MATCHMAKER_JOIN_DISABLED');
  });

  it('answers JOIN_DISABLED and IDENTITY_REQUIRED from the join action', () => {
    expect(join(withLobby(mode('default', { actions: { join: { enabled: false } } })), cmd('A'), at(3000))).toMatchObject({
      kind: 'rejected',
      error: { code: 'MATCHMAKER_JOIN_DISABLED', params: { game_mode: 'default' } },
    });
    const guest = mode('default', { actions: { join: { enabled: true, identityRequirement: 'guest' } } });
    expect(codeOf(join(withLobby(guest), cmd('A'), at(3000)))).toBe('MATCHMAKER_IDENTITY_REQUIRED');
  });

  it('counts joined seats against the per-client cap', () => {
    let w = withLobby(mode('default', { maxPlayers: { normal: 32, direct: 32, party: 32 } }), { settings: { maxPlayersPerClient: 3 } });
    w = admitted(join(w, cmd('A', { playerIds: [newId(), newId()] }), at(3000))).world;
    expect(nsOf(w).sources.get('10.0.0.1')).toBe(2);
    expect(codeOf(join(w, cmd('A', { playerIds: [newId(), newId()] }), at(3001)))).toBe('MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE');
    expect(codeOf(join(w, cmd('A'), at(3001)))).toBeUndefined();
  });

  it('asks for join verification with the lobby in the payload, then admits with the pass', () => {
    const verification = { url: 'https://game.example/verify', headers: { 'x-key': 'k' } };
    let w = withLobby(mode('default', { taggable: true, actions: { join: { enabled: true, verification } } }));
    w = okStep(setClosed(w, { namespaceId: NS, lobbyId: 'A', closed: true }, at(2500))).world;
    const c = cmd('A', {
      playerIds: ['j1', 'j2'],
      client: client('1.2.3.4', { userAgent: 'ua', coords: { latitude: 1, longitude: 2 } }),
      verificationData: { ticket: 7 },
      lobbyState: { round: 3 },
    });
    const first = join(w, c, at(3000));
    if (first.kind !== 'verify') throw new Error(`expected verify, got ${first.kind}`);
    expect(first.checks).toHaveLength(1);
    const check = first.checks[0];
    if (check === undefined) throw new Error('no check');
    expect(check).toMatchObject({ gameMode: 'default', kind: 'Join', url: verification.url, headers: { 'x-key': 'k' } });
    expect(check.body).toEqual({
      verification_data: { ticket: 7 },
      game: {
        namespace_id: NS,
        game_mode_id: 'v1/default',
        game_mode_name_id: 'default',
        lobby: { lobby_id: 'A', region_id: 'local', region_name_id: 'local', create_ts: '1970-01-01T00:00:01.234Z', is_closed: true },
        state: { round: 3 },
        config: null,
        tags: {},
        dynamic_max_players: null,
      },
      clients: { '1.2.3.4': { user_agent: 'ua', latitude: 1, longitude: 2 } },
      join_kind: 'Party',
      kind: 'Join',
    });
    expect(check.body.game.lobby?.create_ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // Nothing changed while waiting.
    expect(lobbyIn(w, 'A').playerCount).toBe(1);
    const pass = verificationVerdict(check, { kind: 'status', status: 200 });
    if (!pass.ok) throw new Error('verdict');
    const d = admitted(join(w, { ...c, verified: [pass.value] }, at(3001)));
    expect(lobbyIn(d.world, 'A').playerCount).toBe(3);
  });

  it('asks a joining client for a captcha when the version has one', () => {
    const captcha = { requestsBeforeReverify: 10, verificationTtl: 60_000, turnstile: { siteKey: 'site', secretKey: 'secret' } };
    // The lobby's creator solved the captcha; the joiner (another address) has not.
    const w = worldWith([mode('default')], { captcha });
    const d = join(withLobbyCaptcha(w), cmd('A', { client: client('7.7.7.7') }), at(3000));
    expect(d).toMatchObject({ kind: 'rejected', error: { code: 'CAPTCHA_CAPTCHA_REQUIRED', metadata: { turnstile: { site_key: 'site' } } } });
  });

  it("takes captcha from the namespace's current version, also for a join to an outdated lobby (wire §3.9)", () => {
    const captcha = { requestsBeforeReverify: 10, verificationTtl: 60_000, turnstile: { siteKey: 'site', secretKey: 'secret' } };
    // Lobby A runs v1 (no captcha); v2, now current, requires one.
    let w = withLobby();
    w = publishVersion(w, NS, makeVersion('v2', { gameModes: [mode('default')], captcha }), at(3000)).world;
    expect(codeOf(join(w, cmd('A', { client: client('7.7.7.7') }), at(3001)))).toBe('CAPTCHA_CAPTCHA_REQUIRED');
  });
});

/** Add lobby A to a captcha-protected world: its creator solves the captcha first. */
const withLobbyCaptcha = (w: World): World => {
  const find1 = { namespaceId: NS, gameModes: ['default'], playerIds: [newId()], newLobbyId: 'A', client: client('10.9.9.9') };
  const asked = find(w, { ...find1, captcha: { turnstile: { clientResponse: 'solved' } } }, at(1000));
  if (asked.kind !== 'captcha') throw new Error(`expected captcha, got ${asked.kind}`);
  const solved = okStep(recordCaptcha(w, asked.check, { success: true }, at(1000))).world;
  return admitted(find(solved, find1, at(1234))).world;
};
