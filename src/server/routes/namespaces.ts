/**
 * Namespaces: create, validate, get (wire.md §2.2), set version (publishes to the matchmaker),
 * matchmaker limits, domain public auth and CDN auth type.
 */
import { createNamespace, namespaceProblems, removeCdnAuthUser, setCdnAuthUser, setCdnSettings, setMatchmakerLimits, setNamespaceVersion } from '../../services/namespaces.js';
import { requireGame, requireNamespace } from '../auth.js';
import { param, ts, type Ctx, type Handler } from '../context.js';
import { fail, unwrap } from '../errors.js';
import { renderNamespace } from '../render.js';
import type { Router } from '../router.js';
import { anyJson, bool, collect, int, object, oneOf, opt, parse, req, str, uuid } from '../validate.js';
import { assertValid, displayNameProblems, field, nameIdProblems, wellFormedNameId } from './names.js';

const createBody = object({ display_name: opt(anyJson), name_id: opt(anyJson), version_id: req(uuid) });

/** The name id to check for uniqueness, if the body's is well formed. */
const nameIdToCheck = (raw: unknown): { nameId?: string } => {
  const nameId = wellFormedNameId(field(raw, 'name_id'));
  return nameId === undefined ? {} : { nameId };
};

async function create(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const raw = await ctx.body();
  const { value: body, problems } = collect(raw, createBody);
  const displayName = displayNameProblems(field(raw, 'display_name'));
  const nameId = nameIdProblems(field(raw, 'name_id'));
  if (displayName.length + nameId.length + problems.length > 0) {
    // Every problem at once, the domain's (name id taken, version not the game's) in field order.
    const domain = await namespaceProblems(ctx.services, game.id, { ...nameIdToCheck(raw), ...(body === undefined ? {} : { versionId: body.version_id }) });
    assertValid([...displayName, ...nameId, ...domain.nameId, ...problems, ...domain.versionId]);
  }
  if (body === undefined || typeof body.display_name !== 'string' || typeof body.name_id !== 'string') return fail('API_BAD_BODY', { reason: 'body' });
  const ns = unwrap(await createNamespace(ctx.services, game.id, { nameId: body.name_id, displayName: body.display_name, versionId: body.version_id }));
  return { namespace_id: ns.id };
}

async function validate(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const raw = await ctx.body();
  const domain = await namespaceProblems(ctx.services, game.id, nameIdToCheck(raw));
  return { errors: [...displayNameProblems(field(raw, 'display_name')), ...nameIdProblems(field(raw, 'name_id')), ...domain.nameId] };
}

async function get(ctx: Ctx): Promise<unknown> {
  const { game, ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  return { namespace: renderNamespace(game, ns, ctx.services.settings) };
}

const setVersionBody = object({ version_id: req(uuid) });

/** `PUT .../namespaces/{ns}/version`: deploy a version (the matchmaker makes it current and reconciles idle lobbies). */
async function setVersion(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const body = parse(await ctx.body(), setVersionBody);
  unwrap(await setNamespaceVersion(ctx.services, ns, body.version_id));
  return {};
}

/** The current deployment only (Tavern keeps no deploy history yet). */
async function versionHistory(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  return { versions: [{ namespace_id: ns.id, version_id: ns.versionId, deploy_ts: ts(ns.createdAt) }] };
}

const mmConfigBody = object({ lobby_count_max: req(int(1, 32_768)), max_players: req(int(1, 256)) });

async function updateMmConfig(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const body = parse(await ctx.body(), mmConfigBody);
  unwrap(await setMatchmakerLimits(ctx.services, ns, { lobbyCountMax: body.lobby_count_max, maxPlayersPerClient: body.max_players }));
  return {};
}

async function validateMmConfig(ctx: Ctx): Promise<unknown> {
  await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  return { errors: collect(await ctx.body(), mmConfigBody).problems };
}

async function setDomainPublicAuth(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const body = parse(await ctx.body(), object({ enabled: req(bool) }));
  await setCdnSettings(ctx.services, ns, { enableDomainPublicAuth: body.enabled });
  return {};
}

async function setCdnAuth(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const body = parse(await ctx.body(), object({ auth_type: req(oneOf(['none', 'basic'] as const)) }));
  await setCdnSettings(ctx.services, ns, { authType: body.auth_type });
  return {};
}

/** `POST .../auth-user {user, password}`: `password` is a bcrypt hash (the CDN never sees a plain password). */
async function addAuthUser(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const body = parse(await ctx.body(), object({ user: req(str), password: req(str) }));
  unwrap(await setCdnAuthUser(ctx.services, ns, body.user, body.password));
  return {};
}

async function deleteAuthUser(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  await removeCdnAuthUser(ctx.services, ns, param(ctx, 'user'));
  return {};
}

const NS = '/cloud/games/{game_id:uuid}/namespaces';

export function registerNamespaces(router: Router<Handler>): void {
  router
    .add('POST', NS, create)
    .add('POST', `${NS}/validate`, validate)
    .add('GET', `${NS}/{namespace_id:uuid}`, get)
    .add('PUT', `${NS}/{namespace_id:uuid}/version`, setVersion)
    .add('GET', `${NS}/{namespace_id:uuid}/version-history`, versionHistory)
    .add('POST', `${NS}/{namespace_id:uuid}/mm-config`, updateMmConfig)
    .add('POST', `${NS}/{namespace_id:uuid}/mm-config/validate`, validateMmConfig)
    .add('PUT', `${NS}/{namespace_id:uuid}/domain-public-auth`, setDomainPublicAuth)
    .add('PUT', `${NS}/{namespace_id:uuid}/cdn-auth`, setCdnAuth)
    .add('POST', `${NS}/{namespace_id:uuid}/auth-user`, addAuthUser)
    .add('DELETE', `${NS}/{namespace_id:uuid}/auth-user/{user}`, deleteAuthUser);
}
