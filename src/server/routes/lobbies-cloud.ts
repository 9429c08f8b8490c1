/**
 * The developer's view of lobbies: live analytics (wire.md §2.3) and lobby logs with their long
 * poll (§2.4). Log lines are base64 of the raw bytes; the watch index is the catalog's sequence
 * number of the last line returned (an opaque string to clients).
 */
import { summarize } from '../../core/analytics.js';
import { isActive } from '../../core/lobby/flags.js';
import type { Lobby } from '../../core/lobby/lobby.js';
import type { LogLine, LogPage, LogStream } from '../../io/catalog.js';
import { requireGame, requireNamespace } from '../auth.js';
import { param, ts, type Ctx, type Handler, type Services } from '../context.js';
import { fail } from '../errors.js';
import { waitForLines } from '../log-watch.js';
import { renderLobbySummary } from '../render.js';
import type { Router } from '../router.js';

async function liveAnalytics(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const state = (await ctx.services.matchmaker.snapshot()).namespaces.get(ns.id);
  const lobbies = [...(state?.lobbies.values() ?? [])].filter(isActive);
  lobbies.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  return { lobbies: lobbies.map((l) => renderLobbySummary(summarize(l, state?.currentVersionId))) };
}

/** Lines without a watch index: the newest 256. */
export const TAIL_LINES = 256;
const PAGE = 1024;

/** The lobby, if it belongs to one of the game's namespaces (stopped lobbies are kept for a while). */
async function gameLobby(services: Services, gameId: string, lobbyId: string): Promise<Lobby | undefined> {
  const world = await services.matchmaker.snapshot();
  for (const ns of await services.catalog.listNamespaces(gameId)) {
    const lobby = world.namespaces.get(ns.id)?.lobbies.get(lobbyId);
    if (lobby !== undefined) return lobby;
  }
  return undefined;
}

async function tail(services: Services, lobbyId: string, stream: LogStream): Promise<LogPage> {
  let last = 0;
  let lines: LogLine[] = [];
  for (;;) {
    const page = await services.catalog.readLogs(lobbyId, stream, last, PAGE);
    if (page.lines.length === 0) break;
    lines = [...lines, ...page.lines].slice(-TAIL_LINES);
    last = page.last;
    if (page.lines.length < PAGE) break;
  }
  return { lines, last };
}

const streamOf = (ctx: Ctx): LogStream => {
  const stream = ctx.url.searchParams.get('stream');
  if (stream !== 'std_out' && stream !== 'std_err') fail('API_BAD_QUERY', { name: 'stream', reason: 'expected std_out or std_err' });
  return stream;
};

const watchIndexOf = (ctx: Ctx): number | undefined => {
  const raw = ctx.url.searchParams.get('watch_index');
  if (raw === null || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw)) fail('API_BAD_QUERY', { name: 'watch_index', reason: 'expected a watch index returned by this endpoint' });
  return Number(raw);
};

const base64 = (line: string): string => Buffer.from(line, 'utf8').toString('base64');

async function lobbyLogs(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const stream = streamOf(ctx);
  const watchIndex = watchIndexOf(ctx);
  const lobbyId = param(ctx, 'lobby_id');
  if ((await gameLobby(ctx.services, game.id, lobbyId)) === undefined) fail('LOBBY_NOT_FOUND');
  const page = watchIndex === undefined
    ? await tail(ctx.services, lobbyId, stream)
    : await waitForLines(ctx.services, lobbyId, stream, watchIndex, ctx.signal);
  return {
    lines: page.lines.map((l) => base64(l.line)),
    timestamps: page.lines.map((l) => ts(l.at)),
    watch: { index: String(page.last) },
  };
}

/** `DELETE .../matchmaker/lobbies/{lobby_id}`: stop a lobby (`did_remove` false when it was already stopping). */
async function deleteLobby(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const lobby = await gameLobby(ctx.services, game.id, param(ctx, 'lobby_id'));
  if (lobby === undefined) fail('LOBBY_NOT_FOUND');
  if (!isActive(lobby)) return { did_remove: false };
  const stopped = await ctx.services.matchmaker.stopLobby({ namespaceId: lobby.namespaceId, lobbyId: lobby.id });
  return { did_remove: stopped.ok };
}

export function registerCloudLobbies(router: Router<Handler>): void {
  router
    .add('DELETE', '/cloud/games/{game_id:uuid}/matchmaker/lobbies/{lobby_id:uuid}', deleteLobby)
    .add('GET', '/cloud/games/{game_id:uuid}/namespaces/{namespace_id:uuid}/analytics/matchmaker/live', liveAnalytics)
    .add('GET', '/cloud/games/{game_id:uuid}/matchmaker/lobbies/{lobby_id:uuid}/logs', lobbyLogs);
}
