import { describe, expect, it } from 'vitest';
import type { GameMode } from '../../src/core/config/types.js';
import { lobbyExited, lobbyReady, playerConnected, stopLobby } from '../../src/core/lobby/lifecycle.js';
import { find } from '../../src/core/matchmaker/find.js';
import { publishVersion } from '../../src/core/namespace.js';
import { isAllocated } from '../../src/core/ports/index.js';
import { STOP_GRACE_MS, STOPPED_RETENTION_MS, tick } from '../../src/core/tick.js';
import { makeVersion, type World } from '../../src/core/world.js';
import { at, findCommands, ids, mode, NS, worldWith } from './fixtures.js';
import { admitted, effectsOf, eventsOf, lobbyIn, nsOf, okStep, playerIn } from './helpers.js';

const newId = ids('t');
const findCmd = findCommands(newId);
const ref = { namespaceId: NS, lobbyId: 'A' };
const HOUR = 3_600_000;

/** Lobby A created at t=1000 for p1 (ready deadline 1000 + lobbyReadyMs). */
const creating = (m: GameMode = mode('default')): World =>
  admitted(find(worldWith([m]), findCmd({ newLobbyId: 'A', playerIds: ['p1'] }), at(1000))).world;

/** Lobby A ready at t=5000; p2 then reserved at t=10_000 (connect deadline 10_000 + window). */
const readyWithP2 = (m: GameMode = mode('default')): World => {
  const w = okStep(lobbyReady(creating(m), ref, at(5000))).world;
  return admitted(find(w, findCmd({ playerIds: ['p2'] }), at(10_000))).world;
};

const udpPorts = (w: World, id: string): number[] =>
  lobbyIn(w, id).ports.flatMap((p) => [p.publicPort, p.hostPort]).filter((p): p is number => p !== undefined);

describe('tick', () => {
  it('changes nothing when nothing is due', () => {
    const w = creating();
    const d = tick(w, NS, at(2000));
    expect(d.value).toEqual({ readyTimeouts: 0, connectExpired: 0, lifetimeExpired: 0, forcedStops: 0 });
    expect(d.events).toEqual([]);
    expect(d.effects).toEqual([]);
    expect(lobbyIn(d.world, 'A')).toEqual(lobbyIn(w, 'A'));
  });

  it('stops a lobby not ready at exactly its ready deadline, failing its waiting seats', () => {
    const w = creating(mode('default', { timeouts: { lobbyReadyMs: 60_000 } }));
    expect(lobbyIn(w, 'A').readyDeadline).toBe(61_000);
    const before = tick(w, NS, at(60_999));
    expect(before.value.readyTimeouts).toBe(0);
    expect(lobbyIn(before.world, 'A').lifecycle.status).toBe('creating');
    const d = tick(w, NS, at(61_000));
    expect(d.value.readyTimeouts).toBe(1);
    expect(lobbyIn(d.world, 'A').lifecycle).toEqual({ status: 'stopping', stoppingAt: 61_000, reason: 'ready-timeout' });
    expect(eventsOf(d, 'seat-failed')).toMatchObject([{ playerId: 'p1', lobbyId: 'A', error: { code: 'MATCHMAKER_LOBBY_STOPPED', params: { lobby_id: 'A', reason: 'ready-timeout' } } }]);
    expect(eventsOf(d, 'lobby-stopping')).toMatchObject([{ lobbyId: 'A', reason: 'ready-timeout' }]);
    // Its log says what its game server must do.
    expect(effectsOf(d, 'append-log').map((e) => e.line)).toEqual(['stopping: not ready after 60 s: the game server must POST /matchmaker/lobbies/ready with its lobby token']);
    expect(effectsOf(d, 'stop-lobby')).toEqual([{ type: 'stop-lobby', lobbyId: 'A', region: 'local', reason: 'ready-timeout', force: false }]);
    expect(playerIn(d.world, 'p1')).toBeUndefined();
  });

  it('never times out a ready lobby', () => {
    const w = okStep(lobbyReady(creating(), ref, at(2000))).world;
    expect(lobbyIn(tick(w, NS, at(10 * HOUR)).world, 'A').lifecycle.status).toBe('ready');
  });

  it.each([30_000, 600_000])('removes a reserved player just after its connect deadline (window %i ms)', (window) => {
    const w = readyWithP2(mode('default', { timeouts: { playerConnectMs: window } }));
    expect(playerIn(w, 'p2')?.connectDeadline).toBe(10_000 + window);
    // p1 was reserved before ready: its window restarted at ready (t=5000), so it goes first.
    expect(playerIn(w, 'p1')?.connectDeadline).toBe(5000 + window);
    expect(tick(w, NS, at(5000 + window)).value.connectExpired).toBe(0);
    const kept = tick(w, NS, at(10_000 + window));
    expect(kept.value.connectExpired).toBe(1);
    expect(playerIn(kept.world, 'p1')).toBeUndefined();
    expect(playerIn(kept.world, 'p2')).toBeDefined();
    const d = tick(w, NS, at(10_000 + window + 1));
    expect(d.value.connectExpired).toBe(2);
    expect(eventsOf(d, 'player-removed').map((e) => [e.playerId, e.reason, e.wasConnected]).sort()).toEqual([
      ['p1', 'connect-expired', false],
      ['p2', 'connect-expired', false],
    ]);
    expect(lobbyIn(d.world, 'A').playerCount).toBe(0);
    expect(nsOf(d.world).sources.get('10.0.0.1')).toBeUndefined();
  });

  it('keeps connected players indefinitely without a max lifetime (Rivet removed them after 8 h)', () => {
    const w = okStep(playerConnected(readyWithP2(), { ...ref, playerId: 'p2' }, at(11_000))).world;
    const d = tick(w, NS, at(10_000 + 8 * HOUR + 1));
    expect(d.value.lifetimeExpired).toBe(0);
    expect(playerIn(d.world, 'p2')?.status).toBe('connected');
    expect(lobbyIn(d.world, 'A')).toMatchObject({ playerCount: 1, connectedCount: 1 });
  });

  it('removes players at their max lifetime when one is configured', () => {
    const m = mode('default', { timeouts: { playerMaxLifetimeMs: HOUR } });
    const w = okStep(playerConnected(readyWithP2(m), { ...ref, playerId: 'p2' }, at(11_000))).world;
    expect(playerIn(tick(w, NS, at(10_000 + HOUR - 1)).world, 'p2')).toBeDefined();
    const d = tick(w, NS, at(10_000 + HOUR));
    expect(d.value.lifetimeExpired).toBe(1);
    expect(eventsOf(d, 'player-removed')).toContainEqual({
      type: 'player-removed',
      at: 10_000 + HOUR,
      namespaceId: NS,
      playerId: 'p2',
      lobbyId: 'A',
      wasConnected: true,
      reason: 'lifetime',
    });
    expect(lobbyIn(d.world, 'A')).toMatchObject({ playerCount: 0, connectedCount: 0 });
  });

  it('forces a stopping lobby after STOP_GRACE_MS and frees its ports', () => {
    const w0 = readyWithP2();
    const ports = udpPorts(w0, 'A');
    const w = okStep(stopLobby(w0, { ...ref, reason: 'requested' }, at(20_000))).world;
    const early = tick(w, NS, at(20_000 + STOP_GRACE_MS - 1));
    expect(early.value.forcedStops).toBe(0);
    expect(lobbyIn(early.world, 'A').lifecycle.status).toBe('stopping');
    const d = tick(w, NS, at(20_000 + STOP_GRACE_MS));
    expect(d.value.forcedStops).toBe(1);
    expect(effectsOf(d, 'stop-lobby')).toEqual([{ type: 'stop-lobby', lobbyId: 'A', region: 'local', reason: 'requested', force: true }]);
    expect(lobbyIn(d.world, 'A').lifecycle).toMatchObject({ status: 'stopped', stoppedAt: 20_000 + STOP_GRACE_MS, reason: 'requested', failed: false });
    expect(eventsOf(d, 'lobby-stopped')).toHaveLength(1);
    const space = d.world.ports.get('local');
    expect(ports).toHaveLength(2);
    for (const p of ports) {
      expect(space && isAllocated(space, 'udp', p)).toBe(false);
      expect(isAllocated(w.ports.get('local') ?? space ?? fail(), 'udp', p)).toBe(true);
    }
  });

  it('forgets a stopped lobby after STOPPED_RETENTION_MS, and with it an outdated version nobody uses', () => {
    let w = readyWithP2();
    w = publishVersion(w, NS, makeVersion('v2', { gameModes: [mode('default')] }), at(15_000)).world;
    w = okStep(lobbyExited(w, { ...ref, reason: 'exited' }, at(20_000))).world;
    expect(nsOf(w).versions.has('v1')).toBe(true);
    const kept = tick(w, NS, at(20_000 + STOPPED_RETENTION_MS - 1)).world;
    expect(nsOf(kept).lobbies.has('A')).toBe(true);
    const d = tick(w, NS, at(20_000 + STOPPED_RETENTION_MS));
    expect(nsOf(d.world).lobbies.has('A')).toBe(false);
    expect(nsOf(d.world).versions.has('v1')).toBe(false);
    expect(nsOf(d.world).versions.has('v2')).toBe(true);
    expect(nsOf(d.world).activeLobbies).toBe(0);
  });
});

function fail(): never {
  throw new Error('missing');
}
