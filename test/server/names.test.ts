/**
 * Display names over the wire (outside probe): NUL, control characters, bidi overrides and lone
 * surrogates were stored and returned verbatim. Every endpoint taking a display name refuses them
 * with `VALIDATION_ERROR` and the field's path, and stores nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/server/env.js';
import { ADMIN, defaultConfig, harness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h.cleanup());

const BAD = ['Evil\u202egnp.exe', 'nul\u0000byte', 'bell\u0007', 'lone \ud800 half', 'iso\u2067late'];

describe('display names refuse unsafe text everywhere', () => {
  it('games, namespaces, versions, builds and CDN sites: 400 display-name.invalid, nothing stored', async () => {
    h = harness();
    const { gameId, cloud, versionId, buildId } = await h.setup();
    const before = { games: (await h.catalog.listGames()).length, namespaces: (await h.catalog.listNamespaces(gameId)).length };
    for (const name of BAD) {
      const answers = {
        game: await h.call('POST', '/cloud/games', { token: ADMIN, body: { name_id: 'other', display_name: name, developer_group_id: randomUUID() } }),
        namespace: await h.call('POST', `/cloud/games/${gameId}/namespaces`, { token: cloud, body: { display_name: name, name_id: 'other', version_id: versionId } }),
        version: await h.call('POST', `/cloud/games/${gameId}/versions`, { token: cloud, body: { display_name: name, config: defaultConfig(buildId) } }),
        build: await h.call('POST', `/cloud/games/${gameId}/builds`, {
          token: cloud, body: { display_name: name, image_tag: 'other:1', image_file: { path: 'image.tar', content_length: 3 } },
        }),
        site: await h.call('POST', `/cloud/games/${gameId}/cdn/sites`, { token: cloud, body: { display_name: name, files: [{ path: 'index.html', content_length: 2 }] } }),
      };
      for (const [what, a] of Object.entries(answers)) {
        expect({ what, status: a.status, code: a.body['code'] }, JSON.stringify(name)).toEqual({ what, status: 400, code: 'VALIDATION_ERROR' });
        expect(a.body['metadata']?.['errors'], what).toContainEqual({ path: ['display-name', 'invalid'] });
      }
      // The validate endpoints say the same.
      const validate = await h.call('POST', '/cloud/games/validate', { token: ADMIN, body: { name_id: 'fine', display_name: name } });
      expect(validate.body).toEqual({ errors: [{ path: ['display-name', 'invalid'] }] });
    }
    expect((await h.catalog.listGames()).length).toBe(before.games);
    expect((await h.catalog.listNamespaces(gameId)).length).toBe(before.namespaces);
  });

  it('a version refuses them in identity display names', async () => {
    h = harness();
    const { gameId, cloud, buildId } = await h.setup();
    const config = { ...(defaultConfig(buildId) as object), identity: { display_names: ['Guest', 'Adm\u202eni'] } };
    const r = await h.call('POST', `/cloud/games/${gameId}/versions`, { token: cloud, body: { display_name: 'v2', config } });
    expect(r.status).toBe(400);
    expect(r.body['metadata']?.['errors']).toEqual([{ path: ['config', 'identity', 'display-names', '1', 'invalid'] }]);
  });

  it('TAVERN_REGIONS refuses a region display name with them', () => {
    expect(() => parseEnv({ TAVERN_REGIONS: JSON.stringify([{ id: 'lnd', display_name: 'Lon\u202edon' }]) })).toThrow(/TAVERN_REGIONS\[0\]\.display_name/);
    expect(parseEnv({ TAVERN_REGIONS: JSON.stringify([{ id: 'lnd', display_name: 'Londres – 東京' }]) }).regions[0]?.displayName).toBe('Londres – 東京');
  });
});
