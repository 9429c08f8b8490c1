/**
 * Namespaces: create, validate, get (wire.md §2.2), set version (publishes to the matchmaker),
 * matchmaker limits, domain public auth and CDN auth type.
 */
import { DEFAULT_NAMESPACE_SETTINGS, type NamespaceSettings } from '../../core/world.js';
import type { NamespaceRecord } from '../../io/catalog.js';
import { publishNamespace } from '../../services/publish.js';
import { requireGame, requireNamespace } from '../auth.js';
import { param, ts, type Ctx, type Handler } from '../context.js';
import { fail } from '../errors.js';
import { renderNamespace } from '../render.js';
import type { Router } from '../router.js';
import { anyJson, bool, collect, int, object, oneOf, opt, parse, req, uuid, type Problem } from '../validate.js';
import { assertValid, displayNameProblems, field, nameIdProblems } from './names.js';

const createBody = object({ display_name: opt(anyJson), name_id: opt(anyJson), version_id: req(uuid) });

async function createNamespace(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const { catalog, clock, random } = ctx.services;
  const raw = await ctx.body();
  const taken = new Set((await catalog.listNamespaces(game.id)).map((n) => n.nameId));
  const { value: body, problems } = collect(raw, createBody);
  const all: Problem[] = [...displayNameProblems(field(raw, 'display_name')), ...nameIdProblems(field(raw, 'name_id'), taken), ...problems];
  if (body !== undefined) {
    const version = await catalog.getVersion(body.version_id);
    if (version === undefined || version.gameId !== game.id) all.push({ path: ['version-id', 'not-found'] });
  }
  assertValid(all);
  if (body === undefined || typeof body.display_name !== 'string' || typeof body.name_id !== 'string') return fail('API_BAD_BODY', { reason: 'body' });
  const ns: NamespaceRecord = {
    id: random.uuid(), gameId: game.id, nameId: body.name_id, displayName: body.display_name, versionId: body.version_id,
    createdAt: clock.now(), settings: DEFAULT_NAMESPACE_SETTINGS,
    cdn: { authType: 'none', authUsers: [], enableDomainPublicAuth: true }, domains: [],
  };
  const created = await catalog.createNamespace(ns);
  if (!created.ok) fail('CLOUD_NAME_ID_TAKEN', { name_id: body.name_id });
  await publishNamespace(ctx.services, created.value);
  return { namespace_id: ns.id };
}

async function validateNamespace(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const raw = await ctx.body();
  const taken = new Set((await ctx.services.catalog.listNamespaces(game.id)).map((n) => n.nameId));
  return { errors: [...displayNameProblems(field(raw, 'display_name')), ...nameIdProblems(field(raw, 'name_id'), taken)] };
}

async function getNamespace(ctx: Ctx): Promise<unknown> {
  const { game, ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  return { namespace: renderNamespace(game, ns, ctx.services.settings) };
}

const setVersionBody = object({ version_id: req(uuid) });

/** `PUT .../namespaces/{ns}/version`: deploy a version (the matchmaker makes it current and reconciles idle lobbies). */
async function setVersion(ctx: Ctx): Promise<unknown> {
  const { game, ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const body = parse(await ctx.body(), setVersionBody);
  const { catalog } = ctx.services;
  const version = await catalog.getVersion(body.version_id);
  if (version === undefined || version.gameId !== game.id) fail('VERSION_NOT_FOUND');
  const updated = await catalog.updateNamespace(ns.id, { versionId: version.id });
  if (updated === undefined) fail('NAMESPACE_NOT_FOUND');
  await publishNamespace(ctx.services, updated);
  return {};
}

/** The current deployment only (Tavern keeps no deploy history yet). */
async function versionHistory(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  return { versions: [{ namespace_id: ns.id, version_id: ns.versionId, deploy_ts: ts(ns.createdAt) }] };
}

const mmConfigBody = object({ lobby_count_max: req(int(1, 32_768)), max_players: req(int(1, 256)) });

const mmSettings = (current: NamespaceSettings, body: { lobby_count_max: number; max_players: number }): NamespaceSettings => ({
  ...current,
  lobbyCountMax: body.lobby_count_max,
  maxPlayersPerClient: body.max_players,
});

async function updateMmConfig(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const body = parse(await ctx.body(), mmConfigBody);
  const settings = mmSettings(ns.settings, body);
  const updated = await ctx.services.catalog.updateNamespace(ns.id, { settings });
  if (updated === undefined) fail('NAMESPACE_NOT_FOUND');
  await ctx.services.matchmaker.addNamespace(ns.id, settings);
  await ctx.services.matchmaker.updateSettings(ns.id, settings);
  return {};
}

async function validateMmConfig(ctx: Ctx): Promise<unknown> {
  await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  return { errors: collect(await ctx.body(), mmConfigBody).problems };
}

async function setDomainPublicAuth(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const body = parse(await ctx.body(), object({ enabled: req(bool) }));
  await ctx.services.catalog.updateNamespace(ns.id, { cdn: { ...ns.cdn, enableDomainPublicAuth: body.enabled } });
  return {};
}

async function setCdnAuth(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const body = parse(await ctx.body(), object({ auth_type: req(oneOf(['none', 'basic'] as const)) }));
  await ctx.services.catalog.updateNamespace(ns.id, { cdn: { ...ns.cdn, authType: body.auth_type } });
  return {};
}

const NS = '/cloud/games/{game_id:uuid}/namespaces';

export function registerNamespaces(router: Router<Handler>): void {
  router
    .add('POST', NS, createNamespace)
    .add('POST', `${NS}/validate`, validateNamespace)
    .add('GET', `${NS}/{namespace_id:uuid}`, getNamespace)
    .add('PUT', `${NS}/{namespace_id:uuid}/version`, setVersion)
    .add('GET', `${NS}/{namespace_id:uuid}/version-history`, versionHistory)
    .add('POST', `${NS}/{namespace_id:uuid}/mm-config`, updateMmConfig)
    .add('POST', `${NS}/{namespace_id:uuid}/mm-config/validate`, validateMmConfig)
    .add('PUT', `${NS}/{namespace_id:uuid}/domain-public-auth`, setDomainPublicAuth)
    .add('PUT', `${NS}/{namespace_id:uuid}/cdn-auth`, setCdnAuth);
}
