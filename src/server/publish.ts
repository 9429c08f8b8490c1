/**
 * Bringing the matchmaker in line with the catalog: a namespace's current version, parsed from the
 * stored config and published; and, at start-up, every namespace the matchmaker does not know yet.
 */
import { parseVersionConfig, resolveVersion } from '../core/config/index.js';
import { makeVersion, type Version } from '../core/world.js';
import type { NamespaceRecord, VersionRecord } from '../io/catalog.js';
import type { Services } from './context.js';

/** The matchmaker's {@link Version} of a stored version (its config was validated when it was created). */
export function versionOf(record: VersionRecord): Version {
  const parsed = parseVersionConfig(record.config);
  if (!parsed.ok) throw new Error(`stored version ${record.id} no longer parses`);
  return makeVersion(record.id, resolveVersion(parsed.value), record.lobbyGroupIds);
}

/**
 * Makes `ns.versionId` the namespace's current matchmaker version (adding the namespace first).
 *
 * @effects catalog (getVersion), matchmaker (addNamespace, publish)
 */
export async function publishNamespace(services: Services, ns: NamespaceRecord): Promise<void> {
  const record = await services.catalog.getVersion(ns.versionId);
  if (record === undefined) throw new Error(`namespace ${ns.id} points to unknown version ${ns.versionId}`);
  await services.matchmaker.addNamespace(ns.id, ns.settings);
  await services.matchmaker.publish(ns.id, versionOf(record));
}

/**
 * Every catalog namespace the matchmaker's world lacks (a fresh match store, or a namespace created
 * by an instance that crashed half-way) is added and published.
 *
 * @effects catalog (listGames, listNamespaces), matchmaker
 */
export async function syncNamespaces(services: Services): Promise<void> {
  const world = await services.matchmaker.snapshot();
  for (const game of await services.catalog.listGames()) {
    for (const ns of await services.catalog.listNamespaces(game.id)) {
      const state = world.namespaces.get(ns.id);
      if (state === undefined || state.currentVersionId !== ns.versionId) await publishNamespace(services, ns);
    }
  }
}

/** Namespaces each matchmaker is known to hold (the world never drops a namespace). */
const known = new WeakMap<object, Set<string>>();

/**
 * Whether the matchmaker knows the namespace (calls into it need that); adds it when missing.
 * Once seen, a namespace is not looked up again: the matchmaker's world never drops one.
 */
export async function ensureNamespace(services: Services, ns: NamespaceRecord): Promise<void> {
  let seen = known.get(services.matchmaker);
  if (seen === undefined) known.set(services.matchmaker, (seen = new Set()));
  if (seen.has(ns.id)) return;
  const world = await services.matchmaker.snapshot();
  if (!world.namespaces.has(ns.id)) await publishNamespace(services, ns);
  seen.add(ns.id);
}
