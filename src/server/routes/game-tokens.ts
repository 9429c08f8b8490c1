/**
 * A game's tokens: create a cloud token, list the game's tokens (Tavern extension: ids, kinds and
 * times, never a secret; Tavern keeps none), and revoke one by its secret or by its id.
 */
import { validationError } from '../../core/errors.js';
import type { TokenKind, TokenRecord } from '../../io/catalog.js';
import { requireGame } from '../auth.js';
import { param, type Ctx, type Handler } from '../context.js';
import { fail, failWith, unwrap } from '../errors.js';
import type { Router } from '../router.js';
import { object, opt, parse, text, uuid } from '../validate.js';

/** Tokens a list answers unless `limit` says otherwise, and the most it may ask. */
export const TOKENS_LIMIT = 100;
export const TOKENS_LIST_MAX = 1000;

const GAME = '/cloud/games/{game_id:uuid}';

/** A token kind as the CLI names it (`tavern token create --kind`). */
const WIRE_KIND: Readonly<Record<TokenKind, string>> = Object.freeze({
  cloud: 'cloud', 'namespace-public': 'public', 'namespace-development': 'development', lobby: 'lobby', player: 'player',
});

const iso = (ms: number): string => new Date(ms).toISOString();

/** One token of the list: what it is and when, never its secret. */
function renderToken(t: TokenRecord, now: number): Record<string, unknown> {
  return {
    token_id: t.jti,
    kind: WIRE_KIND[t.kind],
    ...(t.namespaceId === undefined ? {} : { namespace_id: t.namespaceId }),
    create_ts: iso(t.createdAt),
    ...(t.expiresAt === undefined ? {} : { expire_ts: iso(t.expiresAt) }),
    ...(t.revokedAt === undefined ? {} : { revoke_ts: iso(t.revokedAt) }),
    is_revoked: t.revokedAt !== undefined,
    is_expired: t.expiresAt !== undefined && t.expiresAt <= now,
  };
}

async function createCloudToken(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  return { token: await ctx.services.tokens.issue({ kind: 'cloud', gameId: game.id }) };
}

/**
 * `GET /cloud/games/{game_id}/tokens?limit=` (cloud or admin token): the game's cloud, public and
 * development tokens, revoked and expired ones too, newest first; `limit` 1 to 1000, default 100;
 * `more` says whether older ones were left out.
 */
async function listTokens(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const raw = ctx.url.searchParams.get('limit');
  const limit = raw === null ? TOKENS_LIMIT : /^\d{1,4}$/.test(raw) ? Number(raw) : 0;
  if (limit < 1 || limit > TOKENS_LIST_MAX) fail('API_BAD_QUERY', { name: 'limit', reason: `expected a whole number from 1 to ${TOKENS_LIST_MAX}` });
  const records = await ctx.services.tokens.list(game.id, limit + 1);
  const now = ctx.services.clock.now();
  return { tokens: records.slice(0, limit).map((t) => renderToken(t, now)), more: records.length > limit };
}

const revokeBody = object({ token: opt(text(4096)), token_id: opt(uuid) });

/**
 * `POST /cloud/games/{game_id}/tokens/revoke` `{ token }` or `{ token_id }` (a Tavern extension):
 * revoke one of the game's cloud, public or development tokens, by its secret or by the id the
 * list gives. Exactly one of the two.
 */
async function revokeToken(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const body = parse(await ctx.body(), revokeBody);
  const { tokens } = ctx.services;
  if (body.token !== undefined && body.token_id !== undefined) failWith(validationError([{ path: ['token_id', 'conflict'] }]));
  if (body.token !== undefined) unwrap(await tokens.revoke(body.token, game.id));
  else if (body.token_id !== undefined) unwrap(await tokens.revokeById(body.token_id, game.id));
  else failWith(validationError([{ path: ['token', 'missing'] }]));
  return {};
}

export function registerGameTokens(router: Router<Handler>): void {
  router
    .add('POST', `${GAME}/tokens/cloud`, createCloudToken)
    .add('GET', `${GAME}/tokens`, listTokens)
    .add('POST', `${GAME}/tokens/revoke`, revokeToken);
}
