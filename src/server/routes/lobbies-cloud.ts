/**
 * The developer's view of lobbies (the cloud-lobbies service): live analytics (wire.md §2.3) and
 * lobby logs with their long poll (§2.4). Log lines are base64 of the raw bytes; the watch index is
 * the catalog's sequence number of the last line returned (an opaque string to clients). Beside
 * the game server's `std_out` and `std_err`, a Tavern extension: `stream=tavern`, the lines Tavern
 * writes about the lobby (exit code, why it stopped, start back-off, game proxy failures). Another
 * extension lists the lobbies that stopped recently, with why, their exit code, how long they ran
 * and the last lines of their log; a kept lobby's log stays readable after the matchmaker forgot it.
 */
import { HISTORY_RANGES, type HistoryPoint, type HistoryRange } from '../../core/history/series.js';
import { LOG_STREAMS, type LogStream } from '../../io/catalog.js';
import type { StoppedLobbyRecord } from '../../io/stopped-lobbies.js';
import { summarize } from '../../core/analytics.js';
import type { Lobby } from '../../core/lobby/lobby.js';
import { findGameLobby, findStoppedGameLobby, liveLobbies, setGameLobbyClosed, stopGameLobby, tailLogs } from '../../services/cloud-lobbies.js';
import { STOPPED_LIST_MAX } from '../../services/stopped-lobbies.js';
import { requireGame, requireNamespace } from '../auth.js';
import { param, ts, type Ctx, type Handler } from '../context.js';
import { fail, unwrap } from '../errors.js';
import { renderPorts } from '../join-response.js';
import { waitForLines } from '../log-watch.js';
import { regionUuid, renderLobbySummary } from '../render.js';
import type { Router } from '../router.js';
import { bool, object, parse, req } from '../validate.js';

/**
 * The live lobbies, and two Tavern extensions: `finds_received`, the finds this instance received
 * for the namespace since it started (answered or refused; a client charts their rate from two
 * reads), and, omitted when empty, `start_backoff`: the game modes whose lobbies keep failing to
 * start and wait before the next start.
 */
async function liveAnalytics(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const lobbies = (await liveLobbies(ctx.services, ns.id)).map(renderLobbySummary);
  const finds_received = ctx.services.matchmaker.findsReceived(ns.id);
  const backoffs = ctx.services.matchmaker.backoffs(ns.id);
  if (backoffs.length === 0) return { lobbies, finds_received };
  const start_backoff = backoffs.map((b) => ({
    version_id: b.versionId,
    game_mode: b.gameMode,
    failures: b.failures,
    last_lobby_id: b.lastLobbyId,
    last_failure_ts: ts(b.lastFailureAt),
    until_ts: ts(b.until),
  }));
  return { lobbies, finds_received, start_backoff };
}

const streamOf = (ctx: Ctx): LogStream => {
  const stream = ctx.url.searchParams.get('stream');
  const known = LOG_STREAMS.find((s) => s === stream);
  if (known === undefined) fail('API_BAD_QUERY', { name: 'stream', reason: 'expected std_out, std_err or tavern' });
  return known;
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
  // A lobby the matchmaker forgot keeps its log while it is listed among the stopped ones.
  if (!(await findGameLobby(ctx.services, game.id, lobbyId)).ok) unwrap(await findStoppedGameLobby(ctx.services, game.id, lobbyId, ctx.services.clock.now()));
  const page = watchIndex === undefined
    ? await tailLogs(ctx.services, lobbyId, stream)
    : await waitForLines(ctx.services, lobbyId, stream, watchIndex, ctx.signal);
  return {
    lines: page.lines.map((l) => base64(l.line)),
    timestamps: page.lines.map((l) => ts(l.at)),
    watch: { index: String(page.last) },
  };
}

/** Default and most stops a listing returns. */
const STOPPED_LIMIT = 20;

const stoppedQuery = (ctx: Ctx): { failedOnly: boolean; limit: number } => {
  const failed = ctx.url.searchParams.get('failed');
  if (failed !== null && failed !== 'true' && failed !== 'false') fail('API_BAD_QUERY', { name: 'failed', reason: 'expected true or false' });
  const raw = ctx.url.searchParams.get('limit');
  const limit = raw === null ? STOPPED_LIMIT : /^\d{1,3}$/.test(raw) ? Number(raw) : 0;
  if (limit < 1 || limit > STOPPED_LIST_MAX) fail('API_BAD_QUERY', { name: 'limit', reason: `expected a whole number from 1 to ${STOPPED_LIST_MAX}` });
  return { failedOnly: failed === 'true', limit };
};

const renderStopped = (r: StoppedLobbyRecord): unknown => ({
  lobby_id: r.lobbyId,
  lobby_group_name_id: r.gameMode,
  region_id: regionUuid(r.region),
  version_id: r.versionId,
  create_ts: ts(r.createdAt),
  ...(r.readyAt === undefined ? {} : { ready_ts: ts(r.readyAt) }),
  stop_ts: ts(r.stoppedAt),
  run_ms: r.stoppedAt - r.createdAt,
  reason: r.reason,
  failed: r.failed,
  ...(r.exitCode === undefined ? {} : { exit_code: r.exitCode }),
  last_lines: r.lastLines.map((l) => ({ ts: ts(l.at), stream: l.stream, line: l.line })),
});

/**
 * `GET .../analytics/matchmaker/stopped?failed=&limit=` (a Tavern extension): the namespace's
 * lobbies that stopped in the last 24 h, newest first (`failed=true`: only crashes, failed starts
 * and ready timeouts; `limit` 1 to 100, default 20).
 */
async function stoppedLobbies(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const query = stoppedQuery(ctx);
  const stopped = ctx.services.stoppedLobbies;
  if (stopped === undefined) fail('API_NOT_FOUND', { method: ctx.request.method, path: ctx.request.path.slice(0, 256) });
  return { lobbies: (await stopped.list(ns.id, query, ctx.services.clock.now())).map(renderStopped) };
}

const rangeOf = (ctx: Ctx): HistoryRange => {
  const raw = ctx.url.searchParams.get('range') ?? '1h';
  const range = HISTORY_RANGES.find((r) => r === raw);
  if (range === undefined) fail('API_BAD_QUERY', { name: 'range', reason: `expected ${HISTORY_RANGES.join(', ')}` });
  return range;
};

const renderPoint = (p: HistoryPoint): unknown => ({
  ts: ts(p.at),
  minutes: p.minutes,
  lobbies: p.lobbies,
  players: p.players,
  requests: p.requests,
  refusals: p.refusals,
  starts: p.starts,
  ...(p.startP50Ms === undefined ? {} : { start_p50_ms: p.startP50Ms }),
  ...(p.startP95Ms === undefined ? {} : { start_p95_ms: p.startP95Ms }),
  failures: p.failures,
});

/**
 * `GET .../analytics/matchmaker/history?range=1h|24h|7d` (a Tavern extension): the namespace's
 * per-minute history in buckets (a minute, ten minutes, an hour): lobbies by state and players at
 * their peak, requests, refusals by code, starts and failures by reason in all, start latency
 * p50/p95 (ms). A bucket with nothing recorded is left out.
 */
async function history(ctx: Ctx): Promise<unknown> {
  const { ns } = await requireNamespace(ctx, param(ctx, 'game_id'), param(ctx, 'namespace_id'));
  const range = rangeOf(ctx);
  const kept = ctx.services.history;
  if (kept === undefined) fail('API_NOT_FOUND', { method: ctx.request.method, path: ctx.request.path.slice(0, 256) });
  const series = await kept.read(ns.id, range);
  return { range, from_ts: ts(series.from), to_ts: ts(series.to), step_ms: series.stepMs, points: series.points.map(renderPoint) };
}

/** A running (or recently stopped) lobby as its page shows it. */
async function renderLobby(ctx: Ctx, lobby: Lobby): Promise<unknown> {
  const world = await ctx.services.matchmaker.snapshot();
  const summary = summarize(lobby, world.namespaces.get(lobby.namespaceId)?.currentVersionId);
  const lc = lobby.lifecycle;
  const state = await ctx.services.matchmaker.lobbyState(lobby.id);
  // A stopped lobby's exit code is in what Tavern keeps of its stop.
  const kept = lc.status === 'stopped' ? await ctx.services.stoppedLobbies?.find(lobby.id, ctx.services.clock.now()) : undefined;
  return {
    lobby: {
      ...(renderLobbySummary(summary) as object),
      namespace_id: lobby.namespaceId,
      version_id: lobby.versionId,
      region_name_id: lobby.region,
      status: lc.status,
      ...(lc.status === 'stopping' || lc.status === 'stopped' ? { stop_reason: lc.reason } : {}),
      ...(kept?.exitCode === undefined ? {} : { exit_code: kept.exitCode }),
      ...('readyAt' in lc && lc.readyAt !== undefined ? { ready_ts: ts(lc.readyAt) } : {}),
      publicity: lobby.publicity,
      origin: lobby.origin,
      tags: lobby.tags,
      ports: renderPorts(lobby, ctx.services.settings),
      players: [...lobby.players.values()].map((p) => ({ player_id: p.id, status: p.status, create_ts: ts(p.createdAt) })),
      timeouts: lobby.timeouts,
      ...(lobby.dynamicMaxPlayers === undefined ? {} : { dynamic_max_players: lobby.dynamicMaxPlayers }),
      ...(lobby.lobbyConfig === undefined ? {} : { lobby_config: lobby.lobbyConfig }),
      ...(state === undefined ? {} : { state: JSON.parse(state) as unknown }),
    },
  };
}

/**
 * `GET .../matchmaker/lobbies/{lobby_id}` (a Tavern extension): one lobby of the game with its
 * ports and their addresses, players, tags, state, flags and config; a lobby the matchmaker
 * forgot but Tavern keeps among the stopped ones answers `{ stopped }` instead.
 */
async function getLobby(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const lobbyId = param(ctx, 'lobby_id');
  const found = await findGameLobby(ctx.services, game.id, lobbyId);
  if (found.ok) return renderLobby(ctx, found.value);
  return { stopped: renderStopped(unwrap(await findStoppedGameLobby(ctx.services, game.id, lobbyId, ctx.services.clock.now()))) };
}

/** `PUT .../matchmaker/lobbies/{lobby_id}/closed` `{ is_closed }` (a Tavern extension): close a lobby to new players, or open it. */
async function putClosed(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  const { is_closed } = parse(await ctx.body(), object({ is_closed: req(bool) }));
  unwrap(await setGameLobbyClosed(ctx.services, game.id, param(ctx, 'lobby_id'), is_closed));
  return {};
}

/** `DELETE .../matchmaker/lobbies/{lobby_id}`: stop a lobby (`did_remove` false when it was already stopping). */
async function deleteLobby(ctx: Ctx): Promise<unknown> {
  const game = await requireGame(ctx, param(ctx, 'game_id'));
  return { did_remove: unwrap(await stopGameLobby(ctx.services, game.id, param(ctx, 'lobby_id'))) };
}

export function registerCloudLobbies(router: Router<Handler>): void {
  router
    .add('DELETE', '/cloud/games/{game_id:uuid}/matchmaker/lobbies/{lobby_id:uuid}', deleteLobby)
    .add('GET', '/cloud/games/{game_id:uuid}/matchmaker/lobbies/{lobby_id:uuid}', getLobby)
    .add('PUT', '/cloud/games/{game_id:uuid}/matchmaker/lobbies/{lobby_id:uuid}/closed', putClosed)
    .add('GET', '/cloud/games/{game_id:uuid}/namespaces/{namespace_id:uuid}/analytics/matchmaker/live', liveAnalytics)
    .add('GET', '/cloud/games/{game_id:uuid}/namespaces/{namespace_id:uuid}/analytics/matchmaker/stopped', stoppedLobbies)
    .add('GET', '/cloud/games/{game_id:uuid}/namespaces/{namespace_id:uuid}/analytics/matchmaker/history', history)
    .add('GET', '/cloud/games/{game_id:uuid}/matchmaker/lobbies/{lobby_id:uuid}/logs', lobbyLogs);
}
