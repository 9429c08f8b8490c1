import type { Ctx } from './context.js';
import type { PMap } from './pmap.js';
import { EMPTY_INDEX, reindex } from './routing/index.js';
import { type Decision, Tx } from './tx.js';
import {
  DEFAULT_NAMESPACE_SETTINGS,
  emptyNamespace,
  namespaceOf,
  type NamespaceSettings,
  type NamespaceState,
  type Version,
  type World,
} from './world.js';

/**
 * Add a namespace (no version yet). Adding an existing id changes nothing.
 *
 * @example
 * world = addNamespace(world, 'ns-1');
 */
export const addNamespace = (world: World, id: string, settings: NamespaceSettings = DEFAULT_NAMESPACE_SETTINGS): World =>
  world.namespaces.has(id) ? world : { ...world, namespaces: world.namespaces.set(id, emptyNamespace(id, settings)) };

/**
 * Replace a namespace's matchmaker limits. Existing seats stay; new requests see the new limits.
 *
 * @example
 * world = updateNamespaceSettings(world, 'ns-1', { ...settings, lobbyCountMax: 16 });
 */
export const updateNamespaceSettings = (world: World, id: string, settings: NamespaceSettings): World => {
  const ns = namespaceOf(world, id);
  return { ...world, namespaces: world.namespaces.set(id, { ...ns, settings }) };
};

/** Versions that are current or still have lobbies; the others are forgotten. */
export const liveVersions = (ns: NamespaceState): PMap<string, Version> => {
  // The common case: only the current version is kept, and it always stays.
  if (ns.versions.size === 1 && ns.currentVersionId !== undefined && ns.versions.has(ns.currentVersionId)) return ns.versions;
  const used = new Set<string>();
  for (const lobby of ns.lobbies.values()) used.add(lobby.versionId);
  if (ns.currentVersionId !== undefined) used.add(ns.currentVersionId);
  let versions = ns.versions;
  for (const id of ns.versions.keys()) if (!used.has(id)) versions = versions.delete(id);
  return versions;
};

/**
 * Make `version` the namespace's current version (`PUT .../namespaces/{ns}/version`). Lobbies of
 * other versions become outdated: they keep their players but get no more finds. Setting an older
 * version back makes its lobbies current again. Follow it with the idle reconciliation.
 *
 * @example
 * const d = publishVersion(world, 'ns-1', makeVersion('v2', resolved), ctx);
 */
export const publishVersion = (world: World, namespaceId: string, version: Version, ctx: Ctx): Decision<undefined> => {
  const ns = namespaceOf(world, namespaceId);
  const tx = new Tx(world, ns, ctx.now);
  let routing = EMPTY_INDEX;
  for (const lobby of ns.lobbies.values()) routing = reindex(routing, undefined, lobby, version.id);
  tx.patch({ currentVersionId: version.id, versions: ns.versions.set(version.id, version), routing });
  tx.patch({ versions: liveVersions(tx.ns) });
  tx.emit({ type: 'version-published', at: ctx.now, namespaceId, versionId: version.id });
  return tx.commit(undefined);
};
