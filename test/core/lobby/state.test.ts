import { describe, expect, it } from 'vitest';
import { lobbyExited, lobbyReady, stopLobby } from '../../../src/core/lobby/lifecycle.js';
import type { Lobby } from '../../../src/core/lobby/lobby.js';
import { proxyRoutes } from '../../../src/core/lobby/routes.js';
import { fitStates, lobbyStateRefusal, statelessLobbies } from '../../../src/core/lobby/state.js';
import { find } from '../../../src/core/matchmaker/find.js';
import type { NamespaceChange } from '../../../src/core/persist.js';
import type { LobbyPortAllocation } from '../../../src/core/ports/lobby-ports.js';
import { at, findCommands, ids, mode, NS, worldWith } from '../fixtures.js';
import { admitted, makeLobby, okStep } from '../helpers.js';

const findCmd = findCommands(ids('ls'));
const ref = { namespaceId: NS, lobbyId: 'A' };

const change = (upserted: readonly Lobby[], deleted: readonly string[]): NamespaceChange => ({
  id: NS,
  after: undefined,
  rowChanged: false,
  upserted,
  deleted,
  seated: [],
  unseated: [],
});

describe('lobby state', () => {
  it('may be set by a lobby starting or ready; an unknown one is not found, a stopping or stopped one is stopped', () => {
    const creating = admitted(find(worldWith([mode('default')]), findCmd({ newLobbyId: 'A', playerIds: ['p1'] }), at(1000))).world;
    const ready = okStep(lobbyReady(creating, ref, at(2000))).world;
    const stopping = okStep(stopLobby(ready, { ...ref, reason: 'requested' }, at(3000))).world;
    const stopped = okStep(lobbyExited(stopping, { ...ref, reason: 'exited' }, at(4000))).world;
    expect(lobbyStateRefusal(creating, ref)).toBeUndefined();
    expect(lobbyStateRefusal(ready, ref)).toBeUndefined();
    const refused = { code: 'MATCHMAKER_LOBBY_STOPPED', params: { lobby_id: 'A', reason: 'requested' }, metadata: { lobby_id: 'A', reason: 'requested' } };
    expect(lobbyStateRefusal(stopping, ref)).toEqual(refused);
    expect(lobbyStateRefusal(stopped, ref)).toEqual(refused);
    expect(lobbyStateRefusal(ready, { ...ref, lobbyId: 'B' })).toEqual({ code: 'MATCHMAKER_LOBBY_NOT_FOUND' });
    expect(lobbyStateRefusal(ready, { namespaceId: 'other', lobbyId: 'A' })).toEqual({ code: 'MATCHMAKER_LOBBY_NOT_FOUND' });
  });

  it('goes with a lobby that was forgotten, began to stop or stopped, and stays with an active one', () => {
    const upserted = [
      makeLobby({ id: 'creating' }),
      makeLobby({ id: 'stopping', lifecycle: { status: 'stopping', stoppingAt: 2, reason: 'idle' } }),
      makeLobby({ id: 'ready', lifecycle: { status: 'ready', readyAt: 1 } }),
      makeLobby({ id: 'stopped', lifecycle: { status: 'stopped', stoppedAt: 3, reason: 'idle', failed: false } }),
    ];
    expect(statelessLobbies(change(upserted, ['gone1', 'gone2']))).toEqual(['gone1', 'gone2', 'stopping', 'stopped']);
    expect(statelessLobbies(change([], []))).toEqual([]);
  });

  it('fits listed states in the order asked, within the byte budget exactly, a later smaller one included', () => {
    const bytes: Record<string, number> = { a: 60, b: 50, c: 40, d: 1 };
    const of = (id: string): number | undefined => bytes[id];
    expect(fitStates(['a', 'none', 'b', 'c', 'd'], of, 100)).toEqual({ included: ['a', 'c'], omitted: ['b', 'd'] });
    expect(fitStates(['a', 'c'], of, 100)).toEqual({ included: ['a', 'c'], omitted: [] });
    expect(fitStates(['a', 'c'], of, 99)).toEqual({ included: ['a'], omitted: ['c'] });
    expect(fitStates(['none'], of, 0)).toEqual({ included: [], omitted: [] });
    expect(fitStates([], of, 10)).toEqual({ included: [], omitted: [] });
  });
});

describe('proxyRoutes', () => {
  const port = (over: Partial<LobbyPortAllocation>): LobbyPortAllocation => ({
    label: 'game',
    protocol: 'udp',
    proxy: 'game_guard',
    transport: 'udp',
    publicPort: 27015,
    hostPort: 20001,
    ...over,
  });

  it('routes only ports proxied through the game proxy that have both a public and a host port', () => {
    const lobby = makeLobby({
      id: 'A',
      region: 'r1',
      ports: [
        port({}),
        port({ label: 'direct', proxy: 'none' }),
        { label: 'no-public', protocol: 'udp', proxy: 'game_guard', transport: 'udp', hostPort: 20003 },
        { label: 'no-host', protocol: 'udp', proxy: 'game_guard', transport: 'udp', publicPort: 27016 },
        port({ label: 'web', protocol: 'tcp', transport: 'tcp', publicPort: 443, hostPort: 20002 }),
      ],
    });
    expect(proxyRoutes(lobby)).toEqual([
      { lobbyId: 'A', region: 'r1', label: 'game', protocol: 'udp', publicPort: 27015, hostPort: 20001 },
      { lobbyId: 'A', region: 'r1', label: 'web', protocol: 'tcp', publicPort: 443, hostPort: 20002 },
    ]);
  });
});
