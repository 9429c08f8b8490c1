/**
 * The deploy preview (a Tavern extension): `POST /cloud/games/{game}/namespaces/{ns}/preview` with a
 * version config as the body (what `createGameVersion` takes as `config`) replays the namespace's
 * recorded demand under its live version and under that config (`src/sim/preview`), and answers
 * both side by side with the change, the notes and the error bound. Query: `since` (a duration,
 * default `7d`: the window, or whatever is recorded when less) and `seed` (default 1). Nothing is
 * created: build and site ids need not exist yet (a deploy previews before it builds).
 */
import { parseVersion, type Problem, type ValidationContext } from '../../core/config/index.js';
import { parseDuration } from '../../core/duration.js';
import { validationError } from '../../core/errors.js';
import { requireNamespace } from '../auth.js';
import { param, type Ctx, type Handler } from '../context.js';
import { fail, failWith } from '../errors.js';
import type { Router } from '../router.js';
import { isRecord } from '../validate.js';

const PATH = '/cloud/games/{game_id:uuid}/namespaces/{namespace_id:uuid}/preview';

/** The config's problems as the version would meet them at publish, paths from the body (ids of builds and sites not checked). */
function configProblems(ctx: Ctx, body: unknown): readonly Problem[] {
  const s = ctx.services.settings;
  const rules: ValidationContext = {
    regions: new Set(ctx.services.regions.map((r) => r.id)),
    versionDisplayNames: new Set(),
    verificationHostsAllowed: s.egressAllow,
    ...(s.proxyProtocols === undefined ? {} : { proxyProtocols: s.proxyProtocols }),
    ...(s.hostNetworkAllowed === undefined ? {} : { hostNetworkAllowed: s.hostNetworkAllowed }),
    ...(s.protocolRefusals === undefined ? {} : { protocolRefusals: s.protocolRefusals }),
    build: () => 'complete',
    site: () => 'complete',
  };
  const parsed = parseVersion({ display_name: 'preview', config: body }, rules);
  if (parsed.ok) return [];
  // The body is the config: its paths start there.
  return parsed.error.map((p) => ({ ...p, path: p.path[0] === 'config' ? p.path.slice(1) : p.path }));
}

/** Whether a version config runs lobbies (a game's first version, `{}`, does not). */
const hasMatchmaker = (config: unknown): boolean => isRecord(config) && config['matchmaker'] !== undefined && config['matchmaker'] !== null;

const query = (ctx: Ctx, maxWindowMs: number): { sinceMs: number; seed: number } => {
  const since = ctx.url.searchParams.get('since') ?? '7d';
  const sinceMs = parseDuration(since);
  if (sinceMs === undefined || sinceMs <= 0 || sinceMs > maxWindowMs) fail('API_BAD_QUERY', { name: 'since', reason: `expected a duration such as 24h or 7d, at most ${Math.floor(maxWindowMs / 86_400_000)}d` });
  const seed = ctx.url.searchParams.get('seed') ?? '1';
  if (!/^\d{1,10}$/.test(seed) || Number(seed) > 0xffffffff) fail('API_BAD_QUERY', { name: 'seed', reason: 'expected an integer in 0..4294967295' });
  return { sinceMs, seed: Number(seed) };
}

async function preview(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const { demand, simulator } = ctx.services;
  if (demand === undefined || simulator === undefined) fail('API_NOT_FOUND', { method: ctx.request.method, path: ctx.request.path.slice(0, 256) });
  const { sinceMs, seed } = query(ctx, simulator.maxPreviewWindowMs);
  const body = await ctx.body();
  const problems = configProblems(ctx, body);
  if (problems.length > 0) failWith(validationError(problems));
  const live = ns.versionId === undefined ? undefined : await ctx.services.catalog.getVersion(ns.versionId);
  if (live === undefined) fail('VERSION_NOT_FOUND');
  if (!hasMatchmaker(body) && !hasMatchmaker(live.config)) {
    failWith(validationError([{ path: ['matchmaker', 'missing'], message: 'neither the live version nor this config has a matchmaker: there are no lobbies to preview' }]));
  }
  const preview = await simulator.preview({
    store: demand.store,
    namespaceId: ns.id,
    now: ctx.services.clock.now(),
    sinceMs,
    live: live.config,
    next: body,
    regions: ctx.services.regions.map((r) => ({ id: r.id, display_name: r.displayName, ...(r.coords === undefined ? {} : { coords: r.coords }) })),
    lobbyCountMax: ns.settings.lobbyCountMax,
    ...(ctx.services.settings.tierPrices === undefined ? {} : { prices: ctx.services.settings.tierPrices }),
    seed,
  });
  return { preview };
}

export function registerPreview(router: Router<Handler>): void {
  router.add('POST', PATH, preview);
}
