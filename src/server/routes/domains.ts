/**
 * `addNamespaceDomain` (wire.md §2.7) and its removal. A domain is lowercase `a-z0-9-.` labels, at
 * most 255 characters, not Tavern's own API, job or CDN domain; at most 10 per namespace; unique
 * across all namespaces.
 */
import { requireNamespace } from '../auth.js';
import { param, type Ctx, type Handler, type Settings } from '../context.js';
import { fail } from '../errors.js';
import type { Router } from '../router.js';
import { object, parse, req, str } from '../validate.js';

export const MAX_DOMAINS = 10;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Why `domain` cannot be added, or undefined. */
export function domainProblem(domain: string, settings: Settings): string | undefined {
  if (domain.length === 0) return 'empty';
  if (domain.length > 255) return 'longer than 255 characters';
  if (!/^[a-z0-9.-]+$/.test(domain)) return 'only lowercase a-z, 0-9, - and . are allowed';
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return 'not a domain name';
  const own = [new URL(settings.publicOrigin).hostname, settings.cdnDomain].filter((d): d is string => d !== undefined);
  if (own.some((d) => domain === d || domain.endsWith(`.${d}`)) || domain === settings.jobDomain) return 'a Tavern domain';
  return undefined;
}

async function addDomain(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const { domain } = parse(await ctx.body(), object({ domain: req(str) }));
  const problem = domainProblem(domain, ctx.services.settings);
  if (problem !== undefined) fail('CDN_INVALID_DOMAIN', { reason: problem });
  if (ns.domains.length >= MAX_DOMAINS) fail('CDN_TOO_MANY_DOMAINS', { max: MAX_DOMAINS });
  const { catalog, clock } = ctx.services;
  const added = await catalog.addDomain(ns.id, { domain, createdAt: clock.now() });
  if (added === undefined) fail('NAMESPACE_NOT_FOUND');
  if (!added.ok) fail('CLOUD_HOSTNAME_TAKEN');
  return {};
}

async function removeDomain(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  await ctx.services.catalog.removeDomain(ns.id, param(ctx, 'domain').toLowerCase());
  return {};
}

const NS = '/cloud/games/{game_id:uuid}/namespaces/{namespace_id:uuid}';

export function registerDomains(router: Router<Handler>): void {
  router.add('POST', `${NS}/domains`, addDomain).add('DELETE', `${NS}/domains/{domain}`, removeDomain);
}
