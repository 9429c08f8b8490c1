/**
 * Lobby state in the store (outside probe): a stopped lobby's state is gone and its token can no
 * longer set one; two Tavern instances on one store see each other's states; a listing with
 * `include_state` stays within its byte budget, flagging the lobbies whose state it left out.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/app.js';
import { Matchmaker } from '../../src/services/matchmaker.js';
import { ADMIN, harness, REGIONS, str, type Harness, type W } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

const lobbyToken = (lobbyId: string): string => str(h.runtime.startOf(lobbyId)?.env['RIVET_TOKEN'] as W | undefined);
const lobbyOf = (r: { body: W }): string => str(r.body['lobby']?.['lobby_id']);

describe('lobby state', () => {
  it('a stopped lobby loses its state, and its token cannot set one: 400 MATCHMAKER_LOBBY_STOPPED', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub, nsId } = await h.setup();
    const lobbyId = lobbyOf(await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } }));
    const token = lobbyToken(lobbyId);
    expect((await h.call('PUT', '/matchmaker/lobbies/state', { token, body: { round: 1 } })).status).toBe(200);
    expect(await h.store.lobbyState(lobbyId)).toBe('{"round":1}');
    expect((await h.matchmaker.stopLobby({ namespaceId: nsId, lobbyId })).ok).toBe(true);
    expect(await h.store.lobbyState(lobbyId)).toBeUndefined();
    expect((await h.call('GET', `/matchmaker/lobbies/${lobbyId}/state`, { token })).body).toBeNull();
    const refused = await h.call('PUT', '/matchmaker/lobbies/state', { token, body: { round: 2 } });
    expect(refused.status).toBe(400);
    expect(refused.body['code']).toBe('MATCHMAKER_LOBBY_STOPPED');
    // Clearing is refused too: the lobby is gone for good.
    expect((await h.call('PUT', '/matchmaker/lobbies/state', { token, raw: '' })).body['code']).toBe('MATCHMAKER_LOBBY_STOPPED');
    expect(await h.store.lobbyState(lobbyId)).toBeUndefined();
  });

  it('two instances on one store see each other\'s states (it lived in one process before)', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub } = await h.setup();
    const lobbyId = lobbyOf(await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } }));
    const other = createApp({
      catalog: h.catalog, clock: h.clock, random: h.random, timers: h.timers, regions: REGIONS, tokens: h.tokens,
      matchmaker: new Matchmaker({
        store: h.store, clock: h.clock, random: h.random,
        verifier: { verify: () => Promise.resolve({ kind: 'status', status: 200 }) }, captcha: { verify: () => Promise.resolve({ success: true }) },
        routes: { bind: () => Promise.resolve(), unbind: () => Promise.resolve() }, logs: { append: () => Promise.resolve() },
      }),
      config: { publicOrigin: h.origin, adminToken: ADMIN },
    });
    const token = lobbyToken(lobbyId);
    expect((await h.call('PUT', '/matchmaker/lobbies/state', { token, body: { map: 'dust' } })).status).toBe(200);
    const read = await other.handle(new Request(`${h.origin}/matchmaker/lobbies/${lobbyId}/state`, { headers: { authorization: `Bearer ${token}` } }));
    expect(await read.json()).toEqual({ map: 'dust' });
    const list = await other.handle(new Request(`${h.origin}/matchmaker/lobbies/list?include_state=true`, {
      headers: { authorization: `Bearer ${pub}`, 'x-forwarded-for': '203.0.113.9' },
    }));
    expect(((await list.json()) as { lobbies: { state?: unknown }[] }).lobbies.map((l) => l.state)).toEqual([{ map: 'dust' }]);
    other.close();
  });

  it('lobbies/list?include_state=true returns states within its byte budget and flags those it left out', async () => {
    h = harness({ readyAfterMs: 0, config: { listStateBytes: 100 } });
    const { pub, nsId } = await h.setup();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await h.call('POST', '/matchmaker/lobbies/create', { token: pub, body: { game_mode: 'custom' } });
      ids.push(lobbyOf(created));
    }
    // Listed lobbies need a connected player, or be their mode's only one.
    for (const id of ids) {
      const [seat] = h.store.world.namespaces.get(nsId)?.lobbies.get(id)?.players.values() ?? [];
      expect((await h.matchmaker.playerConnected({ namespaceId: nsId, lobbyId: id, playerId: seat?.id ?? '' })).ok).toBe(true);
    }
    const state = (n: number) => ({ pad: 'x'.repeat(n) });
    // 52, 42 and 72 bytes as JSON: the first two fit 100 bytes, the third does not.
    await h.call('PUT', '/matchmaker/lobbies/state', { token: lobbyToken(ids[0] ?? ''), body: state(42) });
    await h.call('PUT', '/matchmaker/lobbies/state', { token: lobbyToken(ids[1] ?? ''), body: state(32) });
    await h.call('PUT', '/matchmaker/lobbies/state', { token: lobbyToken(ids[2] ?? ''), body: state(62) });
    const list = await h.call('GET', '/matchmaker/lobbies/list?include_state=true', { token: pub });
    const lobbies = list.body['lobbies'] as unknown as { lobby_id: string; state?: unknown; state_truncated?: boolean }[];
    const byId = new Map(lobbies.map((l) => [l.lobby_id, l]));
    const listed = ids.filter((id) => byId.has(id));
    expect(listed).toHaveLength(3);
    const included = lobbies.filter((l) => l.state !== undefined);
    const omitted = lobbies.filter((l) => l.state_truncated === true);
    expect(included.length + omitted.length).toBe(3);
    expect(omitted.length).toBeGreaterThan(0);
    expect(included.reduce((n, l) => n + JSON.stringify(l.state).length, 0)).toBeLessThanOrEqual(100);
    for (const l of omitted) expect(l.state).toBeUndefined();
    // Without include_state, no state and no flag.
    const plain = await h.call('GET', '/matchmaker/lobbies/list', { token: pub });
    expect((plain.body['lobbies'] as unknown as object[]).every((l) => !('state' in l) && !('state_truncated' in l))).toBe(true);
  });
});
