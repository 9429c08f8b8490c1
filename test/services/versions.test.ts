import { describe, expect, it } from 'vitest';
import { conflict } from '../../src/io/catalog.js';
import { createVersion, findVersion, versionProblems } from '../../src/services/versions.js';
import { cloud, expectError, expectOk, overriding, T0, versionConfig } from './cloud.js';

const pathsOf = (e: { readonly metadata?: unknown }): string[] =>
  (e.metadata as { errors: { path: string[] }[] }).errors.map((p) => p.path.join('.'));

/** The config with a find verification on a loopback URL (not a public host). */
const withLoopbackVerification = (buildId: string): Record<string, unknown> => ({
  matchmaker: {
    ...(versionConfig(buildId)['matchmaker'] as object),
    game_modes: { default: { actions: { find: { enabled: true, verification: { url: 'http://127.0.0.1:9000/verify', headers: {} } } } } },
  },
});

describe('createVersion', () => {
  it('stores the version as rendered by the core, with a fresh lobby group id per game mode', async () => {
    const c = cloud();
    const game = await c.game();
    const buildId = await c.build(game.id);
    c.clock.t = T0 + 5_000;
    const config = versionConfig(buildId);
    config['matchmaker'] = { ...(config['matchmaker'] as object), game_modes: { default: {}, ranked: {} } };
    const version = expectOk(await createVersion(c.deps, game.id, { display_name: 'v1', config }));
    expect(version).toMatchObject({ gameId: game.id, displayName: 'v1', createdAt: T0 + 5_000 });
    expect(Object.keys(version.lobbyGroupIds)).toEqual(['default', 'ranked']);
    expect(new Set([version.id, ...Object.values(version.lobbyGroupIds)]).size).toBe(3);
    expect(c.random.issued).toEqual(expect.arrayContaining([version.id, ...Object.values(version.lobbyGroupIds)]));
    expect(version.config).toMatchObject({ matchmaker: { docker: { image_id: buildId } } });
    expect(await c.catalog.getVersion(version.id)).toEqual(version);
  });

  it('reports every problem of a bad request as one VALIDATION_ERROR, and stores nothing', async () => {
    const c = cloud();
    const game = await c.game();
    const error = expectError(await createVersion(c.deps, game.id, { display_name: '' }));
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(pathsOf(error)).toEqual(['config.missing', 'display-name.too-short']);
    expect(await c.catalog.listVersions(game.id)).toEqual([]);
  });

  it('refuses a display name the game already uses, but not one another game uses', async () => {
    const c = cloud();
    const game = await c.game();
    const other = await c.game('other');
    await c.version(other.id, 'v1');
    expectOk(await createVersion(c.deps, game.id, { display_name: 'v1', config: {} }));
    const error = expectError(await createVersion(c.deps, game.id, { display_name: 'v1', config: {} }));
    expect(pathsOf(error)).toEqual(['display-name.not-unique']);
  });

  it('answers display-name.not-unique when the catalog refuses the record (a version stored in between)', async () => {
    const c = cloud();
    const game = await c.game();
    const catalog = overriding(c.catalog, { createVersion: () => Promise.resolve(conflict('id', 'x')) });
    const error = expectError(await createVersion({ ...c.deps, catalog }, game.id, { display_name: 'v1', config: {} }));
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', params: { error: 'display-name.not-unique' } });
  });

  it("refuses builds that are missing, another game's, or not completely uploaded", async () => {
    const c = cloud();
    const game = await c.game();
    const other = await c.game('other');
    const at = 'config.matchmaker.image-id';
    for (const [buildId, problem] of [
      ['00000000-0000-4000-8000-0000000000ff', 'not-found'],
      [await c.build(other.id), 'not-found'],
      [await c.build(game.id, false), 'upload-incomplete'],
    ] as const) {
      const error = expectError(await createVersion(c.deps, game.id, { display_name: 'v1', config: versionConfig(buildId) }));
      expect(pathsOf(error)).toEqual([`${at}.${problem}`]);
    }
  });

  it('checks the regions against the operator\'s', async () => {
    const c = cloud();
    const game = await c.game();
    const config = versionConfig(await c.build(game.id));
    config['matchmaker'] = { ...(config['matchmaker'] as object), regions: { mars: {} } };
    const error = expectError(await createVersion(c.deps, game.id, { display_name: 'v1', config }));
    expect(pathsOf(error).some((p) => p.includes('mars'))).toBe(true);
  });

  it('accepts a non-public verification host only when the operator allows it', async () => {
    const refused = cloud();
    const game = await refused.game();
    const error = expectError(await createVersion(refused.deps, game.id, { display_name: 'v1', config: withLoopbackVerification(await refused.build(game.id)) }));
    expect(pathsOf(error).join()).toMatch(/verification.*url.*invalid-ip/);
    const allowed = cloud({ settings: { egressAllow: ['127.0.0.1'] } });
    const g = await allowed.game();
    expectOk(await createVersion(allowed.deps, g.id, { display_name: 'v1', config: withLoopbackVerification(await allowed.build(g.id)) }));
  });
});

describe('versionProblems', () => {
  it('is empty for a request createVersion would accept, and stores nothing', async () => {
    const c = cloud();
    const game = await c.game();
    expect(await versionProblems(c.deps, game.id, { display_name: 'v1', config: versionConfig(await c.build(game.id)) })).toEqual([]);
    expect(await c.catalog.listVersions(game.id)).toEqual([]);
  });

  it('lists what createVersion would refuse, with its paths', async () => {
    const c = cloud();
    const game = await c.game();
    await c.version(game.id, 'v1');
    expect(await versionProblems(c.deps, game.id, { display_name: 'v1', config: {} })).toEqual([{ path: ['display-name', 'not-unique'] }]);
    expect(await versionProblems(c.deps, game.id, 'nope')).toEqual([{ path: ['invalid-type'] }]);
  });
});

describe('findVersion', () => {
  it("finds the game's version; VERSION_NOT_FOUND for an unknown id or another game's", async () => {
    const c = cloud();
    const { game, version, foreign } = await c.twoGames();
    expect(expectOk(await findVersion(c.deps, game.id, version.id))).toEqual(version);
    expect(expectError(await findVersion(c.deps, game.id, foreign.id)).code).toBe('VERSION_NOT_FOUND');
    expect(expectError(await findVersion(c.deps, game.id, '00000000-0000-4000-8000-0000000000ff')).code).toBe('VERSION_NOT_FOUND');
  });
});
