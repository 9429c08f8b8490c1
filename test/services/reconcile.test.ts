import { describe, expect, it } from 'vitest';
import { lobbyExited, lobbyReady, stopLobby } from '../../src/core/lobby/lifecycle.js';
import { find } from '../../src/core/matchmaker/find.js';
import type { World } from '../../src/core/world.js';
import type { LobbyHostRecord } from '../../src/io/catalog.js';
import type { HostedContainer } from '../../src/io/runtime.js';
import { planReconcile } from '../../src/services/reconcile.js';
import { at, findCommands, ids, mode, NS, worldWith } from '../core/fixtures.js';
import { admitted, okStep } from '../core/helpers.js';

const findCmd = findCommands(ids('rc'));

/** Lobbies A (ready), B (creating), C (stopping), D (stopped). */
const world = (): World => {
  let w = worldWith([mode('default', { maxPlayers: { normal: 1, direct: 1, party: 1 } })]);
  for (const id of ['A', 'B', 'C', 'D']) w = admitted(find(w, findCmd({ newLobbyId: id, playerIds: [`p-${id}`] }), at(1000))).world;
  w = okStep(lobbyReady(w, { namespaceId: NS, lobbyId: 'A' }, at(2000))).world;
  w = okStep(stopLobby(w, { namespaceId: NS, lobbyId: 'C', reason: 'requested' }, at(3000))).world;
  w = okStep(lobbyExited(w, { namespaceId: NS, lobbyId: 'D', reason: 'exited' }, at(3000))).world;
  return w;
};

const container = (lobbyId: string, running = true, namespaceId = NS): HostedContainer => ({ lobbyId, namespaceId, versionId: 'v', containerId: `c-${lobbyId}`, running });
const host = (lobbyId: string, namespaceId = NS): LobbyHostRecord => ({ lobbyId, namespaceId, instanceId: 'me', createdAt: 1 });
const idle = (): boolean => false;

describe('planReconcile', () => {
  it('adopts containers of live lobbies, re-stops those of stopping ones, and removes orphans', () => {
    const plan = planReconcile(world(), [], [container('A'), container('B', false), container('C'), container('X'), container('A', true, 'other-ns')], idle);
    expect(plan.adopt.map((c) => c.lobbyId)).toEqual(['A', 'B', 'C']);
    expect(plan.stop.map((c) => c.lobbyId)).toEqual(['C']);
    expect(plan.discard.map((c) => `${c.namespaceId}/${c.lobbyId}`)).toEqual([`${NS}/X`, 'other-ns/A']);
  });

  it('reports live or stopping lobbies whose container is gone, and forgets records of lobbies that are over', () => {
    const plan = planReconcile(world(), [host('A'), host('B'), host('C'), host('D'), host('Z')], [container('B')], idle);
    expect(plan.gone.map((h) => h.lobbyId)).toEqual(['A', 'C']);
    expect(plan.release.map((h) => h.lobbyId)).toEqual(['D', 'Z']);
    expect(plan.adopt.map((c) => c.lobbyId)).toEqual(['B']);
  });

  it('leaves a lobby alone while its start is under way or its container is watched', () => {
    const busy = (id: string): boolean => id === 'A' || id === 'X';
    const plan = planReconcile(world(), [host('A')], [container('X')], busy);
    expect(plan).toEqual({ adopt: [], stop: [], discard: [], gone: [], release: [] });
  });
});
