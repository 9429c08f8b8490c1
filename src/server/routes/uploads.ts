/**
 * Builds and CDN sites (wire.md §2.8, §2.9, §6): create (the uploads service prepares presigned
 * PUTs), list, complete an upload, and the presigned PUT itself (streamed, not JSON).
 */
import type { MatchError } from '../../core/errors.js';
import type { Result } from '../../core/result.js';
import type { BuildRecord, CdnSiteRecord, UploadRecord } from '../../io/catalog.js';
import { requireAgent, requireGame } from '../auth.js';
import { param, ts, type Ctx, type Handler, type Services } from '../context.js';
import type { Presigned, UploadsPort } from '../deps.js';
import { fail, failWith } from '../errors.js';
import type { Router } from '../router.js';
import { anyJson, arrayOf, bool, collect, object, oneOf, opt, req, str, u64, type Problem } from '../validate.js';
import { assertValid, displayNameProblems, field } from './names.js';

/** Decimal size caps of wire.md §6.1. */
export const MAX_BUILD_BYTES = 8_000_000_000;
export const MAX_SITE_BYTES = 1_000_000_000;

const file = object({ path: req(str), content_type: opt(str), content_length: req(u64) });
const buildBody = object({
  display_name: opt(anyJson),
  image_tag: req(str),
  image_file: req(file),
  multipart_upload: opt(bool),
  kind: opt(oneOf(['docker_image', 'oci_bundle'] as const)),
  compression: opt(oneOf(['none', 'lz4'] as const)),
});
const siteBody = object({ display_name: opt(anyJson), files: req(arrayOf(file, 100_000)) });

const renderPresigned = (p: Presigned): unknown => ({ path: p.path, url: p.url, byte_offset: p.byteOffset, content_length: p.contentLength });

const uploadsOf = (services: Services): UploadsPort => services.uploads ?? fail('UPLOAD_INVALID', { reason: 'uploads are not configured on this server' });

const unwrap = <T>(r: Result<T, MatchError>): T => (r.ok ? r.value : failWith(r.error));

const TAG_PART = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;

function imageTagProblems(tag: unknown, taken: ReadonlySet<string>): Problem[] {
  if (typeof tag !== 'string') return [];
  const [name, version, ...rest] = tag.split(':');
  if (rest.length > 0 || name === undefined || version === undefined || !TAG_PART.test(name) || !TAG_PART.test(version)) {
    return [{ path: ['image-tag', 'invalid'] }];
  }
  return taken.has(tag) ? [{ path: ['image-tag', 'not-unique'] }] : [];
}

/** The stored object name of a build: derived from kind and compression (Rivet ignored `image_file.path`). */
const buildFileName = (kind: string, compression: string): string =>
  `${kind === 'oci_bundle' ? 'oci-bundle' : 'image'}.tar${compression === 'lz4' ? '.lz4' : ''}`;

async function createBuild(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const { catalog, clock, random } = ctx.services;
  const raw = await ctx.body();
  const taken = new Set((await catalog.listBuilds(game.id)).map((b) => b.imageTag));
  const { value: body, problems } = collect(raw, buildBody);
  assertValid([...displayNameProblems(field(raw, 'display_name')), ...imageTagProblems(field(raw, 'image_tag'), taken), ...problems]);
  if (body === undefined || typeof body.display_name !== 'string') return fail('API_BAD_BODY', { reason: 'body' });
  if (body.image_file.content_length >= MAX_BUILD_BYTES) fail('UPLOAD_TOO_LARGE', { max: MAX_BUILD_BYTES });
  const kind = body.kind ?? 'docker_image';
  const compression = body.compression ?? 'none';
  const multipart = body.multipart_upload === true;
  const prepared = unwrap(await uploadsOf(ctx.services).prepare({
    gameId: game.id,
    kind: 'build',
    files: [{
      path: buildFileName(kind, compression),
      contentLength: body.image_file.content_length,
      ...(body.image_file.content_type === undefined ? {} : { contentType: body.image_file.content_type }),
    }],
    multipart,
  }));
  const build: BuildRecord = {
    id: random.uuid(), gameId: game.id, uploadId: prepared.upload.id, displayName: body.display_name,
    imageTag: body.image_tag, kind, compression, createdAt: clock.now(),
  };
  const created = await catalog.createBuild(build);
  if (!created.ok) fail('UPLOAD_INVALID', { reason: 'the build could not be recorded' });
  const presigned = prepared.presigned.map(renderPresigned);
  return {
    build_id: build.id,
    upload_id: prepared.upload.id,
    ...(multipart ? { image_presigned_requests: presigned } : presigned[0] === undefined ? {} : { image_presigned_request: presigned[0] }),
  };
}

async function createSite(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const raw = await ctx.body();
  const { value: body, problems } = collect(raw, siteBody);
  assertValid([...displayNameProblems(field(raw, 'display_name')), ...problems]);
  if (body === undefined || typeof body.display_name !== 'string') return fail('API_BAD_BODY', { reason: 'body' });
  const total = body.files.reduce((n, f) => n + f.content_length, 0);
  if (total >= MAX_SITE_BYTES) fail('UPLOAD_TOO_LARGE', { max: MAX_SITE_BYTES });
  const prepared = unwrap(await uploadsOf(ctx.services).prepare({
    gameId: game.id,
    kind: 'cdn',
    files: body.files.map((f) => ({ path: f.path, contentLength: f.content_length, ...(f.content_type === undefined ? {} : { contentType: f.content_type }) })),
  }));
  const { catalog, clock, random } = ctx.services;
  const site: CdnSiteRecord = { id: random.uuid(), gameId: game.id, uploadId: prepared.upload.id, displayName: body.display_name, createdAt: clock.now() };
  const created = await catalog.createCdnSite(site);
  if (!created.ok) fail('UPLOAD_INVALID', { reason: 'the site could not be recorded' });
  return { site_id: site.id, upload_id: prepared.upload.id, presigned_requests: prepared.presigned.map(renderPresigned) };
}

const uploadSummary = (upload: UploadRecord | undefined): { content_length: number; complete: boolean } => ({
  content_length: upload?.files.reduce((n, f) => n + f.contentLength, 0) ?? 0,
  complete: upload?.completedAt !== undefined,
});

async function listBuilds(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const { catalog } = ctx.services;
  const builds = [...(await catalog.listBuilds(game.id))].reverse();
  const out = [];
  for (const b of builds) {
    out.push({ build_id: b.id, upload_id: b.uploadId, display_name: b.displayName, create_ts: ts(b.createdAt), ...uploadSummary(await catalog.getUpload(b.uploadId)) });
  }
  return { builds: out };
}

async function listSites(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const { catalog } = ctx.services;
  const sites = [...(await catalog.listCdnSites(game.id))].reverse();
  const out = [];
  for (const s of sites) {
    out.push({ site_id: s.id, upload_id: s.uploadId, display_name: s.displayName, create_ts: ts(s.createdAt), ...uploadSummary(await catalog.getUpload(s.uploadId)) });
  }
  return { sites: out };
}

/** `POST /cloud/uploads/{id}/complete`: a cloud token completes only its own game's uploads (Rivet checked no ownership). */
async function completeUpload(ctx: Ctx): Promise<unknown> {
  const agent = await requireAgent(ctx);
  if (agent.kind !== 'admin' && agent.kind !== 'cloud') fail('CLAIMS_MISSING_ENTITLEMENT', { entitlement: 'GameCloud' });
  await ctx.body();
  const uploads = ctx.services.uploads ?? fail('UPLOAD_NOT_FOUND');
  unwrap(await uploads.complete(param(ctx, 'upload_id'), agent.kind === 'cloud' ? agent.gameId : undefined));
  return {};
}

/** The presigned PUT: the signature in the URL is the authorisation; the body streams to the uploads service. */
async function putObject(ctx: Ctx): Promise<unknown> {
  const uploads = ctx.services.uploads ?? fail('UPLOAD_NOT_FOUND');
  const length = ctx.request.header('content-length');
  const declared = length !== null && /^\d{1,16}$/.test(length) ? Number(length) : undefined;
  unwrap(await uploads.put(ctx.url, ctx.request.stream(), declared));
  return {};
}

export function registerUploads(router: Router<Handler>): void {
  router
    .add('POST', '/cloud/games/{game_id:uuid}/builds', createBuild)
    .add('GET', '/cloud/games/{game_id:uuid}/builds', listBuilds)
    .add('POST', '/cloud/games/{game_id:uuid}/cdn/sites', createSite)
    .add('GET', '/cloud/games/{game_id:uuid}/cdn/sites', listSites)
    .add('POST', '/cloud/uploads/{upload_id:uuid}/complete', completeUpload)
    .add('PUT', '/uploads/{key*}', putObject);
}
