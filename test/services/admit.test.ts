import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/services/demand-recorder.js';
import { admit, type AdmitDeps } from '../../src/services/admit.js';
import { TokenIssuer } from '../../src/services/tokens.js';
import { ManualTimers } from '../server/harness.js';
import { eventually } from '../wait.js';
import { cloud } from './cloud.js';

const client = { ip: '203.0.113.7' };

/** A published namespace, and admission's deps over it with manual timers and a recorder that keeps what it is given. */
async function admission() {
  const c = cloud();
  const { ns } = await c.published();
  const clock = { now: () => c.clock.t, set: (t: number) => void (c.clock.t = t) };
  const timers = new ManualTimers(clock);
  const recorded: RequestRecord[] = [];
  const tokens = new TokenIssuer({ catalog: c.catalog, clock, random: c.random });
  const deps: AdmitDeps = {
    ...c.deps,
    clock,
    timers,
    tokens,
    settings: { seatWaitMs: 50_000, seatPollMs: 1_000 },
    demand: { recorder: { request: (r: RequestRecord) => void recorded.push(r) } },
  };
  return { c, ns, deps, timers, tokens, recorded };
}

describe('admit', () => {
  it('answers a refusal as a value and records it with the mode and region asked for', async () => {
    const { ns, deps, recorded } = await admission();
    const result = await admit(deps, ns, { kind: 'find', request: { namespaceId: ns.id, gameModes: ['nope'], regions: ['local'], client } }, () => new AbortController().signal);
    expect(result.ok ? 'ok' : result.error.code).toBe('MATCHMAKER_GAME_MODE_NOT_FOUND');
    const created = await admit(deps, ns, { kind: 'create', request: { namespaceId: ns.id, gameMode: 'default', region: 'local', client } }, () => new AbortController().signal);
    const code = created.ok ? 'ok' : created.error.code;
    expect(code).not.toBe('ok');
    expect(recorded).toMatchObject([
      { namespaceId: ns.id, kind: 'find', outcome: 'MATCHMAKER_GAME_MODE_NOT_FOUND', gameMode: 'nope', region: 'local' },
      { namespaceId: ns.id, kind: 'create', outcome: code, gameMode: 'default', region: 'local' },
    ]);
  });

  it('waits for a starting lobby and answers it with a player token once it is ready', async () => {
    const { c, ns, deps, tokens, recorded } = await admission();
    const pending = admit(deps, ns, { kind: 'find', request: { namespaceId: ns.id, gameModes: ['default'], client } }, () => new AbortController().signal);
    const lobby = await eventually('the lobby', () => [...(c.store.world.namespaces.get(ns.id)?.lobbies.values() ?? [])][0]);
    expect((await c.matchmaker.lobbyReady({ namespaceId: ns.id, lobbyId: lobby.id })).ok).toBe(true);
    const result = await pending;
    if (!result.ok) throw new Error(`refused: ${result.error.code}`);
    expect(result.lobby.id).toBe(lobby.id);
    const verified = await tokens.verify(result.token);
    expect(verified.ok && verified.value).toMatchObject({ kind: 'player', namespaceId: ns.id, lobbyId: lobby.id });
    expect(recorded).toMatchObject([{ kind: 'find', outcome: 'ok', gameMode: 'default', region: 'local', seatReady: false }]);
  });

  it('gives the seat back and refuses with MATCHMAKER_LOBBY_NOT_STARTED when the lobby does not start in time', async () => {
    const { c, ns, deps, timers, recorded } = await admission();
    const pending = admit(deps, ns, { kind: 'find', request: { namespaceId: ns.id, gameModes: ['default'], client } }, () => new AbortController().signal);
    const lobby = await eventually('the lobby', () => [...(c.store.world.namespaces.get(ns.id)?.lobbies.values() ?? [])][0]);
    await eventually('the seat wait', () => timers.pending > 0 || undefined);
    timers.advance(50_000);
    const result = await pending;
    expect(result.ok ? 'ok' : result.error.code).toBe('MATCHMAKER_LOBBY_NOT_STARTED');
    expect(c.store.world.namespaces.get(ns.id)?.lobbies.get(lobby.id)?.players.size ?? 0).toBe(0);
    expect(recorded).toMatchObject([{ kind: 'find', outcome: 'MATCHMAKER_LOBBY_NOT_STARTED', seatReady: false }]);
  });
});
