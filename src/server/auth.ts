/**
 * Who is calling: `Authorization: Bearer <token>` (wire.md §1.2), the admin token, or — for the
 * player-facing finds — a browser Origin on one of a namespace's domains (§4.4). Each helper
 * either returns the caller's scope or throws the wire error (401/403).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { GameRecord, NamespaceRecord } from '../io/catalog.js';
import type { Ctx } from './context.js';
import type { Incoming } from './incoming.js';
import { fail, failWith } from './errors.js';
import type { Admin, Grant, TokenIssuer, Verified } from '../services/tokens.js';

export type Agent = Admin | Verified;

/** The bearer token, if the header is `Bearer <token>` (anything else is ignored, as Rivet did). */
export const bearerToken = (request: Incoming): string | undefined => {
  const header = request.header('authorization');
  if (header === null || !header.startsWith('Bearer ')) return undefined;
  const token = header.slice('Bearer '.length).trim();
  return token === '' ? undefined : token;
};

/** The verified caller, or undefined without a token; a bad token throws (every token is checked, wire.md §1.2). */
export const agentOf = (ctx: Ctx): Promise<Agent | undefined> => ctx.agent();

/** Verifies the request's bearer token (the app memoises it per request as `ctx.agent()`). */
export async function resolveAgent(tokens: TokenIssuer, request: Incoming): Promise<Agent | undefined> {
  const token = bearerToken(request);
  if (token === undefined) return undefined;
  const who = await tokens.identify(token);
  if (!who.ok) failWith(who.error);
  return who.value;
}

/** Any valid token (or the admin token). */
export async function requireAgent(ctx: Ctx): Promise<Agent> {
  const agent = await agentOf(ctx);
  if (agent === undefined) fail('API_UNAUTHORIZED', { reason: 'No bearer token provided' });
  return agent;
}

const missing = (entitlement: string): never => fail('CLAIMS_MISSING_ENTITLEMENT', { entitlement });

/** The admin token only (creating games, listing every game). */
export async function requireAdmin(ctx: Ctx): Promise<void> {
  const agent = await requireAgent(ctx);
  if (agent.kind !== 'admin') fail('API_FORBIDDEN', { reason: 'only the admin token can do this' });
}

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * `GET /metrics`: the metrics token (`TAVERN_METRICS_TOKEN`, compared in constant time) or the
 * admin token. Anything else fails as {@link requireAdmin} does: no token 401 `API_UNAUTHORIZED`, a
 * bad one 401, another valid token 403 `API_FORBIDDEN`.
 */
export async function requireMetricsReader(ctx: Ctx): Promise<void> {
  const expected = ctx.services.settings.metricsToken;
  const token = bearerToken(ctx.request);
  if (expected !== undefined && token !== undefined && timingSafeEqual(sha256(token), sha256(expected))) return;
  await requireAdmin(ctx);
}

/**
 * A cloud token for `gameId` (or the admin token), then the game itself (404 `GAME_NOT_FOUND`).
 * A cloud token for another game is 403; any other token kind is 401.
 */
export async function requireGame(ctx: Ctx, gameId: string): Promise<GameRecord> {
  const agent = await requireAgent(ctx);
  if (agent.kind !== 'admin') {
    if (agent.kind !== 'cloud') missing('GameCloud');
    else if (agent.gameId !== gameId) fail('API_FORBIDDEN', { reason: 'Game cloud token cannot access this game' });
  }
  const game = await ctx.services.catalog.getGame(gameId);
  if (game === undefined) fail('GAME_NOT_FOUND');
  return game;
}

/** The game (as {@link requireGame}) and one of its namespaces (404 `NAMESPACE_NOT_FOUND`, also for another game's). */
export async function requireNamespace(ctx: Ctx, gameId: string, namespaceId: string): Promise<{ game: GameRecord; ns: NamespaceRecord }> {
  const game = await requireGame(ctx, gameId);
  const ns = await ctx.services.catalog.getNamespace(namespaceId);
  if (ns === undefined || ns.gameId !== gameId) fail('NAMESPACE_NOT_FOUND');
  return { game, ns };
}

type DevGrant = Extract<Grant, { kind: 'namespace-development' }>;

/** How a matchmaker call is authorised: a namespace (public token or origin), or a development token (mocks). */
export type MatchmakerAgent =
  | { readonly kind: 'namespace'; readonly ns: NamespaceRecord }
  | { readonly kind: 'dev'; readonly grant: DevGrant; readonly ns: NamespaceRecord };

async function namespaceOrFail(ctx: Ctx, id: string): Promise<NamespaceRecord> {
  const ns = await ctx.services.catalog.getNamespace(id);
  if (ns === undefined) fail('NAMESPACE_NOT_FOUND');
  return ns;
}

/** The namespace a browser Origin resolves to (custom domains, and the CDN hostnames when configured). */
async function originNamespace(ctx: Ctx): Promise<NamespaceRecord | undefined> {
  const origin = ctx.request.header('origin');
  if (origin === null) return undefined;
  let host: string;
  try {
    host = new URL(origin).hostname.toLowerCase();
  } catch {
    return undefined;
  }
  const { catalog, settings } = ctx.services;
  let ns = await catalog.namespaceByDomain(host);
  const cdn = settings.cdnDomain;
  if (ns === undefined && cdn !== undefined && host.endsWith(`.${cdn}`)) {
    const [gameName, nsName = 'prod'] = host.slice(0, -cdn.length - 1).split('--');
    const game = (await catalog.listGames()).find((g) => g.nameId === gameName);
    if (game !== undefined) ns = (await catalog.listNamespaces(game.id)).find((n) => n.nameId === nsName);
  }
  return ns !== undefined && ns.cdn.enableDomainPublicAuth ? ns : undefined;
}

/**
 * find/join/create/list/regions/statistics: a public namespace token, a development token (mocks),
 * or (when `allowOrigin`) no token and an Origin on one of the namespace's domains.
 */
export async function requireMatchmakerNamespace(ctx: Ctx, allowOrigin: boolean): Promise<MatchmakerAgent> {
  const agent = await agentOf(ctx);
  if (agent === undefined) {
    const ns = allowOrigin ? await originNamespace(ctx) : undefined;
    if (ns === undefined) return missing('GameNamespacePublic');
    return { kind: 'namespace', ns };
  }
  if (agent.kind === 'namespace-public') {
    // Read here, not through `namespaceOrFail`: one async frame less on every find.
    const ns = await ctx.services.catalog.getNamespace(agent.namespaceId);
    return ns === undefined ? fail('NAMESPACE_NOT_FOUND') : { kind: 'namespace', ns };
  }
  if (agent.kind === 'namespace-development') return { kind: 'dev', grant: agent, ns: await namespaceOrFail(ctx, agent.namespaceId) };
  return missing('GameNamespacePublic');
}

/** ready/closed/state/players: a lobby token, or a development token (mocks). */
export async function requireLobby(
  ctx: Ctx,
): Promise<{ readonly kind: 'lobby'; readonly namespaceId: string; readonly lobbyId: string } | { readonly kind: 'dev'; readonly grant: DevGrant }> {
  const agent = await requireAgent(ctx);
  if (agent.kind === 'lobby') return { kind: 'lobby', namespaceId: agent.namespaceId, lobbyId: agent.lobbyId };
  if (agent.kind === 'namespace-development') return { kind: 'dev', grant: agent };
  return missing('MatchmakerLobby');
}
