/**
 * `addNamespaceDomain` (wire.md §2.7) and its removal; the rules are the domains service's.
 */
import { addDomain, removeDomain } from '../../services/domains.js';
import { requireNamespace } from '../auth.js';
import { param, type Ctx, type Handler } from '../context.js';
import { unwrap } from '../errors.js';
import type { Router } from '../router.js';
import { object, parse, req, str } from '../validate.js';

async function add(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const { domain } = parse(await ctx.body(), object({ domain: req(str) }));
  unwrap(await addDomain(ctx.services, ns, domain));
  return {};
}

async function remove(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  await removeDomain(ctx.services, ns.id, param(ctx, 'domain'));
  return {};
}

const NS = '/cloud/games/{game_id:uuid}/namespaces/{namespace_id:uuid}';

export function registerDomains(router: Router<Handler>): void {
  router.add('POST', `${NS}/domains`, add).add('DELETE', `${NS}/domains/{domain}`, remove);
}
