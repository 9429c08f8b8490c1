/** Demand recording and its export (`.../analytics/matchmaker/demand`), through the app and over a real socket. */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../src/server/http.js';
import { parseRecordedDemand } from '../../src/sim/scenario/recorded.js';
import { harness, settle, str, until, type Harness, type W } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

const lobbyToken = (lobbyId: string): string => str(h.runtime.startOf(lobbyId)?.env['RIVET_TOKEN'] as W | undefined);

/** A game whose lobbies take 800 ms to be ready, with demand recorded. */
const start = async () => {
  h = harness({ demand: true, readyAfterMs: 800 });
  const s = await h.setup();
  const base = `/cloud/games/${s.gameId}/namespaces/${s.nsId}/analytics/matchmaker/demand`;
  return { ...s, base, t0: h.clock.now() };
};

/** A find that waits for its lobby: the clock moves until it is ready. */
const findReady = async (pub: string, body: unknown = { game_modes: ['default'] }) => {
  const pending = h.call('POST', '/matchmaker/lobbies/find', { token: pub, body });
  await settle();
  h.timers.advance(800);
  const r = await pending;
  expect(r.status).toBe(200);
  return { lobbyId: str(r.body['lobby']?.['lobby_id']), playerToken: str(r.body['player']?.['token']) };
};

const exportText = async (path: string, token: string): Promise<{ status: number; text: string; headers: Headers }> => {
  const res = await h.app.handle(h.request('GET', path, { token }));
  return { status: res.status, text: await res.text(), headers: res.headers };
};

describe('demand recording and export', () => {
  it('exports each request as the recorded-demand JSONL the simulator reads: sessions, connection delays, no-shows, no ids', async () => {
    const { pub, cloud, base, t0, nsId } = await start();
    const first = await findReady(pub);
    // The player connects 1.2 s after its answer and plays for a minute.
    const ref = { token: lobbyToken(first.lobbyId), body: { player_token: first.playerToken } };
    h.timers.advance(1_200);
    expect((await h.call('POST', '/matchmaker/players/connected', ref)).status).toBe(200);
    h.timers.advance(60_000);
    expect((await h.call('POST', '/matchmaker/players/disconnected', ref)).status).toBe(200);
    // A second player never connects; a third asks for a mode the version lacks (not exported).
    h.timers.advance(1_000);
    await findReady(pub, { game_modes: ['default'], regions: ['local'] });
    expect((await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['nope'] } })).status).toBe(400);
    await h.recorder?.flush();

    const end = h.clock.now() + 1;
    const got = await exportText(`${base}?start=${t0}&end=${end}`, cloud);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/x-ndjson');
    expect(got.headers.get('tavern-window-start')).toBe(new Date(t0).toISOString());
    const lines = got.text.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      { at_ms: 0, kind: 'find', game_mode: 'default', region: 'local', party: 1, session_ms: 60_000, connects: true, connect_ms: 1_200 },
      { at_ms: 63_000, kind: 'find', game_mode: 'default', region: 'local', party: 1, session_ms: 0, connects: false },
    ]);
    const parsed = parseRecordedDemand(got.text);
    expect(parsed.ok).toBe(true);

    // Stored: no client address, no player id (only keyed digests).
    const stored = JSON.stringify(await h.demand.store.readDemand(nsId, { from: 0, to: end }, undefined, 1_000));
    expect(stored).not.toContain('203.0.113.7');
    const players = [...(await h.matchmaker.snapshot()).namespaces.values()].flatMap((n) => [...n.lobbies.values()].flatMap((l) => [...l.players.keys()]));
    expect(players.length).toBeGreaterThan(0);
    for (const id of players) expect(stored).not.toContain(id);
    expect(stored).toContain('"outcome":"MATCHMAKER_GAME_MODE_NOT_FOUND"');
  });

  it('records which gates ran, the outcome and the seat wait', async () => {
    h = harness({ demand: true, readyAfterMs: 0 });
    const { pub, nsId } = await h.setup((buildId) => ({
      matchmaker: {
        regions: { local: {} },
        docker: { image_id: buildId, ports: { default: { port: 7777, protocol: 'udp' } } },
        game_modes: { default: { actions: { find: { enabled: true, verification: { url: 'https://verify.example.com/check', headers: {} } } } } },
      },
    }));
    h.verify.answer = () => ({ kind: 'status', status: 403 });
    expect((await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } })).status).toBe(400);
    h.verify.answer = () => ({ kind: 'status', status: 204 });
    expect((await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } })).status).toBe(200);
    // A join to a lobby that does not exist: no mode, no region.
    expect((await h.call('POST', '/matchmaker/lobbies/join', { token: pub, body: { lobby_id: '00000000-0000-4000-8000-000000000000' } })).body['code']).toBe('MATCHMAKER_LOBBY_NOT_FOUND');
    await h.recorder?.flush();
    const facts = await h.demand.store.readDemand(nsId, { from: 0, to: h.clock.now() + 1 }, undefined, 100);
    const requests = facts.map((f) => f.fact).filter((f) => f.type === 'request');
    const verified = { captcha: false, verification: true };
    expect(requests).toMatchObject([
      { kind: 'find', gameMode: 'default', party: 1, outcome: 'MATCHMAKER_VERIFICATION_FAILED', gates: verified, seats: [] },
      { kind: 'find', gameMode: 'default', region: 'local', party: 1, outcome: 'ok', waitMs: 0, gates: verified },
      { kind: 'join', party: 1, outcome: 'MATCHMAKER_LOBBY_NOT_FOUND' },
    ]);
    // A request no gate held records none.
    expect(requests[2]).not.toHaveProperty('gates');
    expect(requests[0]).not.toHaveProperty('region');
    expect(requests[2]).not.toHaveProperty('gameMode');
    expect(facts.map((f) => f.fact).filter((f) => f.type === 'lobby').map((f) => (f as { step: string }).step)).toEqual(['created', 'ready']);
  });

  it('records whether a seat was ready at admission; observed: the answer time is the waits of those seats alone', async () => {
    const { pub, cloud, base, t0, nsId } = await start();
    // The first find waits 800 ms for its lobby; the next finds a seat in it at once.
    await findReady(pub);
    const second = await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
    expect(second.status).toBe(200);
    await h.recorder?.flush();
    const facts = await h.demand.store.readDemand(nsId, { from: 0, to: h.clock.now() + 1 }, undefined, 100);
    expect(facts.map((f) => f.fact).filter((f) => f.type === 'request')).toMatchObject([{ waitMs: 800, seatReady: false }, { waitMs: 0, seatReady: true }]);
    const r = await h.call('GET', `${base}/observed?start=${t0}&end=${h.clock.now() + 1}`, { token: cloud });
    expect(r.body['answer_ms']).toEqual({ samples: 1, median: 0, p95: 0 });
    expect(r.body['regions']?.['local']?.['seat_wait_ms']).toEqual({ samples: 2, median: 0, p95: 800 });
  });

  it('a window where nothing happened exports an empty body; a bad window is refused with the parameter named', async () => {
    const { cloud, base, t0 } = await start();
    const empty = await exportText(`${base}?start=${t0 - 10_000}&end=${t0 - 5_000}`, cloud);
    expect(empty).toMatchObject({ status: 200, text: '' });
    const backwards = await h.call('GET', `${base}?start=${t0}&end=${t0 - 1}`, { token: cloud });
    expect(backwards.status).toBe(400);
    expect(backwards.body['code']).toBe('API_BAD_QUERY');
    expect(str(backwards.body['message'])).toContain('start');
    const garbage = await h.call('GET', `${base}?end=yesterday`, { token: cloud });
    expect(garbage.body['code']).toBe('API_BAD_QUERY');
    expect(str(garbage.body['message'])).toContain('end');
    // RFC 3339 works as well as epoch milliseconds.
    expect((await h.call('GET', `${base}?start=${new Date(t0 - 1_000).toISOString()}`, { token: cloud })).status).toBe(200);
  });

  it('needs a cloud token of the game', async () => {
    const { pub, base } = await start();
    expect((await h.call('GET', base)).status).toBe(401);
    expect((await h.call('GET', base, { token: pub })).body['code']).toBe('CLAIMS_MISSING_ENTITLEMENT');
  });

  it('observed: per region the start delays, crashes per lobby-hour and session lengths calibration fits', async () => {
    const { pub, cloud, base, t0 } = await start();
    const a = await findReady(pub);
    const ref = { token: lobbyToken(a.lobbyId), body: { player_token: a.playerToken } };
    await h.call('POST', '/matchmaker/players/connected', ref);
    // The lobby crashes an hour after it was created, its player still in it.
    h.timers.advance(3_600_000 - 800);
    h.runtime.exit(a.lobbyId, 'crashed');
    await until(() => [...h.store.world.namespaces.values()].every((n) => n.lobbies.get(a.lobbyId)?.lifecycle.status !== 'ready'));
    await settle();
    await h.recorder?.flush();
    const r = await h.call('GET', `${base}/observed?start=${t0}&end=${t0 + 3_600_000 + 1}`, { token: cloud });
    expect(r.status).toBe(200);
    const local = r.body['regions']?.['local'];
    expect(local?.['lobby_start_delay_ms']).toEqual({ samples: 1, median: 800, p95: 800 });
    expect(local?.['crashes']).toBe(1);
    expect(Number(local?.['lobby_hours'])).toBeCloseTo(1, 6);
    const session = { samples: 1, median: 3_600_000 - 800, p95: 3_600_000 - 800 };
    expect(local?.['session_ms']).toEqual(session);
    expect(local?.['seat_wait_ms']).toEqual({ samples: 1, median: 800, p95: 800 });
    expect(r.body['game_modes']?.['default']?.['local']).toEqual({
      requests: { find: 1, join: 0, create: 0 }, parties: { 1: 1 }, seats: 1, connected: 1, session_ms: session,
    });
  });
});

describe('demand export over a real socket', () => {
  it('a store that fails mid-export cuts the connection: the client never takes a truncated body for a whole one', async () => {
    const { pub, cloud, base, t0 } = await start();
    await findReady(pub);
    await h.recorder?.flush();
    // The export reads the facts in one pass, once the answer's headers went out: the store fails under it.
    h.demand.store.readDemand = () => Promise.reject(new Error('disk gone'));
    const server = createHttpServer(h.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      // Cut before the headers went out or after: either way the read fails.
      const body = fetch(`http://127.0.0.1:${port}${base}?start=${t0}&end=${h.clock.now() + 1}`, { headers: { authorization: `Bearer ${cloud}` } }).then((res) => res.text());
      await expect(body).rejects.toThrow();
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('streams the lines (chunked, no content-length)', async () => {
    const { pub, cloud, base, t0 } = await start();
    for (let i = 0; i < 3; i++) await findReady(pub, { game_modes: ['default'], regions: ['lnd-atl'] });
    await h.recorder?.flush();
    const server = createHttpServer(h.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const res = await fetch(`http://127.0.0.1:${port}${base}?start=${t0}&end=${h.clock.now() + 1}`, { headers: { authorization: `Bearer ${cloud}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBeNull();
      expect(res.headers.get('transfer-encoding')).toBe('chunked');
      const lines = (await res.text()).trimEnd().split('\n');
      expect(lines.map((l) => (JSON.parse(l) as { region: string }).region)).toEqual(['lnd-atl', 'lnd-atl', 'lnd-atl']);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
