/** `POST …/namespaces/{ns}/preview`: the deploy preview through the app, on a recording in the memory store. */
import { afterEach, describe, expect, it } from 'vitest';
import { writeRecording } from '../../bench/preview-recording.js';
import { defaultConfig, harness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

const start = async () => {
  h = harness({ demand: true, config: { tierPrices: { 'basic-1d1': 0.4 } } });
  const s = await h.setup();
  const now = h.clock.now();
  await writeRecording(h.demand.store, { namespaceId: s.nsId, start: now - 2 * 3_600_000, minutes: 120, ccu: 12, gameMode: 'default', region: 'local', seed: 3 });
  return { ...s, path: `/cloud/games/${s.gameId}/namespaces/${s.nsId}/preview` };
};

interface Figure { name: string; live: number; new: number; change_pct: number | null }
const figure = (body: unknown, name: string): Figure => {
  const found = ((body as { preview: { figures: Figure[] } }).preview.figures).find((f) => f.name === name);
  if (found === undefined) throw new Error(`no figure ${name}`);
  return found;
};

const halved = (buildId: string): unknown => {
  const config = defaultConfig(buildId) as { matchmaker: Record<string, unknown> };
  return { matchmaker: { ...config.matchmaker, max_players: 2 } };
};

describe('POST …/preview', () => {
  it('answers the live and new figures side by side: half the max players, more lobbies and lobby-hours; nothing is created', async () => {
    const { cloud, path, buildId, gameId, versionId, nsId } = await start();
    const versions = (await h.catalog.listVersions(gameId)).length;
    const r = await h.call('POST', `${path}?since=7d&seed=4`, { token: cloud, body: halved(buildId) });
    expect(r.status).toBe(200);
    expect(figure(r.body, 'lobbies').new).toBeGreaterThan(figure(r.body, 'lobbies').live);
    expect(figure(r.body, 'lobby_hours').new).toBeGreaterThan(figure(r.body, 'lobby_hours').live);
    expect(figure(r.body, 'cost').new).toBeGreaterThan(figure(r.body, 'cost').live);
    const preview = r.body['preview'] as unknown as { seed: number; notes: string[]; error_bound: { counts_pct: number }; requests: number };
    expect(preview.seed).toBe(4);
    expect(preview.requests).toBeGreaterThan(20);
    expect(preview.error_bound.counts_pct).toBe(5);
    expect(preview.notes.join('\n')).toContain('the recording is short');
    // Nothing was created: the game has no new version, and the namespace keeps its own.
    expect(await h.catalog.listVersions(gameId)).toHaveLength(versions);
    expect((await h.catalog.getNamespace(nsId))?.versionId).toBe(versionId);
    // The same seed, the same answer.
    const again = await h.call('POST', `${path}?since=7d&seed=4`, { token: cloud, body: halved(buildId) });
    expect(again.body).toEqual(r.body);
  });

  it('refuses a bad config with the path of each problem (from the body), bad query parameters, and a public token', async () => {
    const { cloud, pub, path, buildId, gameId } = await start();
    const bad = { matchmaker: { ...(halved(buildId) as { matchmaker: object }).matchmaker, max_players: -1, regions: { mars: {} } } };
    const r = await h.call('POST', path, { token: cloud, body: bad });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('VALIDATION_ERROR');
    const paths = (r.body['metadata']?.['errors'] as unknown as { path: string[] }[]).map((p) => p.path.join('.'));
    expect(paths.some((p) => p.startsWith('matchmaker.'))).toBe(true);
    expect(paths.every((p) => !p.startsWith('config.'))).toBe(true);
    const notObject = await h.call('POST', path, { token: cloud, body: [1] });
    expect(notObject.status).toBe(400);
    expect(notObject.body['code']).toBe('VALIDATION_ERROR');
    for (const q of ['since=soon', 'since=90d', 'seed=-1', 'seed=99999999999']) {
      const got = await h.call('POST', `${path}?${q}`, { token: cloud, body: halved(buildId) });
      expect(got.status, q).toBe(400);
      expect(got.body['code'], q).toBe('API_BAD_QUERY');
    }
    // A namespace whose live version runs no lobbies (a game's first, empty one), previewed with an empty config: nothing to preview.
    const namespaces = (await h.call('GET', `/cloud/games/${gameId}`, { token: cloud })).body['game']?.['namespaces'] as unknown as { name_id: string; namespace_id: string }[];
    const staging = namespaces.find((n) => n.name_id !== 'prod')?.namespace_id ?? '';
    const none = await h.call('POST', `/cloud/games/${gameId}/namespaces/${staging}/preview`, { token: cloud, body: {} });
    expect([none.status, none.body['code']]).toEqual([400, 'VALIDATION_ERROR']);
    expect((none.body['metadata']?.['errors'] as unknown as { path: string[] }[]).map((p) => p.path.join('.'))).toEqual(['matchmaker.missing']);
    // A public token is not a cloud token: refused as every cloud route refuses it.
    expect((await h.call('POST', path, { token: pub, body: halved(buildId) })).status).toBe(401);
  });
});
