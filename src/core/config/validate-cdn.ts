/** Validation of `config.cdn` (wire.md §2.1), with Rivet's problem names. */
import type { CdnConfig, CdnMiddleware, CdnRoute, Problem, ValidationContext } from './types.js';
import { LIMITS } from './defaults.js';
import { problem, type Path } from './path.js';
import { globKey } from './validate-glob.js';
import { isHeaderName, isHeaderValue, lengthProblem } from './validate-text.js';

function validateHeaders(headers: NonNullable<CdnMiddleware['kind']['customHeaders']>['headers'], at: Path, out: Problem[]): void {
  if (headers.length > LIMITS.customHeaders) out.push(problem(at, 'headers-meta', 'too-many'));
  headers.forEach((header, i) => {
    const base = [...at, 'headers', String(i)];
    const nameLength = lengthProblem(header.name, 1, LIMITS.cdnHeaderNameBytes);
    if (nameLength === 'too-short' || (nameLength === undefined && !isHeaderName(header.name))) out.push(problem(base, 'name', 'invalid'));
    if (nameLength === 'too-long') out.push(problem(base, 'name', 'too-long'));
    if (lengthProblem(header.value, 0, LIMITS.cdnHeaderValueBytes) === 'too-long') out.push(problem(base, 'value', 'too-long'));
    else if (!isHeaderValue(header.value)) out.push(problem(base, 'value', 'invalid'));
  });
}

function validateRoute(route: CdnRoute, at: Path, out: Problem[]): void {
  if (route.priority > LIMITS.routePriority) out.push(problem(at, 'priority', 'too-high'));
  if (route.middlewares.length > LIMITS.routeMiddlewares) out.push(problem(at, 'middlewares-meta', 'too-many'));
  let customHeaders = 0;
  route.middlewares.forEach((middleware, j) => {
    const headers = middleware.kind.customHeaders;
    if (headers === undefined) return;
    const base = [...at, 'middlewares', String(j)];
    customHeaders += 1;
    if (customHeaders > 1) out.push(problem(base, 'not-unique'));
    validateHeaders(headers.headers, [...base, 'custom-headers'], out);
  });
}

function validateSite(cdn: CdnConfig, ctx: ValidationContext, out: Problem[]): void {
  if (cdn.siteId === undefined) {
    out.push(problem(['config', 'cdn'], 'no-site-id'));
    return;
  }
  const state = ctx.site?.(cdn.siteId);
  if (state === 'missing') out.push(problem(['config', 'cdn', 'site-id'], 'not-found'));
  if (state === 'incomplete') out.push(problem(['config', 'cdn', 'site-id'], 'upload-incomplete'));
}

/**
 * Validates the CDN block: `site_id` required (and known/complete when `ctx.site` is given), at
 * most 32 routes, each glob valid and unique, priority ≤ 100, at most 32 middlewares with at most
 * one custom-headers middleware, at most 32 headers, names 1–512 bytes (and RFC 7230 tokens, a
 * Tavern addition), values ≤ 1024 bytes (and free of control characters, Tavern).
 *
 * @example
 * const out: Problem[] = []; validateCdn({ routes: [] }, { regions: new Set() }, out);
 * // out: [{ path: ['config', 'cdn', 'no-site-id'] }]
 */
export function validateCdn(cdn: CdnConfig | undefined, ctx: ValidationContext, out: Problem[]): void {
  if (cdn === undefined) return;
  validateSite(cdn, ctx, out);
  const routes = cdn.routes ?? [];
  if (routes.length > LIMITS.cdnRoutes) out.push(problem(['config', 'cdn', 'routes-meta'], 'too-many'));
  const globs = new Set<string>();
  routes.forEach((route, i) => {
    const at = ['config', 'cdn', 'routes', String(i)];
    const key = globKey(route.glob);
    if (key === undefined) out.push(problem(at, 'glob', 'invalid'));
    else if (globs.has(key)) out.push(problem(at, 'glob', 'not-unique'));
    else globs.add(key);
    validateRoute(route, at, out);
  });
}
