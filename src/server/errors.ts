/**
 * The wire error body (wire.md §1.5) and JSON responses. Every expected failure is a
 * {@link MatchError} from the one catalog (`ERRORS`); this file maps it to its status and body.
 */
import { ERRORS, errorMessage, matchError, type ErrorCode, type MatchError } from '../core/errors.js';
import type { Result } from '../core/result.js';
import type { Outgoing } from './incoming.js';

/** `{code, message, documentation?, metadata?}`; absent optionals are omitted, never null. */
export interface ErrorBody {
  readonly code: string;
  readonly message: string;
  readonly documentation?: string;
  readonly metadata?: unknown;
}

/** A request handler's expected failure, thrown through the route and caught by the app. */
export class HttpError extends Error {
  readonly error: MatchError;

  constructor(error: MatchError) {
    super(error.code);
    this.error = error;
  }
}

/**
 * Throws the catalog error (for use deep inside a handler).
 *
 * @example
 * if (game === undefined) fail('GAME_NOT_FOUND');
 */
export function fail(code: ErrorCode, params?: Readonly<Record<string, string | number>>, metadata?: unknown): never {
  throw new HttpError(matchError(code, params, metadata === undefined ? undefined : { metadata }));
}

/** Throws `error` as an {@link HttpError}. */
export function failWith(error: MatchError): never {
  throw new HttpError(error);
}

/**
 * A service's result, or its error thrown as an {@link HttpError}.
 *
 * @example
 * const version = unwrap(await findVersion(ctx.services, game.id, versionId));
 */
export const unwrap = <T>(r: Result<T, MatchError>): T => (r.ok ? r.value : failWith(r.error));

/** A matchmaker result as a handler's answer (`{}`), or its error. */
export const done = (r: { readonly ok: true } | { readonly ok: false; readonly error: MatchError }): unknown => (r.ok ? {} : failWith(r.error));

/** The JSON body of an error. */
export const errorBody = (e: MatchError): ErrorBody => ({
  code: e.code,
  message: errorMessage(e),
  ...(e.metadata === undefined ? {} : { metadata: e.metadata }),
});

const JSON_TYPE = 'application/json; charset=utf-8';

/** No MIME sniffing: on every answer of the API, the dashboard and the CDN. */
export const NOSNIFF: Readonly<Record<'x-content-type-options', string>> = Object.freeze({ 'x-content-type-options': 'nosniff' });

/**
 * Headers every answer carries (the app adds them): no MIME sniffing of the JSON; no caching
 * anywhere, since answers carry tokens (player, namespace, cloud), presigned URLs and device-link
 * secrets, and the rest describe state that changes by the second; no referrer leaking a URL.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...NOSNIFF,
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
});

/**
 * A JSON response, status 200 unless given.
 *
 * @example
 * json({ version_id: id })
 */
export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Outgoing => ({
  status,
  headers: { 'content-type': JSON_TYPE, ...headers },
  body: JSON.stringify(body),
});

/**
 * A handler's answer already written as JSON text (a hot path that renders its own): the app
 * sends it as it is, where any other answer goes through {@link json}.
 *
 * @example
 * return new JsonText(`{"player":{"token":${JSON.stringify(token)}}}`);
 */
export class JsonText {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  /** The 200 answer carrying it. */
  answer(): Outgoing {
    return { status: 200, headers: { 'content-type': JSON_TYPE }, body: this.text };
  }
}

/** The error response for a catalog error. */
export const errorResponse = (e: MatchError, headers: Record<string, string> = {}): Outgoing =>
  json(errorBody(e), ERRORS[e.code].status, headers);
