/**
 * The HTTP edge as a function `Incoming → Outgoing` (`incoming.ts`): `handle(Request) → Response`
 * for in-process tests, and `http.ts` bridges node:http to it directly. Lifecycle of a request:
 *
 *   canonical path (both URL styles) → CORS → route (404 `API_NOT_FOUND` / 400
 *   `API_METHOD_NOT_ALLOWED`) → rate limit (429 `API_RATE_LIMIT`, when configured) →
 *   handler: auth → body (≤ 1 MiB JSON) → validate → service →
 *   200 JSON | catalog error → `{code, message, metadata?}` with its status; anything unexpected
 *   → 500 `ERROR` with the ray id (logged). Every response carries `rvt-ray-id`.
 */
import { setMaxListeners } from 'node:events';
import { errorMessage, matchError } from '../core/errors.js';
import { LogBook } from '../services/lobby-logs.js';
import { resolveAgent, type Agent } from './auth.js';
import { MAX_BODY_BYTES, readJsonBody } from './body.js';
import type { Ctx, Handler } from './context.js';
import { corsFor, preflightHeaders } from './cors.js';
import type { Logger } from '../io/log.js';
import type { AppConfig, AppDeps, Services, Settings } from './deps.js';
import { StorageUnavailableError } from '../io/blobs.js';
import { errorResponse, HttpError, json, JsonText, SECURITY_HEADERS } from './errors.js';
import { fromRequest, toResponse, type Incoming, type Outgoing } from './incoming.js';
import { syncNamespaces } from '../services/publish.js';
import { rateLimitGate } from './rate-limit.js';
import { canonicalPath, type Router } from './router.js';
import { RawAnswer } from './routes/dashboard.js';
import { buildRouter, isLobbyRoute } from './routes/table.js';
import { TokenIssuer } from '../services/tokens.js';

export interface App {
  /** Answers one request. Never rejects. */
  respond(request: Incoming): Promise<Outgoing>;
  /** {@link respond} for a WHATWG request; `conn.remoteAddress` is the TCP peer. Never rejects. */
  handle(request: Request, conn?: { readonly remoteAddress?: string }): Promise<Response>;
  /**
   * The app as the lobbies' listener serves it (at the lobby network's gateway, their
   * `RIVET_API_ENDPOINT`): the matchmaker API only (`/matchmaker/…`); any other path is 404
   * `API_NOT_FOUND`, as if it did not exist.
   */
  readonly lobbies: Pick<App, 'respond' | 'handle'>;
  /** Resolves once start-up work is done (signing key, admin token, matchmaker namespaces). */
  ready(): Promise<void>;
  /** The shared services (tests and `main` use the token issuer). */
  readonly services: Services;
  /** Ends pending long polls and seat waits (graceful shutdown). */
  close(): void;
}

const SILENT: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

const settingsOf = (config: AppConfig): Settings => {
  const host = new URL(config.publicOrigin).hostname.replace(/^\[|\]$/g, '');
  return {
    publicOrigin: config.publicOrigin.replace(/\/+$/, ''),
    jobDomain: config.jobDomain ?? host,
    regionHosts: config.regionHosts ?? {},
    ...(config.lobbyAddress === undefined ? {} : { lobbyAddress: config.lobbyAddress }),
    ...(config.proxyPorts === undefined ? {} : { proxyPorts: config.proxyPorts }),
    ...(config.proxyProtocols === undefined ? {} : { proxyProtocols: config.proxyProtocols }),
    ...(config.protocolRefusals === undefined ? {} : { protocolRefusals: config.protocolRefusals }),
    ...(config.cdnDomain === undefined ? {} : { cdnDomain: config.cdnDomain }),
    ...(config.cdnPort === undefined ? {} : { cdnPort: config.cdnPort }),
    ...(config.cdnTls === undefined ? {} : { cdnTls: config.cdnTls }),
    ...(config.cdnTlsPort === undefined ? {} : { cdnTlsPort: config.cdnTlsPort }),
    ...(config.hubOrigins === undefined ? {} : { hubOrigins: config.hubOrigins }),
    trustProxyHeaders: config.trustProxyHeaders ?? true,
    seatWaitMs: config.seatWaitMs ?? 50_000,
    seatPollMs: config.seatPollMs ?? 1_000,
    logWatchMs: config.logWatchMs ?? 40_000,
    logPollMs: config.logPollMs ?? 1_000,
    maxBodyBytes: config.maxBodyBytes ?? MAX_BODY_BYTES,
    listStateBytes: config.listStateBytes ?? MAX_BODY_BYTES,
    egressAllow: config.egressAllow ?? [],
    ...(config.hostNetworkAllowed === undefined ? {} : { hostNetworkAllowed: config.hostNetworkAllowed }),
    ...(config.metricsToken === undefined ? {} : { metricsToken: config.metricsToken }),
    ...(config.tierPrices === undefined ? {} : { tierPrices: config.tierPrices }),
  };
};

const servicesOf = (deps: AppDeps): Services => ({
  catalog: deps.catalog,
  matchmaker: deps.matchmaker,
  clock: deps.clock,
  random: deps.random,
  timers: deps.timers,
  regions: deps.regions,
  ...(deps.uploads === undefined ? {} : { uploads: deps.uploads }),
  tokens: deps.tokens ?? new TokenIssuer({
    catalog: deps.catalog, clock: deps.clock, random: deps.random,
    ...(deps.config.adminToken === undefined ? {} : { adminToken: deps.config.adminToken }),
  }),
  logBook: deps.logBook ?? new LogBook(deps.catalog),
  logger: deps.logger ?? SILENT,
  settings: settingsOf(deps.config),
  health: deps.health ?? (() => ({})),
  ...(deps.metrics === undefined ? {} : { metrics: deps.metrics }),
  ...(deps.nodes === undefined ? {} : { nodes: deps.nodes }),
  ...(deps.demand === undefined ? {} : { demand: deps.demand }),
  ...(deps.stoppedLobbies === undefined ? {} : { stoppedLobbies: deps.stoppedLobbies }),
  ...(deps.history === undefined ? {} : { history: deps.history }),
  ...(deps.simulator === undefined ? {} : { simulator: deps.simulator }),
});

/**
 * Whether a request's `Origin` is the server's own: the origin of its URL (in process), or an
 * http(s) origin whose host is the request's `Host` (over a socket the URL's origin is a fixed
 * placeholder). A browser sends `Origin` on the dashboard's own writes; another site's page has
 * another host there.
 */
const sameOrigin = (origin: string, request: Incoming): boolean => {
  if (origin === request.url.origin) return true;
  const host = request.header('host');
  return host !== null && (origin === `http://${host}` || origin === `https://${host}`);
};

/** The code of an error answer (its JSON body's), for the log. */
const codeOf = (answer: Outgoing): unknown => {
  try {
    return (JSON.parse(answer.body) as { code?: unknown }).code;
  } catch {
    return undefined;
  }
};

/** One info line for a request whose client left before its answer: a client event, no stack. */
const clientGone = (logger: Logger, request: Incoming, path: string, rayId: string, answer: Outgoing): void =>
  logger.info({ rayId, method: request.method, path: path.slice(0, 512), status: answer.status, code: codeOf(answer) }, 'the client went away before its answer');

/** A signal aborted when either source aborts; `unlink` drops the listeners (the app's signal lives long). */
const linkedSignal = (a: AbortSignal, b: AbortSignal): { readonly signal: AbortSignal; unlink(): void } => {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  if (a.aborted || b.aborted) abort();
  a.addEventListener('abort', abort, { once: true });
  b.addEventListener('abort', abort, { once: true });
  return {
    signal: controller.signal,
    unlink: () => {
      a.removeEventListener('abort', abort);
      b.removeEventListener('abort', abort);
    },
  };
};

/**
 * One request's {@link Ctx}: a class, so every request's context has one shape (an object literal
 * with getters and a spread was built slowly and read through a dictionary), with the body, the
 * caller and the abort signal made on first use only.
 */
class RequestCtx implements Ctx {
  #body: Promise<{ readonly value: unknown; readonly empty: boolean }> | undefined;
  #agent: Promise<Agent | undefined> | undefined;
  #linked: ReturnType<typeof linkedSignal> | undefined;

  constructor(
    readonly services: Services,
    readonly request: Incoming,
    readonly params: Readonly<Record<string, string>>,
    readonly rayId: string,
    private readonly closing: AbortSignal,
  ) {}

  get url(): URL {
    return this.request.url;
  }

  get remoteAddress(): string | undefined {
    return this.request.remoteAddress;
  }

  #read(): Promise<{ readonly value: unknown; readonly empty: boolean }> {
    return (this.#body ??= readJsonBody(this.request, this.services.settings.maxBodyBytes));
  }

  async body(): Promise<unknown> {
    return (await this.#read()).value;
  }

  async bodyWasEmpty(): Promise<boolean> {
    return (await this.#read()).empty;
  }

  get signal(): AbortSignal {
    this.#linked ??= linkedSignal(this.request.signal, this.closing);
    return this.#linked.signal;
  }

  agent(): Promise<Agent | undefined> {
    return (this.#agent ??= resolveAgent(this.services.tokens, this.request));
  }

  /** Drops the signal's listeners on the app's long-lived one. */
  done(): void {
    this.#linked?.unlink();
  }
}

/**
 * @example
 * const app = createApp({ catalog, matchmaker, clock, random, timers, regions, config: { publicOrigin } });
 * const res = await app.handle(new Request('http://localhost/cloud/bootstrap'));
 */
export function createApp(deps: AppDeps): App {
  const services = servicesOf(deps);
  const router = buildRouter();
  const lobbyRouter = router.only(isLobbyRoute);
  const closing = new AbortController();
  // Every pending long poll and seat wait listens to it.
  setMaxListeners(0, closing.signal);
  // Start-up work, retried on the next request if it failed (a database that was briefly away).
  let starting: Promise<void> | undefined;
  /** Set once start-up work is done: a request then goes on without waiting a turn for it. */
  let started = false;
  const ready = (): Promise<void> => {
    starting ??= (async () => {
      await services.tokens.adminToken();
      await syncNamespaces(services);
      started = true;
    })().catch((error: unknown) => {
      starting = undefined;
      throw error;
    });
    return starting;
  };

  const limited = deps.config.rateLimits === undefined
    ? undefined
    : rateLimitGate(deps.config.rateLimits, {
        clock: services.clock,
        trustProxyHeaders: services.settings.trustProxyHeaders,
        isAdmin: (token) => services.tokens.isAdmin(token),
      });

  const dispatch = async (routes: Router<Handler>, request: Incoming, path: string, rayId: string): Promise<Outgoing> => {
    if (request.method === 'OPTIONS') {
      const methods = routes.methods(path);
      if (methods.length === 0) return errorResponse(matchError('API_NOT_FOUND', { method: 'OPTIONS', path: path.slice(0, 256) }));
      return json({}, 200, preflightHeaders(methods));
    }
    const match = routes.match(request.method, path);
    if (match.kind !== 'found') {
      const where = { method: request.method.slice(0, 16), path: path.slice(0, 256) };
      return errorResponse(matchError(match.kind === 'not-found' ? 'API_NOT_FOUND' : 'API_METHOD_NOT_ALLOWED', where));
    }
    const gated = limited?.(request, match.route);
    if (gated !== undefined) {
      const refused = await gated;
      if (refused !== undefined) return refused;
    }
    if (!started) await ready();
    const ctx = new RequestCtx(services, request, match.params, rayId, closing.signal);
    try {
      const result = await match.handler(ctx);
      if (result instanceof RawAnswer) return { ...result.answer, headers: { ...result.answer.headers } };
      return result instanceof JsonText ? result.answer() : json(result === undefined ? {} : result);
    } catch (e) {
      if (e instanceof HttpError) return errorResponse(e.error);
      if (e instanceof StorageUnavailableError) {
        services.logger.warn({ err: e, rayId }, 'the blob storage is unavailable');
        return errorResponse(matchError('STORAGE_UNAVAILABLE', { reason: e.message }), { 'retry-after': '5' });
      }
      throw e;
    } finally {
      ctx.done();
    }
  };

  const internalError = (error: unknown, request: Incoming, path: string, rayId: string): Outgoing => {
    // The path only: queries carry presigned signatures and device-link tokens.
    services.logger.error({ err: error, rayId, method: request.method, path: path.slice(0, 512) }, 'unexpected error');
    const e = matchError('ERROR', { ray_id: rayId });
    return json({ code: e.code, message: errorMessage(e), documentation: 'https://rivet.gg/docs/errors/generic-error' }, 500);
  };

  const respond = async (request: Incoming, routes: Router<Handler>): Promise<Outgoing> => {
    const rayId = services.random.uuid();
    const path = canonicalPath(request.path, () => request.header('host') ?? request.url.host);
    // The dashboard's own requests (same origin: the page's host is the one asked) are not cross-origin.
    const origin = request.header('origin');
    const cors = corsFor(path, origin !== null && sameOrigin(origin, request) ? null : origin, services.settings.hubOrigins);
    let answer: Outgoing;
    try {
      answer = cors.kind === 'deny' ? errorResponse(cors.error) : await dispatch(routes, request, path, rayId);
    } catch (error) {
      answer = internalError(error, request, path, rayId);
    }
    // A refusal the client never saw (it went away: an aborted upload, a cut body) is its own doing.
    if (answer.status >= 400 && answer.status < 500 && request.signal.aborted) clientGone(services.logger, request, path, rayId, answer);
    const headers = answer.headers;
    if (cors.kind === 'allow') Object.assign(headers, cors.headers);
    headers['rvt-ray-id'] = rayId;
    Object.assign(headers, SECURITY_HEADERS);
    return answer;
  };

  const listener = (routes: Router<Handler>): Pick<App, 'respond' | 'handle'> => ({
    respond: (request) => respond(request, routes),
    handle: async (request, conn) => toResponse(await respond(fromRequest(request, conn), routes)),
  });
  return { services, ready, close: () => closing.abort(), ...listener(router), lobbies: listener(lobbyRouter) };
}
