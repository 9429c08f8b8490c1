/**
 * A small path router. Patterns are `/`-separated segments: literals, `{name}` (any non-empty
 * segment), `{name:uuid}` (a UUID; anything else does not match, so it is `API_NOT_FOUND` as in
 * Rivet) and a final `{name*}` (the rest of the path). A known path with the wrong method is
 * `API_METHOD_NOT_ALLOWED`.
 *
 * A path is routed as sent: a literal matches only itself, unescaped (`/%63loud` is not `/cloud`);
 * a parameter is percent-decoded. A segment that is or decodes to `.` or `..`, or decodes to
 * anything holding `/` or `\`, matches no route: it is never read as another path (404).
 */
import { isUuid } from './validate.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

type Segment =
  | { readonly kind: 'literal'; readonly value: string }
  | { readonly kind: 'param'; readonly name: string; readonly uuid: boolean }
  | { readonly kind: 'rest'; readonly name: string };

export interface Route<H> {
  readonly method: Method;
  readonly pattern: string;
  readonly handler: H;
}

interface Compiled<H> extends Route<H> {
  readonly segments: readonly Segment[];
}

export type Match<H> =
  | { readonly kind: 'found'; readonly handler: H; readonly params: Readonly<Record<string, string>>; readonly route: Route<H> }
  | { readonly kind: 'method-not-allowed' }
  | { readonly kind: 'not-found' };

const compile = (pattern: string): Segment[] =>
  pattern
    .split('/')
    .filter((s) => s !== '')
    .map((s): Segment => {
      const m = /^\{(\w+)(:uuid|\*)?\}$/.exec(s);
      if (m === null) return { kind: 'literal', value: s };
      const name = m[1] as string;
      if (m[2] === '*') return { kind: 'rest', name };
      return { kind: 'param', name, uuid: m[2] === ':uuid' };
    });

const decode = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
};

/**
 * The path's segments, raw (literals and a rest parameter match them as sent) and percent-decoded
 * (undefined: a malformed escape, or {@link PATHLIKE}).
 */
interface Parts {
  readonly raw: readonly string[];
  readonly decoded: readonly (string | undefined)[];
}

/** A decoded segment that could be read as another path: a dot segment, or one holding a separator. */
const PATHLIKE = /^\.\.?$|[/\\]/;

/**
 * The segments of a path, as sent: the leading `/` and one trailing `/` are dropped, and nothing
 * else is (an empty segment, `//x` or `/a//b`, matches no route: it is never read as another path).
 */
const partsOf = (path: string): Parts => {
  const raw = path.split('/');
  raw.shift();
  if (raw.length > 0 && raw[raw.length - 1] === '') raw.pop();
  const decoded = raw.map((s) => (s.includes('%') ? decode(s) : s));
  return { raw, decoded: decoded.map((s) => (s === undefined || PATHLIKE.test(s) ? undefined : s)) };
};

function matchSegments(segments: readonly Segment[], { raw: parts, decoded }: Parts): Record<string, string> | undefined {
  if (segments.length > parts.length || (segments.length < parts.length && segments[segments.length - 1]?.kind !== 'rest')) return undefined;
  // Made once a segment binds: most routes fail on a literal first.
  let params: Record<string, string> | undefined;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as Segment;
    if (seg.kind === 'rest') {
      if (i >= parts.length || parts.includes('', i) || decoded.includes(undefined, i)) return undefined;
      params ??= {};
      params[seg.name] = parts.slice(i).join('/');
      return params;
    }
    const part = decoded[i];
    if (part === undefined || part === '') return undefined;
    if (seg.kind === 'literal') {
      if (parts[i] !== seg.value) return undefined;
    } else {
      if (seg.uuid && !isUuid(part)) return undefined;
      params ??= {};
      params[seg.name] = seg.uuid ? part.toLowerCase() : part;
    }
  }
  return parts.length === segments.length ? (params ?? {}) : undefined;
}

/**
 * @example
 * const router = new Router<Handler>().add('GET', '/cloud/games/{game_id:uuid}', getGame);
 * router.match('GET', '/cloud/games/6f1d…'); // { kind: 'found', params: { game_id: '6f1d…' }, … }
 */
export class Router<H> {
  readonly #routes: Compiled<H>[] = [];
  /**
   * Matches of routes without parameters, by path then method: such a route matches one path only
   * (literals match as sent), so this holds at most a few entries per route, and a hot path (a
   * find) is routed by one lookup instead of trying the routes in turn.
   */
  readonly #fixed = new Map<string, Map<string, Match<H>>>();

  add(method: Method, pattern: string, handler: H): this {
    this.#routes.push({ method, pattern, handler, segments: compile(pattern) });
    this.#fixed.clear();
    return this;
  }

  match(method: string, path: string): Match<H> {
    const known = this.#fixed.get(path)?.get(method);
    if (known !== undefined) return known;
    const parts = partsOf(path);
    let pathKnown = false;
    for (const route of this.#routes) {
      const params = matchSegments(route.segments, parts);
      if (params === undefined) continue;
      if (route.method === method) {
        const found: Match<H> = { kind: 'found', handler: route.handler, params, route };
        if (route.segments.every((s) => s.kind === 'literal')) this.#remember(path, method, found);
        return found;
      }
      pathKnown = true;
    }
    return pathKnown ? { kind: 'method-not-allowed' } : { kind: 'not-found' };
  }

  /**
   * A router of the routes `keep` accepts (in their order): a listener's share of the API.
   *
   * @example
   * const lobbies = router.only((r) => r.pattern.startsWith('/matchmaker/'));
   */
  only(keep: (route: Route<H>) => boolean): Router<H> {
    const kept = new Router<H>();
    for (const route of this.#routes) if (keep(route)) kept.#routes.push(route);
    return kept;
  }

  #remember(path: string, method: string, found: Match<H>): void {
    let byMethod = this.#fixed.get(path);
    if (byMethod === undefined) this.#fixed.set(path, (byMethod = new Map<string, Match<H>>()));
    byMethod.set(method, Object.freeze({ ...found, params: Object.freeze({}) }));
  }

  /** The methods registered for a path (CORS preflight). */
  methods(path: string): Method[] {
    const parts = partsOf(path);
    return this.#routes.filter((r) => matchSegments(r.segments, parts) !== undefined).map((r) => r.method);
  }
}

/** Services reachable through the deprecated `https://<service>.api.<domain>/v1/<rest>` form. */
const SERVICES = new Set(['cloud', 'matchmaker', 'identity', 'group', 'kv', 'module', 'auth', 'job', 'portal', 'status']);

/**
 * The canonical path (`/cloud/…`, `/matchmaker/…`) of a request, accepting both URL styles of
 * wire.md §1.1: a request to host `matchmaker.api.example.com` with path `/v1/lobbies/find` is
 * `/matchmaker/lobbies/find` (what Traefik's strip-`/v1`-add-`/<service>` did).
 *
 * @example
 * canonicalPath('/v1/lobbies/find', () => 'matchmaker.api.example.com'); // '/matchmaker/lobbies/find'
 * canonicalPath('/cloud/bootstrap', () => 'api.example.com'); // '/cloud/bootstrap'
 */
export function canonicalPath(path: string, host: () => string | null): string {
  if (path !== '/v1' && !path.startsWith('/v1/')) return path;
  const labels = host()?.toLowerCase().replace(/:\d+$/, '').split('.');
  const service = labels?.[0];
  if (labels !== undefined && labels[1] === 'api' && labels.length >= 3 && service !== undefined && SERVICES.has(service)) return `/${service}${path.slice(3)}`;
  return path;
}
