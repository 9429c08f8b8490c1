/**
 * The player-facing matchmaker (wire.md §3.1–3.3): find, join and create. Tokens per §3.2: a
 * public namespace token, no token from one of the namespace's domains, or a development token
 * (mock answers, §4.3).
 */
import type { CaptchaResponse } from '../../core/admission/captcha.js';
import { requireMatchmakerNamespace, type MatchmakerAgent } from '../auth.js';
import { clientOf } from '../client.js';
import type { Ctx, Handler } from '../context.js';
import { fail, failWith } from '../errors.js';
import { devJoinResponse, joinResponse } from '../join-response.js';
import type { Router } from '../router.js';
import { admit, type AdmitResult } from '../../services/admit.js';
import type { FindRequest } from '../../services/matchmaker.js';
import { anyJson, arrayOf, bool, int, isUuid, mapOf, object, oneOf, opt, parse, req, str } from '../validate.js';

const I32 = 2 ** 31 - 1;
const answer = object({ client_response: req(str) });
const captcha = object({ hcaptcha: opt(answer), turnstile: opt(answer) });
const tags = mapOf(str, 1024);
const maxPlayers = int(-I32, I32);

const findBody = object({
  game_modes: req(arrayOf(str, 64)),
  regions: opt(arrayOf(str, 64)),
  prevent_auto_create_lobby: opt(bool),
  tags: opt(tags),
  max_players: opt(maxPlayers),
  captcha: opt(captcha),
  verification_data: opt(anyJson),
});
const joinBody = object({ lobby_id: req(str), captcha: opt(captcha), verification_data: opt(anyJson) });
const createBody = object({
  game_mode: req(str),
  region: opt(str),
  publicity: opt(oneOf(['public', 'private'] as const)),
  tags: opt(tags),
  max_players: opt(maxPlayers),
  lobby_config: opt(anyJson),
  captcha: opt(captcha),
  verification_data: opt(anyJson),
});

type CaptchaBody = { hcaptcha?: { client_response: string }; turnstile?: { client_response: string } };

/** The gate credentials of a request (captcha answer and verification data), in the core's shape. */
const credentials = (body: { captcha?: CaptchaBody; verification_data?: unknown }): { captcha?: CaptchaResponse; verificationData?: unknown } => {
  const c = body.captcha;
  const captchaResponse: CaptchaResponse | undefined = c && {
    ...(c.hcaptcha === undefined ? {} : { hcaptcha: { clientResponse: c.hcaptcha.client_response } }),
    ...(c.turnstile === undefined ? {} : { turnstile: { clientResponse: c.turnstile.client_response } }),
  };
  return {
    ...(captchaResponse === undefined ? {} : { captcha: captchaResponse }),
    ...(body.verification_data === undefined ? {} : { verificationData: body.verification_data }),
  };
};

/** An admission as the JoinResponse, or its refusal. */
const joined = (ctx: Ctx, admitted: AdmitResult): unknown =>
  admitted.ok ? joinResponse(admitted.lobby, ctx.services.regions, ctx.services.settings, admitted.token) : failWith(admitted.error);

async function devAnswer(ctx: Ctx, agent: Extract<MatchmakerAgent, { kind: 'dev' }>): Promise<unknown> {
  const { grant, ns } = agent;
  const playerId = ctx.services.random.uuid();
  const token = await ctx.services.tokens.issue(
    { kind: 'player', namespaceId: ns.id, lobbyId: '00000000-0000-0000-0000-000000000000', playerId, dev: true },
    ns.nameId,
  );
  return devJoinResponse(grant.hostname, grant.ports, token);
}

async function find(ctx: Ctx): Promise<unknown> {
  const agent = await requireMatchmakerNamespace(ctx, true);
  const body = parse(await ctx.body(), findBody);
  if (agent.kind === 'dev') return devAnswer(ctx, agent);
  const client = clientOf(ctx);
  const ns = agent.ns;
  // Written field by field: V8 (Node 20) builds an object of conditional spreads slowly, and this is every find's.
  const request: Writable<FindRequest> = { namespaceId: ns.id, gameModes: body.game_modes, client };
  if (body.regions !== undefined) request.regions = body.regions;
  if (body.prevent_auto_create_lobby !== undefined) request.preventAutoCreate = body.prevent_auto_create_lobby;
  if (body.tags !== undefined) request.tags = body.tags;
  if (body.max_players !== undefined) request.maxPlayers = body.max_players;
  if (body.captcha !== undefined || body.verification_data !== undefined) Object.assign(request, credentials(body));
  return joined(ctx, await admit(ctx.services, ns, { kind: 'find', request }, () => ctx.signal));
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };

async function join(ctx: Ctx): Promise<unknown> {
  const agent = await requireMatchmakerNamespace(ctx, true);
  const body = parse(await ctx.body(), joinBody);
  if (agent.kind === 'dev') return devAnswer(ctx, agent);
  // Rivet answered a non-UUID lobby id with a 500.
  if (!isUuid(body.lobby_id)) fail('MATCHMAKER_LOBBY_NOT_FOUND');
  const lobbyId = body.lobby_id.toLowerCase();
  const client = clientOf(ctx);
  const state = await ctx.services.matchmaker.lobbyState(lobbyId);
  const ns = agent.ns;
  const request = { namespaceId: ns.id, lobbyId, client, ...(state === undefined ? {} : { lobbyState: JSON.parse(state) as unknown }), ...credentials(body) };
  return joined(ctx, await admit(ctx.services, ns, { kind: 'join', request }, () => ctx.signal));
}

async function create(ctx: Ctx): Promise<unknown> {
  const agent = await requireMatchmakerNamespace(ctx, true);
  const body = parse(await ctx.body(), createBody);
  if (agent.kind === 'dev') return devAnswer(ctx, agent);
  const client = clientOf(ctx);
  const ns = agent.ns;
  const request = {
    namespaceId: ns.id,
    gameMode: body.game_mode,
    client,
    ...(body.region === undefined ? {} : { region: body.region }),
    ...(body.publicity === undefined ? {} : { publicity: body.publicity }),
    ...(body.tags === undefined ? {} : { tags: body.tags }),
    ...(body.max_players === undefined ? {} : { maxPlayers: body.max_players }),
    ...(body.lobby_config === undefined ? {} : { lobbyConfig: body.lobby_config }),
    ...credentials(body),
  };
  return joined(ctx, await admit(ctx.services, ns, { kind: 'create', request }, () => ctx.signal));
}

export function registerMatchmakerLobbies(router: Router<Handler>): void {
  router
    .add('POST', '/matchmaker/lobbies/find', find)
    .add('POST', '/matchmaker/lobbies/join', join)
    .add('POST', '/matchmaker/lobbies/create', create);
}
