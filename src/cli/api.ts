/**
 * The CLI's HTTP client of the Tavern (Rivet 23.2) API: JSON calls with a bearer token, and
 * {@link ApiError} carrying the wire error's code, message and every field path it names.
 */

/** A failed call: the server's `{code, message, metadata.errors[].path}`, or a network failure (`code` NETWORK). */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly paths: readonly string[];

  constructor(code: string, message: string, status: number, paths: readonly string[] = []) {
    super(message);
    this.code = code;
    this.status = status;
    this.paths = paths;
  }
}

/** The field paths in a wire error's `metadata.errors` (`[{path: ['a','b'], message?}]` → `a.b`, or `a.b: message`). */
export const errorPaths = (metadata: unknown): string[] => {
  const errors = (metadata as { errors?: unknown } | undefined)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.flatMap((e: unknown) => {
    const { path, message } = (e ?? {}) as { path?: unknown; message?: unknown };
    if (!Array.isArray(path)) return [];
    const joined = path.map(String).join('.');
    return [typeof message === 'string' ? `${joined}: ${message}` : joined];
  });
};

export type Json = Record<string, unknown>;

export interface Api {
  readonly origin: string;
  call<T = Json>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T>;
  /** A GET whose body is not JSON (a streamed export): the response once its status is 2xx; a wire error as {@link ApiError}. */
  download(path: string): Promise<Response>;
}

/**
 * @example
 * const api = createApi('http://127.0.0.1:8080', token);
 * const { games } = await api.call<{ games: unknown[] }>('GET', '/cloud/games');
 */
export function createApi(origin: string, token: string | undefined): Api {
  const base = origin.replace(/\/+$/, '');
  const send = async (method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
    try {
      return await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), ...(signal === undefined ? {} : { signal }) });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new ApiError('NETWORK', `cannot reach ${base}: ${cause?.code ?? cause?.message ?? (e as Error).message}`, 0);
    }
  };
  /** The answer's JSON; a non-2xx answer throws its wire error. */
  const read = async (res: Response, method: string, path: string): Promise<unknown> => {
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new ApiError('BAD_RESPONSE', `${method} ${path} answered ${res.status} with a body that is not JSON`, res.status);
    }
    if (!res.ok) {
      const e = parsed as { code?: unknown; message?: unknown; metadata?: unknown };
      throw new ApiError(typeof e.code === 'string' ? e.code : `HTTP_${res.status}`, typeof e.message === 'string' ? e.message : text, res.status, errorPaths(e.metadata));
    }
    return parsed;
  };
  const api: Api = {
    origin: base,
    async download(path: string): Promise<Response> {
      const res = await send('GET', path);
      if (!res.ok) await read(res, 'GET', path);
      return res;
    },
    async call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
      return (await read(await send(method, path, body, signal), method, path)) as T;
    },
  };
  return api;
}
