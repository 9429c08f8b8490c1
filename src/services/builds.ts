/**
 * What a game uploads (wire.md §2.8, §2.9, §6): builds (one image file, unique image tags within
 * the game) and CDN sites (many files), each a record pointing to an upload the uploads service
 * prepared; and both listed with how far their upload got.
 */
import type { Problem } from '../core/config/index.js';
import { matchError, validationError, type MatchError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import type { BuildRecord, BuildStore, SiteStore, UploadStore, CdnSiteRecord, UploadRecord } from '../io/catalog.js';
import type { Clock, Random } from '../io/index.js';
import type { FileToUpload, PreparedUpload, PrepareUpload } from './uploads.js';

/** The uploads service's `prepare` (`services/uploads.ts`): builds and sites need nothing else of it. */
export interface UploadPreparer {
  prepare(request: PrepareUpload): Promise<Result<PreparedUpload, MatchError>> | Result<PreparedUpload, MatchError>;
}

export interface UploadDeps {
  readonly catalog: BuildStore & SiteStore;
  readonly clock: Clock;
  readonly random: Random;
  /** Absent: the server stores no uploads, and creating a build or site is `UPLOAD_INVALID`. */
  readonly uploads?: UploadPreparer;
}

/**
 * @example
 * { displayName: 'Nightly', imageTag: 'game:nightly', kind: 'docker_image', compression: 'lz4', multipart: true, file: { contentLength: 3e8 } }
 */
export interface NewBuild {
  readonly displayName: string;
  readonly imageTag: string;
  readonly kind: 'docker_image' | 'oci_bundle';
  readonly compression: 'none' | 'lz4';
  /** Split the file into chunks, each with its own presigned PUT. */
  readonly multipart: boolean;
  readonly file: Omit<FileToUpload, 'path'>;
}

/** @example { displayName: 'Site', files: [{ path: 'index.html', contentLength: 512, contentType: 'text/html' }] } */
export interface NewSite {
  readonly displayName: string;
  readonly files: readonly FileToUpload[];
}

/** A new build or site record and the upload to PUT its files to. */
export type Prepared<R> = { readonly record: R } & PreparedUpload;

/**
 * `image-tag.not-unique` when another build of the game has the tag.
 *
 * @effects catalog (listBuilds)
 * @example
 * await imageTagProblems({ catalog }, gameId, 'game:v1') // [{ path: ['image-tag', 'not-unique'] }] once a build has it
 */
export async function imageTagProblems(deps: { readonly catalog: BuildStore }, gameId: string, imageTag: string): Promise<readonly Problem[]> {
  const taken = (await deps.catalog.listBuilds(gameId)).some((b) => b.imageTag === imageTag);
  return taken ? [{ path: ['image-tag', 'not-unique'] }] : [];
}

/**
 * The stored object name of a build: derived from kind and compression (Rivet ignored `image_file.path`).
 *
 * @example
 * buildFileName('oci_bundle', 'lz4') // 'oci-bundle.tar.lz4'
 */
export const buildFileName = (kind: NewBuild['kind'], compression: NewBuild['compression']): string =>
  `${kind === 'oci_bundle' ? 'oci-bundle' : 'image'}.tar${compression === 'lz4' ? '.lz4' : ''}`;

/** The uploads service's preparation, or `UPLOAD_INVALID` when the server has none. */
const prepare = async (deps: UploadDeps, request: PrepareUpload): Promise<Result<PreparedUpload, MatchError>> =>
  deps.uploads === undefined ? err(matchError('UPLOAD_INVALID', { reason: 'uploads are not configured on this server' })) : deps.uploads.prepare(request);

/**
 * Records a build of the game and prepares the upload of its image: a taken image tag is a
 * `VALIDATION_ERROR`; the uploads service's refusals (sizes, paths, types) come back as they are.
 *
 * @effects catalog (listBuilds, createBuild), uploads (prepare), clock, random
 * @example
 * const r = await createBuild(deps, gameId, build); if (r.ok) r.value.presigned[0].url
 */
export async function createBuild(deps: UploadDeps, gameId: string, build: NewBuild): Promise<Result<Prepared<BuildRecord>, MatchError>> {
  const taken = await imageTagProblems(deps, gameId, build.imageTag);
  if (taken.length > 0) return err(validationError(taken));
  const file = { ...build.file, path: buildFileName(build.kind, build.compression) };
  const prepared = await prepare(deps, { gameId, kind: 'build', files: [file], multipart: build.multipart });
  if (!prepared.ok) return prepared;
  const record: BuildRecord = {
    id: deps.random.uuid(), gameId, uploadId: prepared.value.upload.id, displayName: build.displayName,
    imageTag: build.imageTag, kind: build.kind, compression: build.compression, createdAt: deps.clock.now(),
  };
  const created = await deps.catalog.createBuild(record);
  if (!created.ok) return err(matchError('UPLOAD_INVALID', { reason: 'the build could not be recorded' }));
  return ok({ record: created.value, ...prepared.value });
}

/**
 * Records a CDN site of the game and prepares the upload of its files (the uploads service's
 * refusals, sizes among them, come back as they are).
 *
 * @effects catalog (createCdnSite), uploads (prepare), clock, random
 * @example
 * const r = await createSite(deps, gameId, { displayName: 'Site', files }); if (r.ok) r.value.presigned.length
 */
export async function createSite(deps: UploadDeps, gameId: string, site: NewSite): Promise<Result<Prepared<CdnSiteRecord>, MatchError>> {
  const prepared = await prepare(deps, { gameId, kind: 'cdn', files: site.files });
  if (!prepared.ok) return prepared;
  const record: CdnSiteRecord = { id: deps.random.uuid(), gameId, uploadId: prepared.value.upload.id, displayName: site.displayName, createdAt: deps.clock.now() };
  const created = await deps.catalog.createCdnSite(record);
  if (!created.ok) return err(matchError('UPLOAD_INVALID', { reason: 'the site could not be recorded' }));
  return ok({ record: created.value, ...prepared.value });
}

/** A build or site with its upload's total size and whether it completed. */
export interface Uploaded<R> {
  readonly record: R;
  readonly contentLength: number;
  readonly complete: boolean;
}

type Listing = UploadStore;

const withUpload = async <R extends { readonly uploadId: string }>(catalog: Listing, records: readonly R[]): Promise<Uploaded<R>[]> => {
  const out: Uploaded<R>[] = [];
  for (const record of [...records].reverse()) {
    const upload: UploadRecord | undefined = await catalog.getUpload(record.uploadId);
    out.push({ record, contentLength: upload?.files.reduce((n, f) => n + f.contentLength, 0) ?? 0, complete: upload?.completedAt !== undefined });
  }
  return out;
};

/**
 * The game's builds, newest first, with their uploads' state.
 *
 * @effects catalog (listBuilds, getUpload)
 * @example
 * (await listBuilds({ catalog }, gameId)).filter((b) => b.complete)
 */
export async function listBuilds(deps: { readonly catalog: Listing & BuildStore }, gameId: string): Promise<Uploaded<BuildRecord>[]> {
  return withUpload(deps.catalog, await deps.catalog.listBuilds(gameId));
}

/**
 * The game's CDN sites, newest first, with their uploads' state.
 *
 * @effects catalog (listCdnSites, getUpload)
 * @example
 * (await listSites({ catalog }, gameId))[0]?.record // the newest
 */
export async function listSites(deps: { readonly catalog: Listing & SiteStore }, gameId: string): Promise<Uploaded<CdnSiteRecord>[]> {
  return withUpload(deps.catalog, await deps.catalog.listCdnSites(gameId));
}
