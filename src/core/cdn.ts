/**
 * The CDN's request rules (wire.md §6.3), pure: which host names a game's namespace, which file a
 * request path names, which version routes apply, and how conditional, range and encoding
 * headers are read. The HTTP edge (`src/server/cdn`) does the I/O.
 */
import { globRegExp } from './config/validate-glob.js';
import type { CdnRoute } from './config/types.js';

/** What a CDN host names: a game's namespace by name ids, or a custom domain. */
export type CdnHost =
  | { readonly kind: 'name'; readonly game: string; readonly namespace: string }
  | { readonly kind: 'domain'; readonly domain: string };

const NAME_ID = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * Reads a `Host` header: `<game>.<cdn-domain>` is the game's `prod` namespace,
 * `<game>--<namespace>.<cdn-domain>` the named one, any other name a custom domain (lowercased,
 * port and a trailing dot dropped). Undefined for no host or a malformed one.
 *
 * @example
 * cdnHost('My-Game--staging.cdn.example:8443', 'cdn.example') // { kind: 'name', game: 'my-game', namespace: 'staging' }
 * cdnHost('play.example.com', 'cdn.example') // { kind: 'domain', domain: 'play.example.com' }
 */
export function cdnHost(header: string | undefined, cdnDomain: string | undefined): CdnHost | undefined {
  if (header === undefined) return undefined;
  const host = header.trim().toLowerCase().replace(/:\d{1,5}$/, '').replace(/\.$/, '');
  if (host === '' || !/^[a-z0-9.-]+$/.test(host)) return undefined;
  const suffix = cdnDomain === undefined ? undefined : `.${cdnDomain.toLowerCase()}`;
  if (suffix === undefined || !host.endsWith(suffix)) return { kind: 'domain', domain: host };
  const label = host.slice(0, -suffix.length);
  const split = label.indexOf('--');
  const game = split < 0 ? label : label.slice(0, split);
  const namespace = split < 0 ? 'prod' : label.slice(split + 2);
  return NAME_ID.test(game) && NAME_ID.test(namespace) ? { kind: 'name', game, namespace } : undefined;
}

/** Whether `s` has a C0 control character (NUL included) or DEL. */
const hasControl = (s: string): boolean => {
  for (let i = 0; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
};

/** A request path, decoded: the file it names (relative, `index.html` added after a `/`) and whether it is an HTML request. */
export interface CdnPath {
  /** The decoded path with its leading `/`, as routes match it. */
  readonly path: string;
  /** The site file: no leading `/`. */
  readonly file: string;
  /** `/`, a path ending in `/` or `.html`: served with `no-cache, no-store` and blank framing headers. */
  readonly html: boolean;
}

/** An encoded slash or backslash (`%2f`, `%5c`): such a path names no file, since only a `/` sent as such separates segments. */
const ENCODED_SEPARATOR = /%(?:2f|5c)/i;

/**
 * The file a raw request target's path names, or undefined when it cannot name one: a malformed
 * escape, an encoded separator (`%2f`, `%5c`: only a `/` sent as such separates segments, so
 * `/sub%2fb.txt` never names `sub/b.txt`), a NUL, a backslash, an empty, `.` or `..` segment
 * after decoding (no traversal ever reaches a lookup; the lookup is by exact site path anyway).
 *
 * @example
 * cdnPath('/assets/app%20v2.js?x=1') // { path: '/assets/app v2.js', file: 'assets/app v2.js', html: false }
 * cdnPath('/') // { path: '/', file: 'index.html', html: true }
 * cdnPath('/a/%2e%2e/b') // undefined
 * cdnPath('/sub%2fb.txt') // undefined
 */
export function cdnPath(target: string): CdnPath | undefined {
  const raw = target.split(/[?#]/, 1)[0] ?? '';
  if (!raw.startsWith('/') || ENCODED_SEPARATOR.test(raw)) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  const file = path.endsWith('/') ? `${path.slice(1)}index.html` : path.slice(1);
  if (path.includes('\\') || hasControl(path)) return undefined;
  if (file.split('/').some((s) => s === '' || s === '.' || s === '..')) return undefined;
  return { path, file, html: path.endsWith('/') || path.endsWith('.html') };
}

/** A version route, compiled: its glob's expression, its Traefik priority and its response headers. */
export interface CompiledRoute {
  readonly match: RegExp;
  readonly priority: number;
  readonly headers: readonly (readonly [string, string])[];
}

/** Rivet's Traefik priorities: the site router, the HTML router, and custom routes above the base. */
export const SITE_PRIORITY = 100;
export const HTML_PRIORITY = 150;

/**
 * The version's routes, compiled (an invalid glob, which version validation refuses, is dropped).
 *
 * @example
 * compileRoutes([{ glob: '**\/*.wasm', priority: 0, middlewares: [{ kind: { customHeaders: { headers: [{ name: 'x', value: '1' }] } } }] }])
 */
export function compileRoutes(routes: readonly CdnRoute[]): readonly CompiledRoute[] {
  return routes.flatMap((r) => {
    const match = globRegExp(r.glob);
    if (match === undefined) return [];
    const headers = r.middlewares.flatMap((m) => (m.kind.customHeaders?.headers ?? []).map((h) => [h.name, h.value] as const));
    return [{ match, priority: SITE_PRIORITY + 1 + r.priority, headers }];
  });
}

/**
 * Which router Traefik would pick for the path: the matching custom route of highest priority
 * (the first listed on a tie) if it outranks the site (or, for HTML, the HTML) router. Its
 * headers are added; the HTML headers only when the HTML router won.
 *
 * @example
 * routeFor(compileRoutes(routes), { path: '/game.wasm', file: 'game.wasm', html: false }) // { headers: [...], html: false }
 */
export function routeFor(routes: readonly CompiledRoute[], path: CdnPath): { readonly headers: readonly (readonly [string, string])[]; readonly html: boolean } {
  let best: CompiledRoute | undefined;
  for (const r of routes) if (r.match.test(path.path) && (best === undefined || r.priority > best.priority)) best = r;
  const floor = path.html ? HTML_PRIORITY : SITE_PRIORITY;
  if (best !== undefined && best.priority > floor) return { headers: best.headers, html: false };
  return { headers: [], html: path.html };
}

/** A `Range` header against a size: none (serve it all), one range (inclusive bounds), or unsatisfiable (416). */
export type RangeRequest =
  | { readonly kind: 'all' }
  | { readonly kind: 'part'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' };

/**
 * Reads a single `bytes=` range (`a-b`, `a-`, `-n`). A header that is not a byte range, or lists
 * several, is ignored (RFC 9110 §14.2 lets a server serve the whole representation instead).
 *
 * @example
 * parseRange('bytes=0-9', 100) // { kind: 'part', start: 0, end: 9 }
 * parseRange('bytes=-10', 100) // { kind: 'part', start: 90, end: 99 }
 * parseRange('bytes=100-', 100) // { kind: 'unsatisfiable' }
 */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  const m = header === undefined ? null : /^bytes=(\d{0,16})-(\d{0,16})$/.exec(header.trim());
  if (m === null) return { kind: 'all' };
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return { kind: 'all' };
  if (a === '') {
    const n = Number(b);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (b !== '' && Number(b) < start) return { kind: 'all' };
  return start >= size ? { kind: 'unsatisfiable' } : { kind: 'part', start, end };
}

/**
 * Whether an `If-None-Match` header matches the strong ETag (`*`, or any listed tag compared
 * weakly, as RFC 9110 §13.1.2 asks for this header).
 *
 * @example
 * noneMatch('W/"abc", "def"', '"abc"') // true
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/** The content codings the CDN makes, best first. */
export type Encoding = 'br' | 'gzip';

/**
 * The best coding the client accepts (`q=0` refuses one), or undefined for identity.
 *
 * @example
 * pickEncoding('gzip, deflate, br') // 'br'
 * pickEncoding('br;q=0, gzip') // 'gzip'
 */
export function pickEncoding(header: string | undefined): Encoding | undefined {
  if (header === undefined) return undefined;
  const q = new Map<string, number>();
  for (const part of header.toLowerCase().split(',')) {
    const [name = '', ...params] = part.trim().split(';');
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qp === undefined ? 1 : Number(qp.slice(2));
    q.set(name.trim(), Number.isFinite(value) ? value : 0);
  }
  const weight = (e: Encoding): number => q.get(e) ?? (q.get('*') ?? 0);
  const ranked = (['br', 'gzip'] as const).filter((e) => weight(e) > 0);
  return ranked.sort((a, b) => weight(b) - weight(a))[0];
}
