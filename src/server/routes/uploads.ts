/**
 * Builds and CDN sites (wire.md §2.8, §2.9, §6): create (the builds service records them and has
 * the uploads service prepare presigned PUTs), list, complete an upload, and the presigned PUT
 * itself (streamed, not JSON).
 */
import type { BuildRecord, CdnSiteRecord } from '../../io/catalog.js';
import { createBuild, createSite, imageTagProblems, listBuilds, listSites, type Uploaded } from '../../services/builds.js';
import type { PresignedRequest } from '../../services/uploads.js';
import { requireAgent, requireGame } from '../auth.js';
import { param, ts, type Ctx, type Handler } from '../context.js';
import { fail, unwrap } from '../errors.js';
import type { Router } from '../router.js';
import { anyJson, arrayOf, bool, collect, object, oneOf, opt, req, str, u64, type Problem } from '../validate.js';
import { assertValid, displayNameProblems, field } from './names.js';

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

const renderPresigned = (p: PresignedRequest): unknown => ({ path: p.path, url: p.url, byte_offset: p.byteOffset, content_length: p.contentLength });

const TAG_PART = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;

/** `image-tag.invalid` unless the tag is `name:version` (uniqueness is the builds service's). */
function imageTagFormat(tag: unknown): Problem[] {
  if (typeof tag !== 'string') return [];
  const [name, version, ...rest] = tag.split(':');
  return rest.length > 0 || name === undefined || version === undefined || !TAG_PART.test(name) || !TAG_PART.test(version) ? [{ path: ['image-tag', 'invalid'] }] : [];
}

/** A file's optional content type, as the services take it. */
const contentTypeOf = (f: { content_type?: string }): { contentType?: string } => (f.content_type === undefined ? {} : { contentType: f.content_type });

async function postBuild(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const raw = await ctx.body();
  const { value: body, problems } = collect(raw, buildBody);
  const displayName = displayNameProblems(field(raw, 'display_name'));
  const tag = field(raw, 'image_tag');
  const tagFormat = imageTagFormat(tag);
  if (displayName.length + tagFormat.length + problems.length > 0) {
    // Every problem at once, a taken tag (the builds service's) in field order.
    const taken = typeof tag === 'string' && tagFormat.length === 0 ? await imageTagProblems(ctx.services, game.id, tag) : [];
    assertValid([...displayName, ...tagFormat, ...taken, ...problems]);
  }
  if (body === undefined || typeof body.display_name !== 'string') return fail('API_BAD_BODY', { reason: 'body' });
  const multipart = body.multipart_upload === true;
  const { record, upload, presigned } = unwrap(await createBuild(ctx.services, game.id, {
    displayName: body.display_name,
    imageTag: body.image_tag,
    kind: body.kind ?? 'docker_image',
    compression: body.compression ?? 'none',
    multipart,
    file: { contentLength: body.image_file.content_length, ...contentTypeOf(body.image_file) },
  }));
  const rendered = presigned.map(renderPresigned);
  return {
    build_id: record.id,
    upload_id: upload.id,
    ...(multipart ? { image_presigned_requests: rendered } : rendered[0] === undefined ? {} : { image_presigned_request: rendered[0] }),
  };
}

async function postSite(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const raw = await ctx.body();
  const { value: body, problems } = collect(raw, siteBody);
  assertValid([...displayNameProblems(field(raw, 'display_name')), ...problems]);
  if (body === undefined || typeof body.display_name !== 'string') return fail('API_BAD_BODY', { reason: 'body' });
  const { record, upload, presigned } = unwrap(await createSite(ctx.services, game.id, {
    displayName: body.display_name,
    files: body.files.map((f) => ({ path: f.path, contentLength: f.content_length, ...contentTypeOf(f) })),
  }));
  return { site_id: record.id, upload_id: upload.id, presigned_requests: presigned.map(renderPresigned) };
}

/** A listed build's or site's fields after its id. */
const renderUploaded = ({ record, contentLength, complete }: Uploaded<BuildRecord | CdnSiteRecord>): Record<string, unknown> => ({
  upload_id: record.uploadId, display_name: record.displayName, create_ts: ts(record.createdAt), content_length: contentLength, complete,
});

async function getBuilds(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  return { builds: (await listBuilds(ctx.services, game.id)).map((b) => ({ build_id: b.record.id, ...renderUploaded(b) })) };
}

async function getSites(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  return { sites: (await listSites(ctx.services, game.id)).map((s) => ({ site_id: s.record.id, ...renderUploaded(s) })) };
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
    .add('POST', '/cloud/games/{game_id:uuid}/builds', postBuild)
    .add('GET', '/cloud/games/{game_id:uuid}/builds', getBuilds)
    .add('POST', '/cloud/games/{game_id:uuid}/cdn/sites', postSite)
    .add('GET', '/cloud/games/{game_id:uuid}/cdn/sites', getSites)
    .add('POST', '/cloud/uploads/{upload_id:uuid}/complete', completeUpload)
    .add('PUT', '/uploads/{key*}', putObject);
}
