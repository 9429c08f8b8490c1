import { describe, expect, it } from 'vitest';
import type { StopReason } from '../../../src/core/lobby/lobby.js';
import { lobbyExited, lobbyReady, playerConnected, playerDisconnected, stopLobby } from '../../../src/core/lobby/lifecycle.js';
import { find } from '../../../src/core/matchmaker/find.js';
import type { World } from '../../../src/core/world.js';
import { at, ids, mode, NS, worldWith, findCommands } from '../fixtures.js';
import { admitted, effectsOf, eventsOf, lobbyIn, okStep, stepCode } from '../helpers.js';

const newId = ids('st');
const findCmd = findCommands(newId);
const ref = (lobbyId = 'A') => ({ namespaceId: NS, lobbyId });

/** Lobby A (created at 1000, ready at 5000) with p1 connected and p2 still reserved. */
const oneConnected = (): World => {
  let w = admitted(find(worldWith([mode('default')]), findCmd({ newLobbyId: 'A', playerIds: ['p1', 'p2'] }), at(1000))).world;
  w = okStep(lobbyReady(w, ref(), at(5000))).world;
  return okStep(playerConnected(w, { ...ref(), playerId: 'p1' }, at(5500))).world;
};

describe('beginStop', () => {
  it('tells, for each player removed, whether it had connected', () => {
    const d = okStep(stopLobby(oneConnected(), { ...ref(), reason: 'requested' }, at(6000)));
    const removed = eventsOf(d, 'player-removed').sort((a, b) => a.playerId.localeCompare(b.playerId));
    expect(removed).toEqual([
      { type: 'player-removed', at: 6000, namespaceId: NS, playerId: 'p1', lobbyId: 'A', wasConnected: true, reason: 'lobby-stopped' },
      { type: 'player-removed', at: 6000, namespaceId: NS, playerId: 'p2', lobbyId: 'A', wasConnected: false, reason: 'lobby-stopped' },
    ]);
    expect(lobbyIn(d.world, 'A')).toMatchObject({ playerCount: 0, connectedCount: 0 });
  });

  it('fails each waiting seat of a lobby still starting with LOBBY_STOPPED, naming the lobby and why', () => {
    const w = admitted(find(worldWith([mode('default')]), findCmd({ newLobbyId: 'A', playerIds: ['p1'] }), at(1000))).world;
    const d = okStep(stopLobby(w, { ...ref(), reason: 'requested' }, at(2000)));
    const error = { code: 'MATCHMAKER_LOBBY_STOPPED', params: { lobby_id: 'A', reason: 'requested' }, metadata: { lobby_id: 'A', reason: 'requested' } };
    expect(eventsOf(d, 'seat-failed')).toEqual([{ type: 'seat-failed', at: 2000, namespaceId: NS, playerId: 'p1', lobbyId: 'A', error }]);
    // A container gone before ready: its exit code too.
    const exited = okStep(lobbyExited(w, { ...ref(), reason: 'crashed', exitCode: 1 }, at(2000)));
    expect(eventsOf(exited, 'seat-failed')[0]?.error).toEqual({
      code: 'MATCHMAKER_LOBBY_STOPPED', params: { lobby_id: 'A', reason: 'start-failed' }, metadata: { lobby_id: 'A', reason: 'start-failed', exit_code: 1 },
    });
    expect(eventsOf(exited, 'lobby-stopped')).toEqual([{ type: 'lobby-stopped', at: 2000, namespaceId: NS, lobbyId: 'A', reason: 'start-failed', failed: true, exitCode: 1 }]);
    expect(effectsOf(exited, 'append-log').map((e) => e.line)).toEqual(['stopping: the game server exited with code 1 before it called ready']);
  });

  it('writes why it stops into the lobby log (created at 1000, stopped at 6000)', () => {
    const lines: Record<StopReason, string> = {
      'ready-timeout': 'stopping: not ready after 5 s: the game server must POST /matchmaker/lobbies/ready with its lobby token',
      idle: 'stopping: idle above the idle_lobbies maximum',
      outdated: 'stopping: it runs an outdated version and had no players',
      exited: 'stopping: the game server exited',
      crashed: 'stopping: the game server crashed',
      'start-failed': 'stopping: the game server could not be started',
      lost: 'stopping: the host running it was lost (its node is down or cut off): not a failure of the game server',
      requested: 'stopping: stopped on request',
    };
    for (const [reason, line] of Object.entries(lines) as [StopReason, string][]) {
      const d = okStep(stopLobby(oneConnected(), { ...ref(), reason }, at(6000)));
      expect(effectsOf(d, 'append-log')).toEqual([{ type: 'append-log', lobbyId: 'A', at: 6000, line }]);
    }
    // With the exit code the runtime reported.
    const exitLine = (reason: 'exited' | 'crashed'): string | undefined =>
      effectsOf(okStep(lobbyExited(oneConnected(), { ...ref(), reason, exitCode: 137 }, at(6000))), 'append-log')[0]?.line;
    expect(exitLine('exited')).toBe('stopping: the game server exited with code 137');
    expect(exitLine('crashed')).toBe('stopping: the game server crashed with code 137');
  });
});

describe('finishStop', () => {
  it('marks failures: ready-timeout, crashed, start-failed and lost, not the others', () => {
    const failed = (reason: StopReason): boolean | undefined => {
      const stopping = okStep(stopLobby(oneConnected(), { ...ref(), reason }, at(6000))).world;
      const d = okStep(lobbyExited(stopping, { ...ref(), reason: 'exited' }, at(7000)));
      const lc = lobbyIn(d.world, 'A').lifecycle;
      expect(lc).toMatchObject({ status: 'stopped', readyAt: 5000, stoppedAt: 7000, reason });
      expect(eventsOf(d, 'lobby-stopped')[0]?.failed).toBe(lc.status === 'stopped' && lc.failed);
      return lc.status === 'stopped' ? lc.failed : undefined;
    };
    expect((['ready-timeout', 'crashed', 'start-failed', 'lost'] as const).map(failed)).toEqual([true, true, true, true]);
    expect((['idle', 'outdated', 'exited', 'requested'] as const).map(failed)).toEqual([false, false, false, false]);
  });

  it('keeps the stop reason of a lobby already stopping, and no readyAt for one never ready', () => {
    const w = admitted(find(worldWith([mode('default')]), findCmd({ newLobbyId: 'A' }), at(1000))).world;
    const stopping = okStep(stopLobby(w, { ...ref(), reason: 'idle' }, at(2000))).world;
    const d = okStep(lobbyExited(stopping, { ...ref(), reason: 'crashed' }, at(3000)));
    expect(lobbyIn(d.world, 'A').lifecycle).toEqual({ status: 'stopped', stoppedAt: 3000, reason: 'idle', failed: false });
    // Nothing is asked of the container twice.
    expect(d.effects).toEqual([]);
  });
});

describe('players: the calling lobby', () => {
  it("lets a lobby disconnect and connect its own player when the token names that lobby", () => {
    const w = oneConnected();
    const own = { ...ref(), playerLobbyId: 'A' };
    const d = okStep(playerDisconnected(w, { ...own, playerId: 'p1' }, at(6000)));
    expect(d.events).toEqual([
      { type: 'player-removed', at: 6000, namespaceId: NS, playerId: 'p1', lobbyId: 'A', wasConnected: true, reason: 'disconnected' },
    ]);
    expect(stepCode(playerConnected(w, { ...own, playerId: 'p2' }, at(6000)))).toBeUndefined();
    const gone = okStep(playerDisconnected(w, { ...own, playerId: 'p2' }, at(6000)));
    expect(eventsOf(gone, 'player-removed')[0]?.wasConnected).toBe(false);
  });

  it('answers LOBBY_NOT_FOUND and PLAYER_IN_DIFFERENT_LOBBY without touching the world', () => {
    const w = oneConnected();
    expect(playerDisconnected(w, { ...ref('nope'), playerId: 'p1' }, at(6000))).toEqual({ ok: false, error: { code: 'MATCHMAKER_LOBBY_NOT_FOUND' } });
    expect(playerDisconnected(w, { ...ref(), playerId: 'p1', playerLobbyId: 'B' }, at(6000))).toEqual({
      ok: false,
      error: { code: 'MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY' },
    });
  });
});
