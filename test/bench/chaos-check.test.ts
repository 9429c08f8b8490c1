/**
 * The chaos judge can fail: a sound history against its world has no violation, and each kind of
 * broken promise (a lost seat, connect or close; a phantom seat; a duplicate; a lobby over its
 * limits; a port held twice; a seat in a stopped lobby) is counted.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { historyViolations, noViolations, worldViolations, type Sent } from '../../bench/chaos-check.js';
import { MemoryMatchStore } from '../../src/adapters/memory/match-store.js';
import type { Lobby } from '../../src/core/lobby/lobby.js';
import { createWorld, type World } from '../../src/core/world.js';
import { matchmakerOn, readyAll, version } from '../contracts/fakes.js';

/** A namespace with five players seated by acknowledged finds (one per address), the first connected, the second disconnected, one lobby closed. */
const scene = async () => {
  const store = new MemoryMatchStore(createWorld());
  const { mm } = matchmakerOn(store);
  const ns = randomUUID();
  await mm.addNamespace(ns);
  await mm.publish(ns, version(4, 0));
  const history: Sent[] = [];
  for (let i = 0; i < 6; i++) {
    const ip = `10.0.0.${i}`;
    const outcome = await mm.find({ namespaceId: ns, gameModes: ['default'], client: { ip } });
    await readyAll(mm, ns);
    if (!outcome.ok) throw new Error(outcome.error.code);
    const playerId = outcome.seat.playerIds[0] ?? '';
    // The sixth find went unanswered (the server died after committing it).
    history.push(i < 5 ? { op: 'find', ip, outcome: 'acked', seat: { playerId, lobbyId: outcome.seat.lobbyId } } : { op: 'find', ip, outcome: 'unknown' });
  }
  // Refused and never-sent finds, which seated nobody.
  history.push({ op: 'find', ip: '10.0.1.1', outcome: 'refused' }, { op: 'find', ip: '10.0.1.2', outcome: 'unsent' });
  const seat = (i: number) => history[i]?.seat ?? { playerId: '', lobbyId: '' };
  expect((await mm.playerConnected({ namespaceId: ns, ...seat(0) })).ok).toBe(true);
  history.push({ op: 'connect', lobbyId: seat(0).lobbyId, playerId: seat(0).playerId, outcome: 'acked' });
  expect((await mm.playerDisconnected({ namespaceId: ns, ...seat(1) })).ok).toBe(true);
  history.push({ op: 'disconnect', lobbyId: seat(1).lobbyId, playerId: seat(1).playerId, outcome: 'acked' });
  expect((await mm.setClosed({ namespaceId: ns, lobbyId: seat(2).lobbyId }, true)).ok).toBe(true);
  history.push({ op: 'close', lobbyId: seat(2).lobbyId, outcome: 'acked' });
  return { store, mm, ns, history, seat };
};

/** `world` with one lobby replaced. */
const withLobby = (world: World, ns: string, lobby: Lobby): World => {
  const state = world.namespaces.get(ns);
  if (state === undefined) throw new Error('no namespace');
  return { ...world, namespaces: world.namespaces.set(ns, { ...state, lobbies: state.lobbies.set(lobby.id, lobby) }) };
};

describe('chaos judge', () => {
  it('finds nothing wrong with a sound history', async () => {
    const { store, ns, history } = await scene();
    expect(historyViolations(store.world, ns, history)).toEqual(noViolations());
  });

  it('counts an acknowledged seat, connect or close the store does not show as lost', async () => {
    const { store, mm, ns, history, seat } = await scene();
    // Gone without any disconnect in the history.
    expect((await mm.playerDisconnected({ namespaceId: ns, ...seat(3) })).ok).toBe(true);
    expect(historyViolations(store.world, ns, history).lost).toBe(1);
    // An acknowledged connect of a player still reserved, and a close of a lobby still open.
    const more: Sent[] = [
      { op: 'connect', lobbyId: seat(4).lobbyId, playerId: seat(4).playerId, outcome: 'acked' },
      { op: 'close', lobbyId: seat(4).lobbyId, outcome: 'acked' },
    ];
    const open = seat(4).lobbyId !== seat(2).lobbyId;
    expect(historyViolations(store.world, ns, [...history, ...more]).lost).toBe(open ? 3 : 2);
    // An acknowledged disconnect of a player still seated.
    expect(historyViolations(store.world, ns, [...history, { op: 'disconnect', lobbyId: seat(0).lobbyId, playerId: seat(0).playerId, outcome: 'acked' }]).lost).toBe(2);
  });

  it('counts a seat whose request was refused, never sent or never made, and a connect nobody asked for, as phantom', async () => {
    const { store, ns, history } = await scene();
    const refused = history.map((s, i) => (i === 4 ? { ...s, outcome: 'refused' as const } : s));
    const unsent = history.map((s, i) => (i === 5 ? { ...s, outcome: 'unsent' as const } : s));
    expect(historyViolations(store.world, ns, refused).phantom).toBe(1);
    expect(historyViolations(store.world, ns, unsent).phantom).toBe(1);
    expect(historyViolations(store.world, ns, history.filter((_, i) => i !== 5)).phantom).toBe(1);
    expect(historyViolations(store.world, ns, history.filter((s) => s.op !== 'connect')).phantom).toBe(1);
  });

  it('counts a player acknowledged twice, or seated for another request than its own, as duplicated', async () => {
    const { store, ns, history, seat } = await scene();
    expect(historyViolations(store.world, ns, [...history, { op: 'join', ip: '10.0.2.1', lobbyId: seat(0).lobbyId, outcome: 'acked', seat: seat(0) }]).duplicated).toBe(1);
    const swapped = history.map((s, i) => (i === 3 ? { ...s, seat: seat(4) } : i === 4 ? { ...s, seat: seat(3) } : s));
    expect(historyViolations(store.world, ns, swapped).duplicated).toBe(2);
  });

  it('counts a lobby over its limits, a port held twice and a seat in a stopped lobby', async () => {
    const { store, ns, seat } = await scene();
    const lobbies = [...(store.world.namespaces.get(ns)?.lobbies.values() ?? [])];
    const [a, b] = lobbies;
    if (a === undefined || b === undefined) throw new Error('two lobbies expected');
    expect(worldViolations(withLobby(store.world, ns, { ...a, maxPlayers: { normal: 1, direct: 1, party: 1 } }), ns).overCapacity).toBe(1);
    expect(worldViolations(withLobby(store.world, ns, { ...b, ports: a.ports }), ns).portConflicts).toBeGreaterThan(0);
    const full = lobbies.find((l) => l.id === seat(0).lobbyId) ?? a;
    const stopped = withLobby(store.world, ns, { ...full, lifecycle: { status: 'stopped', stoppedAt: 0, reason: 'crashed', failed: true } });
    expect(worldViolations(stopped, ns).stoppedSeats).toBe(full.players.size);
    expect(full.players.size).toBeGreaterThan(0);
  });
});
