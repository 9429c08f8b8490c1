import { describe, expect, it } from 'vitest';
import type { NamespaceSettings, Version } from '../../src/core/world.js';
import { ensureNamespace, publishNamespace, syncNamespaces, type PublishDeps } from '../../src/services/publish.js';
import type { MemoryMatchStore } from '../../src/adapters/memory/match-store.js';
import { Matchmaker, type MatchmakerDeps } from '../../src/services/matchmaker.js';
import { cloud, versionConfig } from './cloud.js';

/** The matchmaker's own dependencies in a {@link cloud} fixture, to build a second instance over its store. */
const matchmakerDeps = (c: ReturnType<typeof cloud>): MatchmakerDeps => ({
  store: c.store,
  clock: c.clock,
  random: c.random,
  verifier: { verify: () => Promise.resolve({ kind: 'failed', reason: 'no verifier' }) },
  captcha: { verify: () => Promise.resolve({ success: false, reason: 'no captcha' }) },
  routes: { bind: () => Promise.resolve(), unbind: () => Promise.resolve() },
  logs: { append: () => Promise.resolve() },
});

/** The deps with the matchmaker's calls counted. */
const counting = (deps: PublishDeps) => {
  const calls = { snapshot: 0, has: 0, addNamespace: [] as string[], publish: [] as string[] };
  const matchmaker: PublishDeps['matchmaker'] = {
    snapshot: () => (calls.snapshot++, deps.matchmaker.snapshot()),
    hasNamespace: (id: string) => (calls.has++, deps.matchmaker.hasNamespace(id)),
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
    expect(calls).toEqual({ snapshot: 0, has: 1, addNamespace: [ns.id], publish: [`${ns.id} ${version.id}`] });
    await ensureNamespace(deps, ns);
    expect(calls).toEqual({ snapshot: 0, has: 2, addNamespace: [ns.id], publish: [`${ns.id} ${version.id}`] });
    expect(c.store.world.namespaces.get(ns.id)?.currentVersionId).toBe(version.id);
  });

  it('leaves a namespace the matchmaker already has as it is (even on another version)', async () => {
    const c = cloud();
    const { game, ns } = await c.published();
    const v2 = await c.version(game.id, 'v2');
    const { deps, calls } = counting(c.deps);
    await ensureNamespace(deps, { ...ns, versionId: v2.id });
    expect(calls).toEqual({ snapshot: 0, has: 1, addNamespace: [], publish: [] });
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

describe('Matchmaker.hasNamespace', () => {
  /** A memory store that counts its snapshots. */
  const counted = (c: ReturnType<typeof cloud>) => {
    let snapshots = 0;
    const store = Object.assign(Object.create(c.store) as MemoryMatchStore, {
      snapshot: () => ((snapshots += 1), c.store.snapshot()),
      transact: c.store.transact.bind(c.store),
    });
    return { store, snapshots: () => snapshots };
  };

  it('reads the store until the namespace is seen, then answers from memory (a world never drops a namespace)', async () => {
    const c = cloud();
    const { store, snapshots } = counted(c);
    const mm = new Matchmaker({ ...matchmakerDeps(c), store });
    expect(await mm.hasNamespace('ns-added-elsewhere')).toBe(false);
    expect(snapshots()).toBe(1);
    // Another instance sharing the store adds it: this one sees it on its next look, then remembers.
    await c.matchmaker.addNamespace('ns-added-elsewhere');
    expect(await mm.hasNamespace('ns-added-elsewhere')).toBe(true);
    expect(await mm.hasNamespace('ns-added-elsewhere')).toBe(true);
    expect(snapshots()).toBe(2);
    await mm.addNamespace('ns-added-here');
    expect(await mm.hasNamespace('ns-added-here')).toBe(true);
    expect(snapshots()).toBe(2);
  });
});

function expectDefined<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('expected a value');
  return value;
}
