/**
 * `tavern lobbies list` and `tavern logs`: a namespace's running lobbies, and a lobby's log. The
 * log shows by default the game server's `std_out` and `std_err` and Tavern's own lines (its
 * `tavern` stream) merged in time, each line marked (`out| `, `err| `, `[tavern] `); `--stream`
 * prints one stream as it was written.
 */
import type { Command } from 'commander';
import type { Api } from './api.js';
import { apiFor, type CommandIo } from './commands.js';
import { UsageError } from './errors.js';
import { findNamespace, getGame, resolveGameId } from './game.js';
import { age, table } from './table.js';

interface LobbyRow {
  lobby_id: string; lobby_group_name_id: string; region_id: string; create_ts: string;
  is_ready: boolean; is_idle: boolean; is_closed: boolean; total_player_count: number; max_players_normal: number;
}

type Stream = 'std_out' | 'std_err' | 'tavern';

/** The streams in the order a tie in time prints, and each one's mark in the merged view. */
const MARKS: Readonly<Record<Stream, string>> = { std_out: 'out| ', std_err: 'err| ', tavern: '[tavern] ' };
const STREAMS = Object.keys(MARKS) as Stream[];

interface LogsPage {
  readonly lines: readonly string[];
  readonly timestamps: readonly string[];
  readonly watch: { readonly index: string };
}

/** A page of a lobby stream: its tail without `index`, else the lines after it (a long poll). */
const readPage = (api: Api, gameId: string, lobbyId: string, stream: Stream, index?: string): Promise<LogsPage> => {
  const q = new URLSearchParams({ stream, ...(index === undefined ? {} : { watch_index: index }) });
  return api.call<LogsPage>('GET', `/cloud/games/${gameId}/matchmaker/lobbies/${lobbyId}/logs?${q.toString()}`);
};

const decode = (line: string): string => Buffer.from(line, 'base64').toString('utf8');

/**
 * The lines of several streams' pages in time order (a tie keeps the order of `pages`, then of
 * each page), each with its stream's mark.
 *
 * @example
 * mergeMarked([['std_out', page]]); // ['out| hello']
 */
export const mergeMarked = (pages: readonly (readonly [Stream, LogsPage])[]): string[] =>
  pages
    .flatMap(([stream, page], s) => page.lines.map((line, i) => ({ at: Date.parse(page.timestamps[i] ?? ''), s, i, text: MARKS[stream] + decode(line) })))
    .sort((a, b) => (a.at - b.at) || (a.s - b.s) || (a.i - b.i))
    .map((l) => l.text);

/** `tavern logs`: one stream as written, or every stream merged and marked; `follow` keeps each going. */
async function printLogs(api: Api, gameId: string, lobbyId: string, streams: readonly Stream[], follow: boolean, io: CommandIo): Promise<void> {
  const mark = streams.length > 1;
  const tails = await Promise.all(streams.map(async (s) => [s, await readPage(api, gameId, lobbyId, s)] as const));
  for (const line of mark ? mergeMarked(tails) : tails.flatMap(([, page]) => page.lines.map(decode))) io.out(line);
  if (!follow) return;
  await Promise.all(tails.map(async ([stream, tail]) => {
    let index = tail.watch.index;
    for (;;) {
      const page = await readPage(api, gameId, lobbyId, stream, index);
      for (const line of page.lines) io.out((mark ? MARKS[stream] : '') + decode(line));
      index = page.watch.index;
    }
  }));
}

/**
 * @example
 * registerLobbies(program, io); // tavern lobbies list, tavern logs <lobby_id>
 */
export function registerLobbies(program: Command, io: CommandIo): void {
  program.command('lobbies').description('lobbies').command('list').description("a namespace's running lobbies")
    .option('-n, --namespace <ns>', 'namespace', 'prod')
    .action(async (options: { namespace: string }, cmd: Command) => {
      const { api, globals } = await apiFor(cmd, io);
      const gameId = await resolveGameId(api, globals.game);
      const ns = findNamespace(await getGame(api, gameId), options.namespace);
      const { lobbies } = await api.call<{ lobbies: LobbyRow[] }>('GET', `/cloud/games/${gameId}/namespaces/${ns.namespace_id}/analytics/matchmaker/live`);
      const now = Date.now();
      const flags = (l: LobbyRow): string => [l.is_ready ? 'ready' : 'starting', l.is_idle ? 'idle' : '', l.is_closed ? 'closed' : ''].filter((f) => f !== '').join(',');
      const rows = lobbies.map((l) => [l.lobby_id, l.lobby_group_name_id, `${l.total_player_count}/${l.max_players_normal}`, flags(l), age(l.create_ts, now)]);
      for (const line of table([['LOBBY ID', 'MODE', 'PLAYERS', 'FLAGS', 'AGE'], ...rows])) io.out(line);
    });
  program.command('logs <lobby_id>')
    .description("a lobby's log: its game server's output and Tavern's own lines, merged in time and marked (out|, err|, [tavern])")
    .option('-f, --follow', 'keep printing new lines until interrupted')
    .option('--stream <stream>', 'only this stream, as written: std_out, std_err or tavern')
    .action(async (lobbyId: string, options: { follow?: boolean; stream?: string }, cmd: Command) => {
      const only = STREAMS.find((s) => s === options.stream);
      if (options.stream !== undefined && only === undefined) throw new UsageError('--stream must be std_out, std_err or tavern');
      const { api, globals } = await apiFor(cmd, io);
      const gameId = await resolveGameId(api, globals.game);
      await printLogs(api, gameId, lobbyId, only === undefined ? STREAMS : [only], options.follow === true, io);
    });
}
