/** Live analytics (§2.3) and lobby logs with their long poll (§2.4). */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { harness, settle, str, until, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

const decode = (lines: unknown): string[] => (lines as string[]).map((l) => Buffer.from(l, 'base64').toString('utf8'));

describe('getAnalyticsMatchmakerLive', () => {
  it('summarises every active lobby of the namespace', async () => {
    h = harness();
    const { pub, gameId, cloud, nsId, versionId } = await h.setup();
    const pending = h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
    await until(() => h.timers.pending > 0);
    const path = `/cloud/games/${gameId}/namespaces/${nsId}/analytics/matchmaker/live`;
    const before = await h.call('GET', path, { token: cloud });
    expect(before.status).toBe(200);
    const lobbyId = h.runtime.started[0]?.lobbyId ?? '';
    const lobbyGroupId = (await h.catalog.getVersion(versionId))?.lobbyGroupIds['default'];
    expect(before.body['lobbies']).toEqual([{
      lobby_id: lobbyId, lobby_group_id: lobbyGroupId, lobby_group_name_id: 'default', region_id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
      create_ts: expect.stringMatching(/Z$/) as unknown, is_ready: false, is_idle: false, is_closed: false, is_outdated: false,
      max_players_normal: 4, max_players_direct: 4, max_players_party: 4, total_player_count: 1, registered_player_count: 0,
    }]);
    await h.runtime.ready(lobbyId);
    await pending;
    const after = await h.call('GET', path, { token: cloud });
    expect(after.body['lobbies']?.[0]).toMatchObject({ is_ready: true });
    // Finds received by this instance, refused ones too: the dashboard charts their rate.
    expect(before.body['finds_received']).toBe(1);
    await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['nope'] } });
    expect((await h.call('GET', path, { token: cloud })).body['finds_received']).toBe(2);
    expect((await h.call('GET', `/cloud/games/${gameId}/namespaces/${randomUUID()}/analytics/matchmaker/live`, { token: cloud })).status).toBe(404);
  });
});

describe('recently stopped lobbies', () => {
  it('lists stopped lobbies newest first with why, exit code, run time and last log lines; failed=true keeps the failures; a forgotten lobby stays listed and its log readable', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub, gameId, cloud, nsId, versionId } = await h.setup();
    const path = `/cloud/games/${gameId}/namespaces/${nsId}/analytics/matchmaker/stopped`;
    const findLobby = async (): Promise<string> => str((await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } })).body['lobby']?.['lobby_id']);
    const t0 = h.clock.now();
    const crashed = await findLobby();
    await h.logBook.write(crashed, 'std_err', [{ at: t0 + 1_000, line: 'TypeError: boom' }]);
    h.clock.set(t0 + 5_000);
    h.runtime.exit(crashed, 'crashed', 1);
    await until(() => h.store.world.namespaces.get(nsId)?.lobbies.get(crashed)?.lifecycle.status === 'stopped');
    await settle();
    const exited = await findLobby();
    h.clock.set(t0 + 9_000);
    h.runtime.exit(exited, 'exited', 0);
    await until(() => h.store.world.namespaces.get(nsId)?.lobbies.get(exited)?.lifecycle.status === 'stopped');
    await settle();

    const all = await h.call('GET', path, { token: cloud });
    expect(all.status).toBe(200);
    const lobbies = all.body['lobbies'] as unknown as Record<string, unknown>[];
    expect(lobbies.map((l) => [l['lobby_id'], l['reason'], l['failed'], l['exit_code']])).toEqual([[exited, 'exited', false, 0], [crashed, 'crashed', true, 1]]);
    expect(lobbies[1]).toEqual({
      lobby_id: crashed, lobby_group_name_id: 'default', region_id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown, version_id: versionId,
      create_ts: new Date(t0).toISOString(), ready_ts: new Date(t0).toISOString(), stop_ts: new Date(t0 + 5_000).toISOString(), run_ms: 5_000,
      reason: 'crashed', failed: true, exit_code: 1,
      last_lines: [
        { ts: new Date(t0).toISOString(), stream: 'std_out', line: `fake container ${crashed} started` },
        { ts: new Date(t0 + 1_000).toISOString(), stream: 'std_err', line: 'TypeError: boom' },
        { ts: new Date(t0 + 5_000).toISOString(), stream: 'tavern', line: 'stopping: the game server crashed with code 1' },
      ],
    });
    const failed = await h.call('GET', `${path}?failed=true&limit=5`, { token: cloud });
    expect((failed.body['lobbies'] as unknown as { lobby_id: string }[]).map((l) => l.lobby_id)).toEqual([crashed]);
    expect((await h.call('GET', `${path}?limit=1`, { token: cloud })).body['lobbies']).toHaveLength(1);

    // The matchmaker forgets a stopped lobby after 10 minutes; Tavern still lists it, and its log is still there.
    h.clock.set(t0 + 11 * 60_000);
    await h.matchmaker.maintain();
    expect(h.store.world.namespaces.get(nsId)?.lobbies.has(crashed)).toBe(false);
    expect((await h.call('GET', `${path}?failed=true`, { token: cloud })).body['lobbies']).toHaveLength(1);
    const logs = await h.call('GET', `/cloud/games/${gameId}/matchmaker/lobbies/${crashed}/logs?stream=std_err`, { token: cloud });
    expect(logs.status).toBe(200);
    expect(decode(logs.body['lines'])).toEqual(['TypeError: boom']);
    // Another game sees neither.
    const other = await h.setup(undefined, 'other-game');
    expect((await h.call('GET', `/cloud/games/${other.gameId}/matchmaker/lobbies/${crashed}/logs?stream=std_err`, { token: other.cloud })).status).toBe(404);
    expect((await h.call('GET', `/cloud/games/${other.gameId}/namespaces/${nsId}/analytics/matchmaker/stopped`, { token: other.cloud })).status).toBe(404);
    // A day later it is gone.
    h.clock.set(t0 + 25 * 3_600_000);
    expect((await h.call('GET', path, { token: cloud })).body['lobbies']).toEqual([]);
    expect((await h.call('GET', `/cloud/games/${gameId}/matchmaker/lobbies/${crashed}/logs?stream=std_err`, { token: cloud })).status).toBe(404);
  });

  it('API_BAD_QUERY for a bad failed or limit', async () => {
    h = harness();
    const { gameId, cloud, nsId } = await h.setup();
    const path = `/cloud/games/${gameId}/namespaces/${nsId}/analytics/matchmaker/stopped`;
    for (const q of ['failed=yes', 'limit=0', 'limit=101', 'limit=x']) {
      const r = await h.call('GET', `${path}?${q}`, { token: cloud });
      expect({ q, status: r.status, code: r.body['code'] }).toEqual({ q, status: 400, code: 'API_BAD_QUERY' });
    }
  });
});

describe('getLobbyLogs', () => {
  const setupLobby = async () => {
    const s = await h.setup();
    const found = await h.call('POST', '/matchmaker/lobbies/find', { token: s.pub, body: { game_modes: ['default'] } });
    const lobbyId = str(found.body['lobby']?.['lobby_id']);
    return { ...s, lobbyId, path: `/cloud/games/${s.gameId}/matchmaker/lobbies/${lobbyId}/logs` };
  };

  it('returns the newest lines, base64 with RFC 3339 timestamps, and a watch index', async () => {
    h = harness({ readyAfterMs: 0 });
    const { cloud, lobbyId, path } = await setupLobby();
    await h.logBook.write(lobbyId, 'std_out', [{ at: h.clock.now(), line: 'héllo' }, { at: h.clock.now() + 1, line: 'world' }]);
    await h.logBook.write(lobbyId, 'std_err', [{ at: h.clock.now(), line: 'oops' }]);
    const r = await h.call('GET', `${path}?stream=std_out`, { token: cloud });
    expect(r.status).toBe(200);
    expect(decode(r.body['lines'])).toEqual([`fake container ${lobbyId} started`, 'héllo', 'world']);
    expect(r.body['timestamps']).toHaveLength(3);
    expect(str(r.body['timestamps']?.[2])).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(r.body['watch']).toEqual({ index: '3' });
    expect(decode((await h.call('GET', `${path}?stream=std_err`, { token: cloud })).body['lines'])).toEqual(['oops']);
  });

  it('keeps only the newest 256 lines without a watch index', async () => {
    h = harness({ readyAfterMs: 0 });
    const { cloud, lobbyId, path } = await setupLobby();
    await h.logBook.write(lobbyId, 'std_err', Array.from({ length: 1500 }, (_, i) => ({ at: i, line: `l${i}` })));
    const r = await h.call('GET', `${path}?stream=std_err`, { token: cloud });
    const lines = decode(r.body['lines']);
    expect(lines).toHaveLength(256);
    expect(lines.at(-1)).toBe('l1499');
    expect(r.body['watch']).toEqual({ index: '1500' });
  });

  it('long-polls: wakes as soon as a line arrives', async () => {
    h = harness({ readyAfterMs: 0 });
    const { cloud, lobbyId, path } = await setupLobby();
    const first = await h.call('GET', `${path}?stream=std_out`, { token: cloud });
    const index = str(first.body['watch']?.['index']);
    let answered = false;
    const pending = h.call('GET', `${path}?stream=std_out&watch_index=${index}`, { token: cloud }).then((r) => ((answered = true), r));
    await until(() => h.timers.pending >= 2);
    await settle();
    expect(answered).toBe(false);
    await h.logBook.write(lobbyId, 'std_out', [{ at: h.clock.now(), line: 'new' }]);
    const r = await pending;
    expect(decode(r.body['lines'])).toEqual(['new']);
    expect(Number(str(r.body['watch']?.['index']))).toBe(Number(index) + 1);
  });

  it('long-polls: finds lines written by another instance by polling the catalog', async () => {
    h = harness({ readyAfterMs: 0 });
    const { cloud, lobbyId, path } = await setupLobby();
    const pending = h.call('GET', `${path}?stream=std_err&watch_index=0`, { token: cloud });
    await until(() => h.timers.pending >= 2);
    await h.catalog.appendLogs(lobbyId, 'std_err', [{ at: 1, line: 'elsewhere' }]);
    h.timers.advance(1_000);
    expect(decode((await pending).body['lines'])).toEqual(['elsewhere']);
  });

  it('long-polls: gives up after 40 s with the same index', async () => {
    h = harness({ readyAfterMs: 0 });
    const { cloud, path } = await setupLobby();
    let answered = false;
    const pending = h.call('GET', `${path}?stream=std_err&watch_index=0`, { token: cloud }).then((r) => ((answered = true), r));
    await until(() => h.timers.pending >= 2);
    h.timers.advance(39_000);
    await settle();
    expect(answered).toBe(false);
    h.timers.advance(1_000);
    const r = await pending;
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ lines: [], timestamps: [], watch: { index: '0' } });
  });

  it('ends pending long polls when the app closes', async () => {
    h = harness({ readyAfterMs: 0 });
    const { cloud, path } = await setupLobby();
    const pending = h.call('GET', `${path}?stream=std_err&watch_index=0`, { token: cloud });
    await until(() => h.timers.pending >= 2);
    h.app.close();
    expect((await pending).body['lines']).toEqual([]);
  });

  it('keeps Tavern\'s own lines on the lobby\'s tavern stream, never in the game server\'s output', async () => {
    h = harness({ readyAfterMs: 0 });
    const { cloud, lobbyId, path, nsId } = await setupLobby();
    await h.logBook.write(lobbyId, 'std_err', [{ at: h.clock.now(), line: 'TypeError: boom' }]);
    h.runtime.exit(lobbyId, 'crashed');
    await until(() => h.store.world.namespaces.get(nsId)?.lobbies.get(lobbyId)?.lifecycle.status === 'stopped');
    expect(decode((await h.call('GET', `${path}?stream=std_err`, { token: cloud })).body['lines'])).toEqual(['TypeError: boom']);
    const tavern = await h.call('GET', `${path}?stream=tavern`, { token: cloud });
    expect(tavern.status).toBe(200);
    expect(decode(tavern.body['lines'])).toEqual([expect.stringMatching(/^stopping: .*crashed/)]);
  });

  it('API_BAD_QUERY for a bad stream or watch index; LOBBY_NOT_FOUND for unknown or foreign lobbies', async () => {
    h = harness({ readyAfterMs: 0 });
    const { cloud, path, lobbyId } = await setupLobby();
    expect((await h.call('GET', path, { token: cloud })).body['code']).toBe('API_BAD_QUERY');
    expect((await h.call('GET', `${path}?stream=stdout`, { token: cloud })).body['code']).toBe('API_BAD_QUERY');
    const idx = await h.call('GET', `${path}?stream=std_out&watch_index=abc`, { token: cloud });
    expect(idx.status).toBe(400);
    expect(idx.body['code']).toBe('API_BAD_QUERY');
    const other = await h.setup(undefined, 'other-game');
    const foreign = await h.call('GET', `/cloud/games/${other.gameId}/matchmaker/lobbies/${lobbyId}/logs?stream=std_out`, { token: other.cloud });
    expect(foreign.status).toBe(404);
    expect(foreign.body['code']).toBe('LOBBY_NOT_FOUND');
    const gameId = path.split('/')[3] ?? '';
    expect((await h.call('GET', `/cloud/games/${gameId}/matchmaker/lobbies/${randomUUID()}/logs?stream=std_out`, { token: cloud })).status).toBe(404);
  });
});

describe('a lobby\'s page (GET one lobby) and closing it to new players', () => {
  it('shows its ports with their addresses, players, tags, state, flags and config; closes and reopens it; a stopped one answers from what is kept', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub, gameId, cloud, nsId, versionId } = await h.setup();
    const found = await h.call('POST', '/matchmaker/lobbies/create', { token: pub, body: { game_mode: 'custom', publicity: 'public', tags: { map: 'dust' }, lobby_config: { rounds: 3 } } });
    expect(found.status).toBe(200);
    const lobbyId = str(found.body['lobby']?.['lobby_id']);
    const path = `/cloud/games/${gameId}/matchmaker/lobbies/${lobbyId}`;
    const page = await h.call('GET', path, { token: cloud });
    expect(page.status).toBe(200);
    const lobby = page.body['lobby'] as unknown as Record<string, unknown>;
    expect(lobby).toMatchObject({
      lobby_id: lobbyId, namespace_id: nsId, version_id: versionId, lobby_group_name_id: 'custom', region_name_id: 'local', status: 'ready',
      is_ready: true, is_closed: false, publicity: 'public', origin: 'custom', tags: { map: 'dust' }, lobby_config: { rounds: 3 }, total_player_count: 1,
      ports: found.body['lobby']?.['ports'],
    });
    expect(lobby['players']).toEqual([{ player_id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown, status: 'reserved', create_ts: expect.stringMatching(/Z$/) as unknown }]);
    expect(Object.keys(lobby['ports'] as object).length).toBeGreaterThan(0);

    const close = await h.call('PUT', `${path}/closed`, { token: cloud, body: { is_closed: true } });
    expect(close.status).toBe(200);
    expect(h.store.world.namespaces.get(nsId)?.lobbies.get(lobbyId)?.closed).toBe(true);
    expect((await h.call('GET', path, { token: cloud })).body['lobby']?.['is_closed']).toBe(true);
    await h.call('PUT', `${path}/closed`, { token: cloud, body: { is_closed: false } });
    expect(h.store.world.namespaces.get(nsId)?.lobbies.get(lobbyId)?.closed).toBe(false);
    const bad = await h.call('PUT', `${path}/closed`, { token: cloud, body: { is_closed: 'yes' } });
    expect([bad.status, bad.body['code']]).toEqual([400, 'VALIDATION_ERROR']);

    // Another game's token, an unknown lobby.
    const other = await h.setup(undefined, 'other-game');
    expect((await h.call('GET', `/cloud/games/${other.gameId}/matchmaker/lobbies/${lobbyId}`, { token: other.cloud })).status).toBe(404);
    expect((await h.call('PUT', `/cloud/games/${other.gameId}/matchmaker/lobbies/${lobbyId}/closed`, { token: other.cloud, body: { is_closed: true } })).status).toBe(404);
    expect((await h.call('GET', path, { token: other.cloud })).status).toBe(403);

    // Stopped: its exit code from what is kept; then forgotten by the matchmaker: what is kept.
    h.runtime.exit(lobbyId, 'crashed', 3);
    await until(() => h.store.world.namespaces.get(nsId)?.lobbies.get(lobbyId)?.lifecycle.status === 'stopped');
    await settle();
    expect((await h.call('GET', path, { token: cloud })).body['lobby']).toMatchObject({ status: 'stopped', stop_reason: 'crashed', exit_code: 3 });
    h.clock.set(h.clock.now() + 11 * 60_000);
    await h.matchmaker.maintain();
    const stopped = await h.call('GET', path, { token: cloud });
    expect(stopped.body['stopped']).toMatchObject({ lobby_id: lobbyId, reason: 'crashed', exit_code: 3, failed: true });
  });
});
