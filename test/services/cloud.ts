/**
 * What the cloud services' tests run on: the memory catalog, a real matchmaker on the memory match
 * store (a runtime whose starts always succeed), a fixed clock and sequential UUIDs, and
 * helpers that put games, versions and completed uploads into the catalog directly.
 */
import { MemoryCatalogStore } from '../../src/adapters/memory/catalog.js';
import { MemoryMatchStore } from '../../src/adapters/memory/match-store.js';
import type { MatchError } from '../../src/core/errors.js';
import type { Result } from '../../src/core/result.js';
import { createWorld, DEFAULT_NAMESPACE_SETTINGS, type RegionInfo } from '../../src/core/world.js';
import type { CatalogStore, GameRecord, NamespaceRecord, VersionRecord } from '../../src/io/catalog.js';
import type { Random } from '../../src/io/index.js';
import { Matchmaker } from '../../src/services/matchmaker.js';
import { publishNamespace } from '../../src/services/publish.js';

export const T0 = Date.UTC(2024, 0, 1);

export const REGIONS: readonly RegionInfo[] = [{ id: 'local', displayName: 'Local', provider: 'Tavern' }];

/** UUIDs `00000000-0000-4000-8000-000000000001`, `…002`, … in order. */
export const sequentialRandom = (): Random & { readonly issued: string[] } => {
  const issued: string[] = [];
  return {
    issued,
    uuid: () => {
      const id = `00000000-0000-4000-8000-${(issued.length + 1).toString(16).padStart(12, '0')}`;
      issued.push(id);
      return id;
    },
    u32: () => 7,
  };
};

export const expectOk = <T, E>(r: Result<T, E>): T => {
  if (!r.ok) throw new Error(`expected success, got ${JSON.stringify(r.error)}`);
  return r.value;
};

export const expectError = <T>(r: Result<T, MatchError>): MatchError => {
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r.value)}`);
  return r.error;
};

/**
 * The catalog with some methods replaced; the others call through (races and failures the memory
 * catalog cannot be made to show).
 *
 * @example
 * overriding(catalog, { listNamespaces: () => Promise.resolve([]) })
 */
export const overriding = (catalog: CatalogStore, over: Partial<CatalogStore>): CatalogStore =>
  new Proxy(catalog, {
    get(target, key) {
      if (Object.hasOwn(over, key)) return over[key as keyof CatalogStore];
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });

/** A version config the core accepts: one game mode in `local` running the build `buildId`. */
export const versionConfig = (buildId: string): Record<string, unknown> => ({
  matchmaker: {
    regions: { local: {} },
    container: { image_id: buildId, ports: { default: { port: 7777, protocol: 'tcp', proxy: 'game-proxy' } } },
    game_modes: { default: {} },
  },
});

export function cloud(options: { readonly settings?: { readonly egressAllow?: readonly string[] } } = {}) {
  const clock = { t: T0, now: (): number => clock.t };
  const random = sequentialRandom();
  const catalog = new MemoryCatalogStore();
  const store = new MemoryMatchStore(createWorld(REGIONS));
  const matchmaker = new Matchmaker({
    store, clock, random,
    verifier: { verify: () => Promise.resolve({ kind: 'status', status: 200 }) },
    captcha: { verify: () => Promise.resolve({ success: true }) },
    runtime: { start: () => Promise.resolve(), stop: () => Promise.resolve() },
    routes: { bind: () => Promise.resolve(), unbind: () => Promise.resolve() },
    logs: { append: () => Promise.resolve() },
  });
  const settings = {
    publicOrigin: 'http://tavern.test',
    jobDomain: 'jobs.tavern.test',
    cdnDomain: 'cdn.tavern.test',
    egressAllow: options.settings?.egressAllow ?? [],
  };
  const deps = { catalog, matchmaker, clock, random, regions: REGIONS, settings };

  /** A game record, straight into the catalog. */
  const game = async (nameId = 'my-game'): Promise<GameRecord> =>
    expectOk(await catalog.createGame({ id: random.uuid(), nameId, displayName: 'My Game', developerGroupId: random.uuid(), createdAt: T0 }));

  /** A version of the game with `config`, straight into the catalog (nothing validated). */
  const version = async (gameId: string, displayName = 'v1', config: unknown = {}, lobbyGroupIds: Record<string, string> = {}): Promise<VersionRecord> =>
    expectOk(await catalog.createVersion({ id: random.uuid(), gameId, displayName, createdAt: T0, config, lobbyGroupIds }));

  /** A namespace on the version, straight into the catalog (not published). */
  const namespace = async (gameId: string, versionId: string, nameId = 'prod'): Promise<NamespaceRecord> =>
    expectOk(await catalog.createNamespace({
      id: random.uuid(), gameId, nameId, displayName: nameId, versionId, createdAt: T0, settings: DEFAULT_NAMESPACE_SETTINGS,
      cdn: { authType: 'none', authUsers: [], enableDomainPublicAuth: true }, domains: [],
    }));

  /** Two games with a version each: `game` and `version` the game under test, `other` and `foreign` another's. */
  const twoGames = async () => {
    const g = await game();
    const other = await game('other');
    return { game: g, version: await version(g.id), other, foreign: await version(other.id) };
  };

  /** A build of the game whose upload is complete (or not), straight into the catalog. */
  const build = async (gameId: string, complete = true): Promise<string> => {
    const uploadId = random.uuid();
    expectOk(await catalog.createUpload({ id: uploadId, gameId, kind: 'build', files: [{ path: 'image.tar', contentLength: 3, parts: 1 }], createdAt: T0, expiresAt: T0 + 3_600_000 }));
    if (complete) await catalog.completeUpload(uploadId, T0);
    const id = random.uuid();
    expectOk(await catalog.createBuild({ id, gameId, uploadId, displayName: 'Build', imageTag: `game:${id.slice(-4)}`, kind: 'docker_image', compression: 'none', createdAt: T0 }));
    return id;
  };

  /** A game with a build, a version running it (with its lobby group) and a `prod` namespace on it, published. */
  const published = async () => {
    const g = await game();
    const buildId = await build(g.id);
    const v = await version(g.id, 'v1', versionConfig(buildId), { default: random.uuid() });
    const ns = await namespace(g.id, v.id);
    await publishNamespace(deps, ns);
    return { game: g, version: v, ns, buildId };
  };

  return { deps, catalog, matchmaker, store, clock, random, settings, game, version, twoGames, namespace, build, published };
}
