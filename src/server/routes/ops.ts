/**
 * The operator's endpoints: `GET /health` (open: whether the server, its runtime and its proxy
 * run) and `GET /metrics` (Prometheus text: the game proxy's counters per route, which name every
 * lobby, its region and its ports' labels), for the metrics token or the admin token only.
 */
import { requireMetricsReader } from '../auth.js';
import type { Ctx } from '../context.js';
import { fail } from '../errors.js';
import type { Router } from '../router.js';
import type { Handler } from '../context.js';
import { RawAnswer } from './dashboard.js';

async function metrics(ctx: Ctx): Promise<RawAnswer> {
  const read = ctx.services.metrics;
  if (read === undefined) return fail('API_NOT_FOUND', { method: 'GET', path: '/metrics' });
  await requireMetricsReader(ctx);
  return new RawAnswer({ status: 200, headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }, body: await read() });
}

/**
 * @example
 * registerOps(router); // GET /health, GET /metrics
 */
export function registerOps(router: Router<Handler>): void {
  router
    .add('GET', '/health', (ctx) => Promise.resolve({ status: 'ok', ...ctx.services.health() }))
    .add('GET', '/metrics', metrics);
}
