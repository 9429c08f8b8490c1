/**
 * Bringing the matchmaker in line with the catalog: a namespace's current version, parsed from the
 * stored config and published; and, at start-up, every namespace the matchmaker does not know yet.
 */
import { parseVersionConfig, resolveVersion } from '../core/config/index.js';
import { makeVersion, type Version } from '../core/world.js';
import type { GameStore, NamespaceStore, VersionStore, NamespaceRecord, VersionRecord } from '../io/catalog.js';
import type { Matchmaker } from './matchmaker.js';

/** What publishing reads and drives. */
export interface PublishDeps {
  readonly catalog: VersionStore & GameStore & NamespaceStore;
  readonly matchmaker: Pick<Matchmaker, 'snapshot' | 'hasNamespace' | 'addNamespace' | 'publish'>;
}

/** The matchmaker's {@link Version} of a stored version (its config was validated when it was created). */
function versionOf(record: VersionRecord): Version {
  const parsed = parseVersionConfig(record.config);
  if (!parsed.ok) throw new Error(`stored version ${record.id} no longer parses`);
  return makeVersion(record.id, resolveVersion(parsed.value), record.lobbyGroupIds);
}

/**
 * Makes `ns.versionId` the namespace's current matchmaker version (adding the namespace first).
 *
 * @effects catalog (getVersion), matchmaker (addNamespace, publish)
 * @example
 * await publishNamespace({ catalog, matchmaker }, { ...ns, versionId });
 */
export async function publishNamespace(deps: PublishDeps, ns: NamespaceRecord): Promise<void> {
  const record = await deps.catalog.getVersion(ns.versionId);
  if (record === undefined) throw new Error(`namespace ${ns.id} points to unknown version ${ns.versionId}`);
  await deps.matchmaker.addNamespace(ns.id, ns.settings);
  await deps.matchmaker.publish(ns.id, versionOf(record));
}

/**
 * Every catalog namespace the matchmaker's world lacks (a fresh match store, or a namespace created
 * by an instance that crashed half-way) is added and published.
 *
 * @effects catalog (listGames, listNamespaces, getVersion), matchmaker
 * @example
 * await syncNamespaces({ catalog, matchmaker }); // at start-up
 */
export async function syncNamespaces(deps: PublishDeps): Promise<void> {
  const world = await deps.matchmaker.snapshot();
  for (const game of await deps.catalog.listGames()) {
    for (const ns of await deps.catalog.listNamespaces(game.id)) {
      const state = world.namespaces.get(ns.id);
      if (state === undefined || state.currentVersionId !== ns.versionId) await publishNamespace(deps, ns);
    }
  }
}

/**
 * Whether the matchmaker knows the namespace (calls into it need that); adds it when missing.
 * Once seen, a namespace is not looked up again (the matchmaker remembers: its world never drops one).
 *
 * @effects matchmaker (hasNamespace; addNamespace and publish when missing), catalog (getVersion when missing)
 * @example
 * await ensureNamespace(services, ns); // before a find in `ns`
 */
export async function ensureNamespace(deps: PublishDeps, ns: NamespaceRecord): Promise<void> {
  if (!(await deps.matchmaker.hasNamespace(ns.id))) await publishNamespace(deps, ns);
}
