/**
 * CORS (wire.md §1.6): the matchmaker (and presigned uploads) allow any origin, echoed back;
 * `/cloud` allows only the configured hub origins, and answers any other browser Origin with
 * `API_CORS_ORIGIN_NOT_ALLOWED`. Requests without Origin (CLI, servers) are unaffected.
 *
 * Unlike Rivet, no answer says `Access-Control-Allow-Credentials: true`: authentication is a bearer
 * token only (no cookie is ever read), so a credentialed request would gain a page nothing but the
 * ambient cookies and client certificates of whatever else shares the host. The 23.2 client never
 * asks for credentials (axios with `withCredentials` unset: XHR sends none), so browser games work.
 */
import { matchError, type MatchError } from '../core/errors.js';

export const EXPOSED_HEADERS = 'rvt-ray-id';

export type CorsDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'allow'; readonly headers: Record<string, string> }
  | { readonly kind: 'deny'; readonly error: MatchError };

/** A request without Origin: nothing to add (one shared value: most requests). */
const NONE: CorsDecision = Object.freeze({ kind: 'none' });

/**
 * @example
 * corsFor('/matchmaker/lobbies/find', 'https://game.example', undefined) // { kind: 'allow', headers: {...} }
 */
export function corsFor(path: string, origin: string | null, hubOrigins: RegExp | undefined): CorsDecision {
  if (origin === null) return NONE;
  const cloud = path === '/cloud' || path.startsWith('/cloud/');
  if (cloud && (hubOrigins === undefined || !hubOrigins.test(origin))) {
    return { kind: 'deny', error: matchError('API_CORS_ORIGIN_NOT_ALLOWED', { origin: origin.slice(0, 256) }) };
  }
  return {
    kind: 'allow',
    headers: {
      'access-control-allow-origin': origin,
      'access-control-expose-headers': EXPOSED_HEADERS,
      vary: 'Origin',
    },
  };
}

/** The extra headers of a preflight answer. */
export const preflightHeaders = (methods: readonly string[]): Record<string, string> => ({
  'access-control-allow-methods': [...new Set([...methods, 'OPTIONS'])].join(', '),
  'access-control-allow-headers': 'Content-Type, Authorization',
  'access-control-max-age': '3600',
});
