/**
 * Which site a CDN host serves (wire.md §6.3): the namespace a host names (by name ids under the
 * CDN domain, or a custom domain), its current version's `cdn.site_id`, that site's completed
 * upload and the version's routes. The namespace is read on every request (a version switch or a
 * new domain applies to the next request); what hangs off a version id is immutable and cached.
 */
import { cdnHost, compileRoutes, type CdnHost, type CompiledRoute } from '../core/cdn.js';
import { parseVersionConfig } from '../core/config/index.js';
import type { DomainStore, GameStore, NamespaceStore, SiteStore, UploadStore, VersionStore, NamespaceRecord, UploadFile } from '../io/catalog.js';

/** A site as one request serves it: everything it reads comes from this one immutable upload. */
export interface ServedSite {
  readonly namespace: NamespaceRecord;
  readonly uploadId: string;
  /** The upload's files by path. */
  readonly files: ReadonlyMap<string, UploadFile>;
  readonly routes: readonly CompiledRoute[];
}

type Catalog = GameStore & NamespaceStore & DomainStore & VersionStore & SiteStore & UploadStore;

interface VersionSite {
  readonly uploadId: string;
  readonly files: ReadonlyMap<string, UploadFile>;
  readonly routes: readonly CompiledRoute[];
}

/** How many versions' sites, and namespace ids by name, are kept resolved. */
const MAX_CACHED = 1_000;

/**
 * @example
 * const sites = new CdnSites(catalog, 'cdn.example.com');
 * const site = await sites.resolve('my-game--staging.cdn.example.com'); // undefined: 404
 */
export class CdnSites {
  readonly #catalog: Catalog;
  readonly #cdnDomain: string | undefined;
  /** Game name id → game id (name ids never change). */
  readonly #games = new Map<string, string>();
  /** `<game id>/<namespace name id>` → namespace id (neither ever changes; the record is read on every request). */
  readonly #namespaceIds = new Map<string, string>();
  /** `Host` header → what it names (a pure reading of the header: never stale). */
  readonly #hosts = new Map<string, CdnHost | null>();
  /** Version id → its site, or null for a version without a (completed) site. */
  readonly #versions = new Map<string, Promise<VersionSite | null>>();

  constructor(catalog: Catalog, cdnDomain?: string) {
    this.#catalog = catalog;
    this.#cdnDomain = cdnDomain;
  }

  /**
   * The site the `Host` header names now, or undefined (unknown host, no namespace, a version
   * without a site or whose site is not completely uploaded).
   *
   * @effects catalog (reads)
   */
  async resolve(hostHeader: string | undefined): Promise<ServedSite | undefined> {
    const namespace = await this.#namespace(hostHeader);
    if (namespace === undefined) return undefined;
    const site = await this.#versionSite(namespace.versionId);
    return site === null ? undefined : { namespace, ...site };
  }

  async #namespace(hostHeader: string | undefined): Promise<NamespaceRecord | undefined> {
    if (hostHeader === undefined) return undefined;
    let host = this.#hosts.get(hostHeader);
    if (host === undefined) {
      host = cdnHost(hostHeader, this.#cdnDomain) ?? null;
      if (this.#hosts.size >= MAX_CACHED) this.#hosts.clear();
      this.#hosts.set(hostHeader, host);
    }
    if (host === null) return undefined;
    if (host.kind === 'domain') return this.#catalog.namespaceByDomain(host.domain);
    let gameId = this.#games.get(host.game);
    if (gameId === undefined) {
      gameId = (await this.#catalog.listGames()).find((g) => g.nameId === host.game)?.id;
      if (gameId === undefined) return undefined;
      this.#games.set(host.game, gameId);
    }
    const named = `${gameId}/${host.namespace}`;
    const id = this.#namespaceIds.get(named);
    // The record itself is read every time (a catalog's own cache is exact), so a publish shows at once.
    const known = id === undefined ? undefined : await this.#catalog.getNamespace(id);
    if (known !== undefined) return known;
    this.#namespaceIds.delete(named);
    const found = (await this.#catalog.listNamespaces(gameId)).find((n) => n.nameId === host.namespace);
    if (found !== undefined) {
      if (this.#namespaceIds.size >= MAX_CACHED) this.#namespaceIds.delete(this.#namespaceIds.keys().next().value as string);
      this.#namespaceIds.set(named, found.id);
    }
    return found;
  }

  #versionSite(versionId: string): Promise<VersionSite | null> {
    const cached = this.#versions.get(versionId);
    if (cached !== undefined) return cached;
    const loading = this.#loadVersionSite(versionId);
    // Only a completed site is final: a missing one may be completed later, so it is not kept.
    void loading.then((site) => {
      if (site === null) this.#versions.delete(versionId);
    }, () => this.#versions.delete(versionId));
    if (this.#versions.size >= MAX_CACHED) this.#versions.delete(this.#versions.keys().next().value as string);
    this.#versions.set(versionId, loading);
    return loading;
  }

  async #loadVersionSite(versionId: string): Promise<VersionSite | null> {
    const version = await this.#catalog.getVersion(versionId);
    const config = version === undefined ? undefined : parseVersionConfig(version.config);
    const cdn = config?.ok === true ? config.value.cdn : undefined;
    if (cdn?.siteId === undefined) return null;
    const site = await this.#catalog.getCdnSite(cdn.siteId);
    const upload = site === undefined ? undefined : await this.#catalog.getUpload(site.uploadId);
    if (upload?.completedAt === undefined) return null;
    return { uploadId: upload.id, files: new Map(upload.files.map((f) => [f.path, f])), routes: compileRoutes(cdn.routes ?? []) };
  }
}
