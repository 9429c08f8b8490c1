import { describe, expect, it } from 'vitest';
import type { NamespaceSettings, Version } from '../../src/core/world.js';
import { ensureNamespace, publishNamespace, syncNamespaces, type PublishDeps } from '../../src/services/publish.js';
import { cloud, versionConfig } from './cloud.js';

/** The deps with the matchmaker's calls counted. */
const counting = (deps: PublishDeps) => {
  const calls = { snapshot: 0, addNamespace: [] as string[], publish: [] as string[] };
  const matchmaker: PublishDeps['matchmaker'] = {
    snapshot: () => (calls.snapshot++, deps.matchmaker.snapshot()),
    addNamespace: (id: string, settings?: NamespaceSettings) => (calls.addNamespace.push(id), deps.matchmaker.addNamespace(id, settings)),
    publish: (id: string, version: Version) => (calls.publish.push(`${id} ${version.id}`), deps.matchmaker.publish(id, version)),
  };
  return { deps: { catalog: deps.catalog, matchmaker }, calls };
};

describe('publishNamespace', () => {
  it("adds the namespace with its settings and makes its version current, lobby groups and game modes included", async () => {
    const c = cloud();
    const game = await c.game();
    const version = await c.version(game.id, 'v1', versionConfig(await c.build(game.id)), { default: 'group-1' });
    const ns = await c.namespace(game.id, version.id);
    await publishNamespace(c.deps, ns);
    const state = c.store.world.namespaces.get(ns.id);
    expect(state?.currentVersionId).toBe(version.id);
    expect(state?.settings).toEqual(ns.settings);
    const current = state?.versions.get(version.id);
    expect(current?.config.gameModes.map((m) => m.name)).toEqual(['default']);
    expect(current?.lobbyGroupIds.get('default')).toBe('group-1');
  });

  it('throws (a bug) when the namespace points to an unknown version, and changes nothing', async () => {
    const c = cloud();
    const game = await c.game();
    const ns = await c.namespace(game.id, '00000000-0000-4000-8000-0000000000ff');
    await expect(publishNamespace(c.deps, ns)).rejects.toThrow(/points to unknown version/);
    expect(c.store.world.namespaces.has(ns.id)).toBe(false);
  });

  it('throws (a bug) when the stored config no longer parses', async () => {
    const c = cloud();
    const game = await c.game();
    const version = await c.version(game.id, 'v1', { matchmaker: 5 });
    await expect(publishNamespace(c.deps, await c.namespace(game.id, version.id))).rejects.toThrow(/no longer parses/);
  });
});

describe('syncNamespaces', () => {
  it('publishes the namespaces the matchmaker lacks or runs another version in, and leaves the current ones alone', async () => {
    const c = cloud();
    const { game, version, ns: current } = await c.published();
    const missing = await c.namespace(game.id, version.id, 'staging');
    const v2 = await c.version(game.id, 'v2', versionConfig(await c.build(game.id)));
    const moved = expectDefined(await c.catalog.updateNamespace(current.id, { versionId: v2.id }));
    const other = await c.game('other-game');
    const elsewhere = await c.namespace(other.id, (await c.version(other.id)).id);
    const { deps, calls } = counting(c.deps);
    await syncNamespaces(deps);
    expect(calls.publish.sort()).toEqual([`${moved.id} ${v2.id}`, `${missing.id} ${version.id}`, `${elsewhere.id} ${elsewhere.versionId}`].sort());
    calls.publish.length = 0;
    await syncNamespaces(deps);
    expect(calls.publish).toEqual([]);
  });
});

describe('ensureNamespace', () => {
  it('publishes a namespace the matchmaker lacks, then never looks it up again', async () => {
    const c = cloud();
    const game = await c.game();
    const version = await c.version(game.id);
    const ns = await c.namespace(game.id, version.id);
    const { deps, calls } = counting(c.deps);
    await ensureNamespace(deps, ns);
    expect(calls).toEqual({ snapshot: 1, addNamespace: [ns.id], publish: [`${ns.id} ${version.id}`] });
    await ensureNamespace(deps, ns);
    expect(calls.snapshot).toBe(1);
    expect(c.store.world.namespaces.get(ns.id)?.currentVersionId).toBe(version.id);
  });

  it('leaves a namespace the matchmaker already has as it is (even on another version)', async () => {
    const c = cloud();
    const { game, ns } = await c.published();
    const v2 = await c.version(game.id, 'v2');
    const { deps, calls } = counting(c.deps);
    await ensureNamespace(deps, { ...ns, versionId: v2.id });
    expect(calls).toEqual({ snapshot: 1, addNamespace: [], publish: [] });
  });

  it('remembers namespaces per matchmaker: another matchmaker looks again', async () => {
    const c = cloud();
    const game = await c.game();
    const ns = await c.namespace(game.id, (await c.version(game.id)).id);
    await ensureNamespace(counting(c.deps).deps, ns);
    const other = cloud();
    const second = counting({ catalog: c.catalog, matchmaker: other.matchmaker });
    await ensureNamespace(second.deps, ns);
    expect(second.calls.publish).toHaveLength(1);
    expect(other.store.world.namespaces.has(ns.id)).toBe(true);
  });
});

function expectDefined<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('expected a value');
  return value;
}
