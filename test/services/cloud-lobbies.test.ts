import { describe, expect, it } from 'vitest';
import { findGameLobby, liveLobbies, stopGameLobby, tailLogs, TAIL_LINES } from '../../src/services/cloud-lobbies.js';
import { publishNamespace } from '../../src/services/publish.js';
import { cloud, expectError, expectOk, T0, versionConfig } from './cloud.js';

const UNKNOWN = '00000000-0000-4000-8000-0000000000ff';

/** A published game whose lobbies hold one player each; `open()` seats a player in a new lobby at time `at`. */
const setup = async () => {
  const c = cloud();
  const { game, ns, buildId } = await c.published();
  const onePlayer = versionConfig(buildId);
  onePlayer['matchmaker'] = { ...(onePlayer['matchmaker'] as object), max_players: 1, max_players_direct: 1, max_players_party: 1 };
  const v1 = await c.version(game.id, 'one-player', onePlayer, { default: c.random.uuid() });
  await publishNamespace(c.deps, { ...ns, versionId: v1.id });
  let ip = 0;
  const open = async (at: number): Promise<string> => {
    c.clock.t = at;
    const outcome = await c.matchmaker.find({ namespaceId: ns.id, gameModes: ['default'], client: { ip: `203.0.113.${++ip}` } });
    if (!outcome.ok) throw new Error(outcome.error.code);
    return outcome.lobby.id;
  };
  return { c, game, ns, open };
};

describe('liveLobbies', () => {
  it("summarizes the namespace's active lobbies oldest first, outdated ones marked", async () => {
    const { c, game, ns, open } = await setup();
    const later = await open(T0 + 20);
    const earlier = await open(T0 + 10);
    const stopped = await open(T0 + 30);
    expectOk(await stopGameLobby(c.deps, game.id, stopped));
    let live = await liveLobbies(c.deps, ns.id);
    expect(live.map((s) => [s.lobbyId, s.totalPlayerCount, s.isOutdated])).toEqual([[earlier, 1, false], [later, 1, false]]);
    const v2 = await c.version(game.id, 'v2', versionConfig(await c.build(game.id)));
    await publishNamespace(c.deps, { ...ns, versionId: v2.id });
    live = await liveLobbies(c.deps, ns.id);
    expect(live.map((s) => s.isOutdated)).toEqual([true, true]);
  });

  it('is empty for a namespace the matchmaker does not know', async () => {
    const { c } = await setup();
    expect(await liveLobbies(c.deps, UNKNOWN)).toEqual([]);
  });
});

describe('findGameLobby', () => {
  it("finds a lobby of one of the game's namespaces, stopped ones included", async () => {
    const { c, game, open } = await setup();
    const id = await open(T0);
    expect(expectOk(await findGameLobby(c.deps, game.id, id)).id).toBe(id);
    expectOk(await stopGameLobby(c.deps, game.id, id));
    expect(expectOk(await findGameLobby(c.deps, game.id, id)).id).toBe(id);
  });

  it("answers LOBBY_NOT_FOUND for an unknown lobby and another game's", async () => {
    const { c, open } = await setup();
    const id = await open(T0);
    const other = await c.game('other');
    expect(expectError(await findGameLobby(c.deps, other.id, id)).code).toBe('LOBBY_NOT_FOUND');
    expect(expectError(await findGameLobby(c.deps, other.id, UNKNOWN)).code).toBe('LOBBY_NOT_FOUND');
  });
});

describe('stopGameLobby', () => {
  it('stops an active lobby (true), and then only says it did not (false)', async () => {
    const { c, game, ns, open } = await setup();
    const id = await open(T0);
    expect(expectOk(await stopGameLobby(c.deps, game.id, id))).toBe(true);
    expect(c.store.world.namespaces.get(ns.id)?.lobbies.get(id)?.lifecycle.status).toMatch(/^stop/);
    expect(await liveLobbies(c.deps, ns.id)).toEqual([]);
    expect(expectOk(await stopGameLobby(c.deps, game.id, id))).toBe(false);
  });

  it("answers LOBBY_NOT_FOUND for another game's lobby, and leaves it running", async () => {
    const { c, ns, open } = await setup();
    const id = await open(T0);
    const other = await c.game('other');
    expect(expectError(await stopGameLobby(c.deps, other.id, id)).code).toBe('LOBBY_NOT_FOUND');
    expect((await liveLobbies(c.deps, ns.id)).map((s) => s.lobbyId)).toEqual([id]);
  });
});

describe('tailLogs', () => {
  it(`gives the newest ${TAIL_LINES} lines of the stream, and the sequence number to watch from`, async () => {
    const c = cloud();
    const lines = Array.from({ length: 2_500 }, (_, i) => ({ at: T0 + i, line: `line ${i}` }));
    await c.catalog.appendLogs('lobby', 'std_out', lines);
    await c.catalog.appendLogs('lobby', 'std_err', [{ at: T0, line: 'err' }]);
    const tail = await tailLogs(c.deps, 'lobby', 'std_out');
    expect(tail.lines).toEqual(lines.slice(-TAIL_LINES));
    expect(tail.last).toBe(2_500);
    expect(await tailLogs(c.deps, 'lobby', 'std_err')).toEqual({ lines: [{ at: T0, line: 'err' }], last: 1 });
  });

  it('is empty, watching from 0, for a stream without lines', async () => {
    const c = cloud();
    expect(await tailLogs(c.deps, 'lobby', 'std_out')).toEqual({ lines: [], last: 0 });
  });
});
