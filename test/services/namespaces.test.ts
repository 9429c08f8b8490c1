import { describe, expect, it } from 'vitest';
import { DEFAULT_NAMESPACE_SETTINGS } from '../../src/core/world.js';
import { conflict } from '../../src/io/catalog.js';
import {
  createNamespace,
  namespaceProblems,
  newNamespaceRecord,
  setCdnSettings,
  setMatchmakerLimits,
  setNamespaceVersion,
} from '../../src/services/namespaces.js';
import { cloud, expectError, expectOk, overriding, T0, versionConfig } from './cloud.js';

const UNKNOWN = '00000000-0000-4000-8000-0000000000ff';

describe('newNamespaceRecord', () => {
  it('starts with the default limits, no CDN auth, domain public auth on and no domains', () => {
    expect(newNamespaceRecord('id', 'game', { nameId: 'prod', displayName: 'Production', versionId: 'v' }, T0)).toEqual({
      id: 'id', gameId: 'game', nameId: 'prod', displayName: 'Production', versionId: 'v', createdAt: T0,
      settings: DEFAULT_NAMESPACE_SETTINGS,
      cdn: { authType: 'none', authUsers: [], enableDomainPublicAuth: true },
      domains: [],
    });
  });
});

describe('namespaceProblems', () => {
  it("finds a name id taken within the game (not another game's) and a version that is not the game's", async () => {
    const c = cloud();
    const { game, version, other, foreign } = await c.twoGames();
    await c.namespace(game.id, version.id, 'prod');
    await c.namespace(other.id, foreign.id, 'staging');
    expect(await namespaceProblems(c.deps, game.id, { nameId: 'prod', versionId: foreign.id })).toEqual({
      nameId: [{ path: ['name-id', 'not-unique'] }],
      versionId: [{ path: ['version-id', 'not-found'] }],
    });
    expect(await namespaceProblems(c.deps, game.id, { nameId: 'staging', versionId: version.id })).toEqual({ nameId: [], versionId: [] });
    expect(await namespaceProblems(c.deps, game.id, { versionId: UNKNOWN })).toEqual({ nameId: [], versionId: [{ path: ['version-id', 'not-found'] }] });
  });

  it('checks only the fields given', async () => {
    const c = cloud();
    const game = await c.game();
    await c.namespace(game.id, (await c.version(game.id)).id, 'prod');
    expect(await namespaceProblems(c.deps, game.id, {})).toEqual({ nameId: [], versionId: [] });
  });
});

describe('createNamespace', () => {
  it('stores the namespace and publishes its version to the matchmaker', async () => {
    const c = cloud();
    const game = await c.game();
    const version = await c.version(game.id, 'v1', versionConfig(await c.build(game.id)));
    c.clock.t = T0 + 1;
    const ns = expectOk(await createNamespace(c.deps, game.id, { nameId: 'staging', displayName: 'Staging', versionId: version.id }));
    expect(ns).toEqual(newNamespaceRecord(ns.id, game.id, { nameId: 'staging', displayName: 'Staging', versionId: version.id }, T0 + 1));
    expect(c.random.issued).toContain(ns.id);
    expect(await c.catalog.getNamespace(ns.id)).toEqual(ns);
    expect(c.store.world.namespaces.get(ns.id)?.currentVersionId).toBe(version.id);
  });

  it('refuses a taken name id and a version not of the game, both in one VALIDATION_ERROR, and stores nothing', async () => {
    const c = cloud();
    const game = await c.game();
    await c.namespace(game.id, (await c.version(game.id)).id, 'prod');
    const error = expectError(await createNamespace(c.deps, game.id, { nameId: 'prod', displayName: 'Prod', versionId: UNKNOWN }));
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', params: { error: 'name-id.not-unique, version-id.not-found' } });
    expect(await c.catalog.listNamespaces(game.id)).toHaveLength(1);
  });

  it('answers CLOUD_NAME_ID_TAKEN when the catalog refuses the name id (taken in between), and publishes nothing', async () => {
    const c = cloud();
    const game = await c.game();
    const version = await c.version(game.id);
    const catalog = overriding(c.catalog, { createNamespace: (ns) => Promise.resolve(conflict('name-id', ns.nameId)) });
    const error = expectError(await createNamespace({ ...c.deps, catalog }, game.id, { nameId: 'prod', displayName: 'Prod', versionId: version.id }));
    expect(error).toEqual({ code: 'CLOUD_NAME_ID_TAKEN', params: { name_id: 'prod' } });
    expect(c.store.world.namespaces.size).toBe(0);
  });
});

describe('setNamespaceVersion', () => {
  it("points the namespace to another of the game's versions and makes it current in the matchmaker", async () => {
    const c = cloud();
    const { game, ns } = await c.published();
    const v2 = await c.version(game.id, 'v2', versionConfig(await c.build(game.id)));
    const updated = expectOk(await setNamespaceVersion(c.deps, ns, v2.id));
    expect(updated.versionId).toBe(v2.id);
    expect((await c.catalog.getNamespace(ns.id))?.versionId).toBe(v2.id);
    expect(c.store.world.namespaces.get(ns.id)?.currentVersionId).toBe(v2.id);
  });

  it("answers VERSION_NOT_FOUND for another game's version and NAMESPACE_NOT_FOUND for a namespace gone, changing nothing", async () => {
    const c = cloud();
    const { version, ns } = await c.published();
    const other = await c.game('other');
    const foreign = await c.version(other.id);
    expect(expectError(await setNamespaceVersion(c.deps, ns, foreign.id)).code).toBe('VERSION_NOT_FOUND');
    const gone = { ...ns, id: UNKNOWN };
    expect(expectError(await setNamespaceVersion(c.deps, gone, version.id)).code).toBe('NAMESPACE_NOT_FOUND');
    expect(c.store.world.namespaces.has(UNKNOWN)).toBe(false);
    expect((await c.catalog.getNamespace(ns.id))?.versionId).toBe(version.id);
  });
});

describe('setMatchmakerLimits', () => {
  it('replaces the lobby count limit and players per client in the catalog and the matchmaker, keeping the other limits', async () => {
    const c = cloud();
    const { ns } = await c.published();
    const updated = expectOk(await setMatchmakerLimits(c.deps, ns, { lobbyCountMax: 7, maxPlayersPerClient: 3 }));
    const expected = { ...DEFAULT_NAMESPACE_SETTINGS, lobbyCountMax: 7, maxPlayersPerClient: 3 };
    expect(updated.settings).toEqual(expected);
    expect(c.store.world.namespaces.get(ns.id)?.settings).toEqual(expected);
  });

  it('answers NAMESPACE_NOT_FOUND for a namespace gone, and leaves the matchmaker alone', async () => {
    const c = cloud();
    const { ns } = await c.published();
    const error = expectError(await setMatchmakerLimits(c.deps, { ...ns, id: UNKNOWN }, { lobbyCountMax: 7, maxPlayersPerClient: 3 }));
    expect(error.code).toBe('NAMESPACE_NOT_FOUND');
    expect(c.store.world.namespaces.has(UNKNOWN)).toBe(false);
  });
});

describe('setCdnSettings', () => {
  it('changes only the CDN setting given', async () => {
    const c = cloud();
    const game = await c.game();
    const ns = await c.namespace(game.id, (await c.version(game.id)).id);
    await setCdnSettings(c.deps, ns, { authType: 'basic' });
    const basic = await c.catalog.getNamespace(ns.id);
    expect(basic?.cdn).toEqual({ authType: 'basic', authUsers: [], enableDomainPublicAuth: true });
    if (basic === undefined) throw new Error('gone');
    await setCdnSettings(c.deps, basic, { enableDomainPublicAuth: false });
    expect((await c.catalog.getNamespace(ns.id))?.cdn).toEqual({ authType: 'basic', authUsers: [], enableDomainPublicAuth: false });
  });
});
