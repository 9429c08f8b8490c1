/**
 * Analytics history through the API: this process's counts per namespace and minute (requests,
 * refusals by code, starts, start latency, failures), the lobbies at each minute's end, a range
 * read with its auth and errors, a restart that does not count running lobbies as started, and
 * pruning past the retention.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { bucketUpperMs, latencyBucket } from '../../src/core/history/latency.js';
import { MINUTE_MS } from '../../src/core/history/minute.js';
import { AnalyticsHistory } from '../../src/services/analytics-history.js';
import { harness, settle, str, until, type Harness, type W } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

const points = (body: W): Record<string, unknown>[] => body['points'] as unknown as Record<string, unknown>[];

describe('analytics history', () => {
  it('counts requests, refusals by code, starts with their latency and crashes per minute; lobbies and players at the minute\'s end; kept, read back and pruned', async () => {
    h = harness();
    const { pub, gameId, cloud, nsId } = await h.setup();
    const t0 = h.clock.now();
    const path = `/cloud/games/${gameId}/namespaces/${nsId}/analytics/matchmaker/history`;
    // A find that starts a lobby, ready 3 s later; a refused find; a second lobby that crashes.
    const pending = h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
    await until(() => h.runtime.started.length === 1);
    const first = h.runtime.started[0]?.lobbyId ?? '';
    h.clock.set(t0 + 3_000);
    await h.runtime.ready(first);
    expect((await pending).status).toBe(200);
    const refused = await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['nope'] } });
    expect(refused.status).toBe(400);
    const create = h.call('POST', '/matchmaker/lobbies/create', { token: pub, body: { game_mode: 'custom', publicity: 'public' } });
    await until(() => h.runtime.started.length === 2);
    const second = h.runtime.started[1]?.lobbyId ?? '';
    h.clock.set(t0 + 10_000);
    h.runtime.exit(second, 'crashed', 1);
    expect((await create).status).toBe(400);
    await until(() => h.store.world.namespaces.get(nsId)?.lobbies.get(second)?.lifecycle.status === 'stopped');
    await settle();

    const now = await h.call('GET', `${path}?range=1h`, { token: cloud });
    expect(now.status).toBe(200);
    expect(now.body).toMatchObject({ range: '1h', step_ms: MINUTE_MS, to_ts: new Date(t0 + MINUTE_MS).toISOString(), from_ts: new Date(t0 + MINUTE_MS - 3_600_000).toISOString() });
    const p3553 = bucketUpperMs(latencyBucket(3_000));
    expect(points(now.body)).toEqual([{
      ts: new Date(t0).toISOString(), minutes: 1, lobbies: { starting: 0, active: 1, idle: 0, closed: 0 }, players: 1,
      requests: { find: 2, join: 0, create: 1 }, refusals: { [str(refused.body['code'])]: 1, [str((await create).body['code'])]: 1 }, starts: 2,
      start_p50_ms: p3553, start_p95_ms: p3553, failures: { 'start-failed': 1 },
    }]);

    // The minute ends: its row is kept; the next minute starts from nothing but the lobbies.
    h.clock.set(t0 + MINUTE_MS + 1_000);
    await h.history.flush();
    const kept = await h.historyStore.minutes(nsId, t0, t0 + MINUTE_MS);
    expect(kept.map((r) => [r.minute, r.instanceId, r.starts, r.requests.find, r.failures])).toEqual([[t0, 'test-instance', 2, 2, { 'start-failed': 1 }]]);
    const later = await h.call('GET', `${path}?range=24h`, { token: cloud });
    expect(points(later.body).map((p) => [p['ts'], p['minutes'], p['starts'], p['players']])).toEqual([[new Date(t0).toISOString(), 2, 2, 1]]);

    // A restart: a new process's history counts the running lobby, never as started.
    const restarted = new AnalyticsHistory({ store: h.historyStore, world: h.matchmaker, clock: h.clock, timers: h.timers, instanceId: 'restarted' });
    restarted.attach(h.matchmaker.hub);
    h.clock.set(t0 + 2 * MINUTE_MS + 1_000);
    await restarted.flush();
    const afterRestart = await h.historyStore.minutes(nsId, t0 + MINUTE_MS, t0 + 2 * MINUTE_MS);
    expect(afterRestart.map((r) => [r.instanceId, r.starts, r.lobbies.active, r.players])).toEqual([['restarted', 0, 1, 1]]);

    // Past the retention (7 days by default) rows are pruned.
    h.clock.set(t0 + 7 * 86_400_000 + MINUTE_MS);
    expect(await restarted.prune()).toBe(1);
    expect(await h.historyStore.minutes(nsId, 0, t0 + 3 * MINUTE_MS)).toHaveLength(1);
  });

  it('once started, writes each minute a second after it ends; closing writes the minute being counted', async () => {
    h = harness({ readyAfterMs: 0 });
    const { pub, nsId } = await h.setup();
    const t0 = h.clock.now();
    let writes = 0;
    const put = h.historyStore.putMinutes.bind(h.historyStore);
    h.historyStore.putMinutes = (rows) => put(rows).then(() => void writes++);
    h.history.start();
    await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
    h.timers.advance(MINUTE_MS);
    expect(await h.historyStore.minutes(nsId, 0, t0 + 9 * MINUTE_MS)).toEqual([]);
    h.timers.advance(1_000);
    await until(() => writes === 1);
    expect((await h.historyStore.minutes(nsId, 0, t0 + 9 * MINUTE_MS)).map((r) => [r.minute, r.requests.find])).toEqual([[t0, 1]]);
    await h.call('POST', '/matchmaker/lobbies/find', { token: pub, body: { game_modes: ['default'] } });
    await h.history.close();
    expect((await h.historyStore.minutes(nsId, 0, t0 + 9 * MINUTE_MS)).map((r) => [r.minute, r.requests.find, r.players])).toEqual([[t0, 1, 1], [t0 + MINUTE_MS, 1, 2]]);
  });

  it('answers 400 API_BAD_QUERY for an unknown range, and only to a token of the namespace\'s game', async () => {
    h = harness();
    const { pub, gameId, cloud, nsId } = await h.setup();
    const path = `/cloud/games/${gameId}/namespaces/${nsId}/analytics/matchmaker/history`;
    for (const range of ['2h', '', '1H']) {
      const r = await h.call('GET', `${path}?range=${range}`, { token: cloud });
      expect({ range, status: r.status, code: r.body['code'] }).toEqual({ range, status: 400, code: 'API_BAD_QUERY' });
    }
    expect((await h.call('GET', path, { token: cloud })).body['range']).toBe('1h');
    expect((await h.call('GET', path)).status).toBe(401);
    const byPublic = await h.call('GET', path, { token: pub });
    expect([byPublic.status, byPublic.body['code']]).toEqual([401, 'CLAIMS_MISSING_ENTITLEMENT']);
    const other = await h.setup(undefined, 'other-game');
    expect((await h.call('GET', `/cloud/games/${other.gameId}/namespaces/${nsId}/analytics/matchmaker/history`, { token: other.cloud })).status).toBe(404);
    const byOther = await h.call('GET', path, { token: other.cloud });
    expect([byOther.status, byOther.body['code']]).toEqual([403, 'API_FORBIDDEN']);
  });
});
