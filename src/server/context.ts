/**
 * What a route handler gets: the request, its path parameters, the resolved services, and lazy,
 * memoised readers for the JSON body and the caller's token.
 */
import type { Agent } from './auth.js';
import type { Services } from './deps.js';
import type { Incoming } from './incoming.js';

export interface Ctx {
  readonly services: Services;
  readonly request: Incoming;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
  readonly rayId: string;
  /** The TCP peer's address, when the bridge knows it. */
  readonly remoteAddress: string | undefined;
  /** The JSON body (`{}` when empty); read once. */
  body(): Promise<unknown>;
  /** Whether the body was empty (only `PUT lobbies/state` tells `{}` from nothing). */
  bodyWasEmpty(): Promise<boolean>;
  /** Aborts when the client goes away (long polls and seat waits stop). */
  readonly signal: AbortSignal;
  /** The verified caller (undefined without a token; a bad token throws); checked once per request. */
  agent(): Promise<Agent | undefined>;
}

/** A route handler: returns a JSON-able value (answered 200). */
export type Handler = (ctx: Ctx) => Promise<unknown>;

/** The path parameter (the router guarantees it). */
export const param = (ctx: Ctx, name: string): string => {
  const v = ctx.params[name];
  if (v === undefined) throw new Error(`route has no parameter ${name}`);
  return v;
};

/** Epoch ms → RFC 3339 with milliseconds and `Z` (wire.md §1.4). */
export const ts = (ms: number): string => new Date(ms).toISOString();
