import { describe, expect, it } from 'vitest';
import type { GameMode } from '../../../src/core/config/types.js';
import {
  lobbyExited,
  lobbyReady,
  playerConnected,
  playerDisconnected,
  seatWaitExpired,
  setClosed,
  stopLobby,
} from '../../../src/core/lobby/lifecycle.js';
import { find } from '../../../src/core/matchmaker/find.js';
import { isAllocated } from '../../../src/core/ports/index.js';
import { followStarts, NO_BACKOFF } from '../../../src/core/lobby/backoff.js';
import type { World } from '../../../src/core/world.js';
import { at, ids, mode, NS, worldWith, findCommands } from '../fixtures.js';
import { admitted, codeOf, effectsOf, eventsOf, lobbyIn, nsOf, okStep, playerIn, seatedCount, stepCode } from '../helpers.js';

const newId = ids('lc');
const findCmd = findCommands(newId);
const ref = (lobbyId = 'A') => ({ namespaceId: NS, lobbyId });
const CONNECT = 120_000;

/** Lobby A created at t=1000 by a find for p1 and p2 (still creating, two reserved seats). */
const creating = (m: GameMode = mode('default')): World =>
  admitted(find(worldWith([m]), findCmd({ newLobbyId: 'A', playerIds: ['p1', 'p2'] }), at(1000))).world;

const ready = (m?: GameMode): World => okStep(lobbyReady(creating(m), ref(), at(5000))).world;

const udpPorts = (w: World, id: string): number[] =>
  lobbyIn(w, id).ports.flatMap((p) => [p.publicPort, p.hostPort]).filter((p): p is number => p !== undefined);

describe('lobbyReady', () => {
  it('marks the lobby ready once, releases each waiting seat and restarts its connect window', () => {
    const w = creating();
    expect(playerIn(w, 'p1')?.connectDeadline).toBe(1000 + 300_000 + CONNECT);
    const d = okStep(lobbyReady(w, ref(), at(5000)));
    expect(lobbyIn(d.world, 'A').lifecycle).toEqual({ status: 'ready', readyAt: 5000 });
    expect(d.events.map((e) => e.type)).toEqual(['lobby-ready', 'seat-ready', 'seat-ready']);
    expect(eventsOf(d, 'seat-ready').map((e) => e.playerId).sort()).toEqual(['p1', 'p2']);
    expect(playerIn(d.world, 'p1')?.connectDeadline).toBe(5000 + CONNECT);
    expect(playerIn(d.world, 'p2')?.connectDeadline).toBe(5000 + CONNECT);
    // The second call changes nothing.
    const again = okStep(lobbyReady(d.world, ref(), at(9000)));
    expect(again.events).toEqual([]);
    expect(again.effects).toEqual([]);
    expect(lobbyIn(again.world, 'A').lifecycle).toEqual({ status: 'ready', readyAt: 5000 });
    expect(playerIn(again.world, 'p1')?.connectDeadline).toBe(5000 + CONNECT);
  });

  it('uses the mode connect window', () => {
    const w = okStep(lobbyReady(creating(mode('default', { timeouts: { playerConnectMs: 30_000 } })), ref(), at(5000))).world;
    expect(playerIn(w, 'p1')?.connectDeadline).toBe(35_000);
  });

  it('answers LOBBY_STOPPED for a stopping or stopped lobby and LOBBY_NOT_FOUND for an unknown one', () => {
    const stopping = okStep(stopLobby(creating(), { ...ref(), reason: 'requested' }, at(2000))).world;
    expect(stepCode(lobbyReady(stopping, ref(), at(2001)))).toBe('MATCHMAKER_LOBBY_STOPPED');
    const stopped = okStep(lobbyExited(stopping, { ...ref(), reason: 'exited' }, at(2002))).world;
    expect(stepCode(lobbyReady(stopped, ref(), at(2003)))).toBe('MATCHMAKER_LOBBY_STOPPED');
    expect(stepCode(lobbyReady(stopped, ref('nope'), at(2003)))).toBe('MATCHMAKER_LOBBY_NOT_FOUND');
  });
});

describe('setClosed', () => {
  it('takes the lobby out of find and puts it back when reopened', () => {
    const w = ready();
    const closed = okStep(setClosed(w, { ...ref(), closed: true }, at(6000)));
    expect(lobbyIn(closed.world, 'A').closed).toBe(true);
    expect(closed.events).toEqual([{ type: 'lobby-closed-set', at: 6000, namespaceId: NS, lobbyId: 'A', closed: true }]);
    expect(admitted(find(closed.world, findCmd({ newLobbyId: 'B' }), at(6001))).value.lobbyId).toBe('B');
    // Closing again changes nothing.
    expect(okStep(setClosed(closed.world, { ...ref(), closed: true }, at(6002))).events).toEqual([]);
    const reopened = okStep(setClosed(closed.world, { ...ref(), closed: false }, at(6003))).world;
    expect(lobbyIn(reopened, 'A').closed).toBe(false);
    expect(admitted(find(reopened, findCmd({ newLobbyId: 'B' }), at(6004))).value.lobbyId).toBe('A');
    expect(stepCode(setClosed(w, { ...ref('nope'), closed: true }, at(1)))).toBe('MATCHMAKER_LOBBY_NOT_FOUND');
  });
});

describe('stopLobby and lobbyExited', () => {
  it('fails waiting seats, unbinds routes, stops the container, logs why, and keeps the ports', () => {
    const w = creating();
    const ports = udpPorts(w, 'A');
    expect(ports).toHaveLength(2);
    const d = okStep(stopLobby(w, { ...ref(), reason: 'requested' }, at(2000)));
    const lobby = lobbyIn(d.world, 'A');
    expect(lobby.lifecycle).toEqual({ status: 'stopping', stoppingAt: 2000, reason: 'requested' });
    expect(lobby.playerCount).toBe(0);
    expect(seatedCount(d.world)).toBe(0);
    expect(nsOf(d.world).activeLobbies).toBe(0);
    const failed = eventsOf(d, 'seat-failed');
    expect(failed.map((e) => e.playerId).sort()).toEqual(['p1', 'p2']);
    for (const e of failed) expect(e.error.code).toBe('MATCHMAKER_LOBBY_STOPPED');
    expect(eventsOf(d, 'player-removed').map((e) => e.reason)).toEqual(['lobby-stopped', 'lobby-stopped']);
    expect(eventsOf(d, 'lobby-stopping')).toEqual([{ type: 'lobby-stopping', at: 2000, namespaceId: NS, lobbyId: 'A', reason: 'requested' }]);
    const unbind = effectsOf(d, 'unbind-route');
    expect(unbind).toHaveLength(1);
    expect(unbind[0]?.route).toMatchObject({ lobbyId: 'A', label: 'default', protocol: 'udp', publicPort: ports[0], hostPort: ports[1] });
    expect(effectsOf(d, 'stop-lobby')).toEqual([{ type: 'stop-lobby', lobbyId: 'A', region: 'local', reason: 'requested', force: false }]);
    const [log] = effectsOf(d, 'append-log');
    expect(log).toMatchObject({ lobbyId: 'A', at: 2000 });
    expect(log?.line).toMatch(/stop/);
    const space = d.world.ports.get('local');
    for (const p of ports) expect(space && isAllocated(space, 'udp', p)).toBe(true);
    // Stopping twice changes nothing.
    const twice = okStep(stopLobby(d.world, { ...ref(), reason: 'idle' }, at(2001)));
    expect(twice.events).toEqual([]);
    expect(twice.effects).toEqual([]);
  });

  it('emits no seat-failed for a ready lobby (its seats were already answered)', () => {
    const d = okStep(stopLobby(ready(), { ...ref(), reason: 'requested' }, at(6000)));
    expect(eventsOf(d, 'seat-failed')).toEqual([]);
    expect(eventsOf(d, 'player-removed')).toHaveLength(2);
    expect(lobbyIn(d.world, 'A').lifecycle).toEqual({ status: 'stopping', readyAt: 5000, stoppingAt: 6000, reason: 'requested' });
  });

  it('releases the ports when the container is gone and reports the stop', () => {
    const w = creating();
    const ports = udpPorts(w, 'A');
    const stopping = okStep(stopLobby(w, { ...ref(), reason: 'requested' }, at(2000))).world;
    const d = okStep(lobbyExited(stopping, { ...ref(), reason: 'exited' }, at(3000)));
    const space = d.world.ports.get('local');
    for (const p of ports) expect(space && isAllocated(space, 'udp', p)).toBe(false);
    expect(lobbyIn(d.world, 'A').lifecycle).toEqual({ status: 'stopped', stoppedAt: 3000, reason: 'requested', failed: false });
    expect(eventsOf(d, 'lobby-stopped')).toEqual([{ type: 'lobby-stopped', at: 3000, namespaceId: NS, lobbyId: 'A', reason: 'requested', failed: false }]);
    // Once stopped, another exit report changes nothing.
    expect(okStep(lobbyExited(d.world, { ...ref(), reason: 'crashed' }, at(3001))).events).toEqual([]);
  });

  it('stops a running lobby that crashed, as a failure', () => {
    const w = ready();
    const ports = udpPorts(w, 'A');
    const d = okStep(lobbyExited(w, { ...ref(), reason: 'crashed' }, at(7000)));
    expect(eventsOf(d, 'lobby-stopped')).toEqual([{ type: 'lobby-stopped', at: 7000, namespaceId: NS, lobbyId: 'A', reason: 'crashed', failed: true }]);
    expect(lobbyIn(d.world, 'A').lifecycle).toEqual({ status: 'stopped', readyAt: 5000, stoppedAt: 7000, reason: 'crashed', failed: true });
    expect(seatedCount(d.world)).toBe(0);
    const space = d.world.ports.get('local');
    for (const p of ports) expect(space && isAllocated(space, 'udp', p)).toBe(false);
    const start = okStep(lobbyExited(creating(), { ...ref(), reason: 'start-failed' }, at(2000)));
    expect(eventsOf(start, 'lobby-stopped')[0]?.failed).toBe(true);
    expect(eventsOf(start, 'seat-failed')).toHaveLength(2);
    expect(stepCode(lobbyExited(w, { ...ref('nope'), reason: 'exited' }, at(1)))).toBe('MATCHMAKER_LOBBY_NOT_FOUND');
    expect(stepCode(stopLobby(w, { ...ref('nope'), reason: 'requested' }, at(1)))).toBe('MATCHMAKER_LOBBY_NOT_FOUND');
  });

  it('counts a container that went away before ready, however it went, as a failed start', () => {
    for (const reason of ['exited', 'crashed', 'start-failed'] as const) {
      const d = okStep(lobbyExited(creating(), { ...ref(), reason }, at(2000)));
      expect(eventsOf(d, 'lobby-stopped')).toEqual([{ type: 'lobby-stopped', at: 2000, namespaceId: NS, lobbyId: 'A', reason: 'start-failed', failed: true }]);
    }
    const clean = okStep(lobbyExited(ready(), { ...ref(), reason: 'exited' }, at(7000)));
    expect(eventsOf(clean, 'lobby-stopped')[0]).toMatchObject({ reason: 'exited', failed: false });
  });

  it('keeps a lobby whose host was lost as lost, starting or running: its seats and ports freed, never a failed start of its version', () => {
    for (const w of [creating(), ready()]) {
      const ports = udpPorts(w, 'A');
      const d = okStep(lobbyExited(w, { ...ref(), reason: 'lost' }, at(7000)));
      expect(eventsOf(d, 'lobby-stopped')).toEqual([{ type: 'lobby-stopped', at: 7000, namespaceId: NS, lobbyId: 'A', reason: 'lost', failed: true }]);
      expect(seatedCount(d.world)).toBe(0);
      const space = d.world.ports.get('local');
      for (const p of ports) expect(space && isAllocated(space, 'udp', p)).toBe(false);
      expect(followStarts(NO_BACKOFF, d.world, d.events)).toBeUndefined();
    }
  });
});

describe('playerConnected', () => {
  const pref = (playerId: string, lobbyId = 'A', issuedAt?: number, playerLobbyId?: string) => ({
    namespaceId: NS,
    lobbyId,
    playerId,
    ...(issuedAt === undefined ? {} : { issuedAt }),
    ...(playerLobbyId === undefined ? {} : { playerLobbyId }),
  });

  it('registers a reserved player', () => {
    const d = okStep(playerConnected(ready(), pref('p1'), at(6000)));
    expect(playerIn(d.world, 'p1')?.status).toBe('connected');
    expect(lobbyIn(d.world, 'A')).toMatchObject({ playerCount: 2, connectedCount: 1 });
    expect(d.events).toEqual([{ type: 'player-connected', at: 6000, namespaceId: NS, playerId: 'p1', lobbyId: 'A' }]);
  });

  it('answers PLAYER_REMOVED for an unknown player, or REGISTRATION_EXPIRED when its token is past the window', () => {
    const w = ready();
    expect(stepCode(playerConnected(w, pref('ghost'), at(6000)))).toBe('MATCHMAKER_PLAYER_REMOVED');
    expect(stepCode(playerConnected(w, pref('ghost', 'A', 6000 - CONNECT), at(6000)))).toBe('MATCHMAKER_PLAYER_REMOVED');
    expect(stepCode(playerConnected(w, pref('ghost', 'A', 6000 - CONNECT - 1), at(6000)))).toBe('MATCHMAKER_PLAYER_REGISTRATION_EXPIRED');
  });

  it('answers PLAYER_IN_DIFFERENT_LOBBY for another lobby\'s player', () => {
    let w = ready(mode('default', { maxPlayers: { normal: 2, direct: 2, party: 2 } }));
    w = admitted(find(w, findCmd({ newLobbyId: 'B', playerIds: ['q1'] }), at(6000))).world;
    expect(lobbyIn(w, 'B').playerCount).toBe(1);
    // The token names lobby B; lobby A reports it.
    expect(stepCode(playerConnected(w, pref('q1', 'A', undefined, 'B'), at(6001)))).toBe('MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY');
    // A never sees B's players, whatever the token says.
    expect(stepCode(playerConnected(w, pref('q1', 'A'), at(6001)))).toBe('MATCHMAKER_PLAYER_REMOVED');
    expect(playerIn(w, 'q1')).toMatchObject({ lobbyId: 'B', status: 'reserved' });
    // The token's own lobby is fine.
    expect(stepCode(playerConnected(w, pref('q1', 'B', undefined, 'B'), at(6001)))).toBeUndefined();
    expect(stepCode(playerConnected(w, pref('p1', 'nope'), at(6001)))).toBe('MATCHMAKER_LOBBY_NOT_FOUND');
  });

  it('answers PLAYER_ALREADY_CONNECTED the second time', () => {
    const w = okStep(playerConnected(ready(), pref('p1'), at(6000))).world;
    expect(stepCode(playerConnected(w, pref('p1'), at(6001)))).toBe('MATCHMAKER_PLAYER_ALREADY_CONNECTED');
  });

  it('answers PLAYER_REGISTRATION_EXPIRED past the connect deadline (extended by ready)', () => {
    const w = ready(); // deadline 5000 + CONNECT
    expect(stepCode(playerConnected(w, pref('p1'), at(5000 + CONNECT)))).toBeUndefined();
    expect(stepCode(playerConnected(w, pref('p1'), at(5000 + CONNECT + 1)))).toBe('MATCHMAKER_PLAYER_REGISTRATION_EXPIRED');
  });
});

describe('playerDisconnected', () => {
  const pref = (playerId: string, lobbyId = 'A', playerLobbyId?: string) => ({
    namespaceId: NS,
    lobbyId,
    playerId,
    ...(playerLobbyId === undefined ? {} : { playerLobbyId }),
  });

  it('frees the seat: lobby count, per-client count and routing room', () => {
    let w = ready(mode('default', { maxPlayers: { normal: 2, direct: 2, party: 2 } }));
    w = okStep(playerConnected(w, pref('p1'), at(6000))).world;
    expect(nsOf(w).sources.get('10.0.0.1')).toBe(2);
    // Full: a find goes elsewhere.
    expect(admitted(find(w, findCmd({ newLobbyId: 'B' }), at(6001))).value.lobbyId).toBe('B');
    const d = okStep(playerDisconnected(w, pref('p1'), at(6002)));
    expect(playerIn(d.world, 'p1')).toBeUndefined();
    expect(lobbyIn(d.world, 'A')).toMatchObject({ playerCount: 1, connectedCount: 0 });
    expect(nsOf(d.world).sources.get('10.0.0.1')).toBe(1);
    expect(d.events).toEqual([
      { type: 'player-removed', at: 6002, namespaceId: NS, playerId: 'p1', lobbyId: 'A', wasConnected: true, reason: 'disconnected' },
    ]);
    expect(admitted(find(d.world, findCmd({ newLobbyId: 'B' }), at(6003))).value.lobbyId).toBe('A');
    // Idempotent.
    const again = okStep(playerDisconnected(d.world, pref('p1'), at(6004)));
    expect(again.events).toEqual([]);
    expect(lobbyIn(again.world, 'A').playerCount).toBe(1);
    // The last seat gone: the per-client count disappears.
    const empty = okStep(playerDisconnected(d.world, pref('p2'), at(6005))).world;
    expect(nsOf(empty).sources.get('10.0.0.1')).toBeUndefined();
    expect(lobbyIn(empty, 'A').playerCount).toBe(0);
  });

  it("answers PLAYER_IN_DIFFERENT_LOBBY for another lobby's player and leaves it seated", () => {
    let w = ready(mode('default', { maxPlayers: { normal: 2, direct: 2, party: 2 } }));
    w = admitted(find(w, findCmd({ newLobbyId: 'B', playerIds: ['q1'] }), at(6000))).world;
    expect(stepCode(playerDisconnected(w, pref('q1', 'A', 'B'), at(6001)))).toBe('MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY');
    // Without the token's lobby, A cannot free B's seat: nothing happens.
    const d = okStep(playerDisconnected(w, pref('q1', 'A'), at(6001)));
    expect(d.events).toEqual([]);
    expect(lobbyIn(d.world, 'B').playerCount).toBe(1);
    expect(playerIn(d.world, 'q1')?.lobbyId).toBe('B');
    expect(codeOf(find(w, findCmd({ preventAutoCreate: true }), at(6001)))).toBeUndefined(); // B still has room
  });
});

describe('seatWaitExpired', () => {
  const expire = (w: World, playerId: string, now: number) => okStep(seatWaitExpired(w, { ...ref(), playerId }, at(now)));

  it('gives the seat back and stops a lobby left idle that never called ready as ready-timeout, saying what its server must do', () => {
    const d = expire(expire(creating(), 'p1', 51_000).world, 'p2', 51_000);
    expect(playerIn(d.world, 'p2')).toBeUndefined();
    expect(lobbyIn(d.world, 'A').lifecycle).toEqual({ status: 'stopping', stoppingAt: 51_000, reason: 'ready-timeout' });
    expect(eventsOf(d, 'player-removed')).toMatchObject([{ playerId: 'p2', reason: 'disconnected' }]);
    expect(effectsOf(d, 'append-log').map((e) => e.line)).toEqual(['stopping: not ready after 50 s: the game server must POST /matchmaker/lobbies/ready with its lobby token']);
    expect(effectsOf(d, 'stop-lobby')).toEqual([{ type: 'stop-lobby', lobbyId: 'A', region: 'local', reason: 'ready-timeout', force: false }]);
  });

  it('leaves a lobby that still holds a waiting seat, one made ready meanwhile, and one the idle pool keeps', () => {
    const first = expire(creating(), 'p1', 51_000);
    expect(playerIn(first.world, 'p1')).toBeUndefined();
    expect(lobbyIn(first.world, 'A').lifecycle.status).toBe('creating');
    expect(effectsOf(first, 'stop-lobby')).toEqual([]);
    const readied = expire(expire(ready(), 'p1', 51_000).world, 'p2', 51_000);
    expect(lobbyIn(readied.world, 'A').lifecycle.status).toBe('ready');
    const pooled = mode('default', { regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min: 1, max: 1 } }] });
    const kept = expire(expire(creating(pooled), 'p1', 51_000).world, 'p2', 51_000);
    expect(lobbyIn(kept.world, 'A').lifecycle.status).toBe('creating');
    expect(kept.effects).toEqual([]);
  });
});
