/**
 * The developer's view of lobbies (the cloud-lobbies service): live analytics (wire.md §2.3) and
 * lobby logs with their long poll (§2.4). Log lines are base64 of the raw bytes; the watch index is
 * the catalog's sequence number of the last line returned (an opaque string to clients). Beside
 * the game server's `std_out` and `std_err`, a Tavern extension: `stream=tavern`, the lines Tavern
 * writes about the lobby (exit code, why it stopped, start back-off, game proxy failures).
 */
import { LOG_STREAMS, type LogStream } from '../../io/catalog.js';
import { findGameLobby, liveLobbies, stopGameLobby, tailLogs } from '../../services/cloud-lobbies.js';
import { requireGame, requireNamespace } from '../auth.js';
import { param, ts, type Ctx, type Handler } from '../context.js';
import { fail, unwrap } from '../errors.js';
import { waitForLines } from '../log-watch.js';
import { renderLobbySummary } from '../render.js';
import type { Router } from '../router.js';

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
  unwrap(await findGameLobby(ctx.services, game.id, lobbyId));
  const page = watchIndex === undefined
    ? await tailLogs(ctx.services, lobbyId, stream)
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
  return { did_remove: unwrap(await stopGameLobby(ctx.services, game.id, param(ctx, 'lobby_id'))) };
}

export function registerCloudLobbies(router: Router<Handler>): void {
  router
    .add('DELETE', '/cloud/games/{game_id:uuid}/matchmaker/lobbies/{lobby_id:uuid}', deleteLobby)
    .add('GET', '/cloud/games/{game_id:uuid}/namespaces/{namespace_id:uuid}/analytics/matchmaker/live', liveAnalytics)
    .add('GET', '/cloud/games/{game_id:uuid}/matchmaker/lobbies/{lobby_id:uuid}/logs', lobbyLogs);
}
