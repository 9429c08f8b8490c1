/**
 * `tavern lobbies list` and `tavern logs`: a namespace's running lobbies, then the lobbies that
 * failed in the last 24 h (crash, failed start, ready timeout; `--all`: every stop) with why, the
 * exit code, how long they ran and their last log lines; and a lobby's log. The log shows by
 * default the game server's `std_out` and `std_err` and Tavern's own lines (its `tavern` stream)
 * merged in time, each line marked (`out| `, `err| `, `[tavern] `); `--stream` prints one stream
 * as it was written.
 */
import type { Command } from 'commander';
import type { Api } from './api.js';
import { apiFor, type CommandIo } from './commands.js';
import { UsageError } from './errors.js';
import { findNamespace, getGame, resolveGameId } from './game.js';
import { age, duration, table } from './table.js';

interface LobbyRow {
  lobby_id: string; lobby_group_name_id: string; region_id: string; create_ts: string;
  is_ready: boolean; is_idle: boolean; is_closed: boolean; total_player_count: number; max_players_normal: number;
}

type Stream = 'std_out' | 'std_err' | 'tavern';

interface StoppedRow {
  lobby_id: string; lobby_group_name_id: string; stop_ts: string; run_ms: number; reason: string; exit_code?: number;
  last_lines: { ts: string; stream: Stream; line: string }[];
}

/** Log lines shown under each stopped lobby. */
const STOPPED_LINES = 5;

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

/** The stopped-lobbies section of `tavern lobbies list`: a table whose rows are each followed by their last log lines. */
function printStopped(stopped: readonly StoppedRow[], all: boolean, now: number, io: CommandIo): void {
  if (stopped.length === 0) {
    if (all) io.out('\nno lobby stopped in the last 24 h');
    return;
  }
  io.out('');
  io.out(all
    ? 'recently stopped (last 24 h, newest first; tavern logs <lobby id> for the whole log):'
    : 'recently failed (last 24 h, newest first; --all for every stop; tavern logs <lobby id> for the whole log):');
  const rows = stopped.map((s) => [s.lobby_id, s.lobby_group_name_id, s.reason, s.exit_code === undefined ? '-' : String(s.exit_code), duration(s.run_ms), `${age(s.stop_ts, now)} ago`]);
  const [header, ...lines] = table([['LOBBY ID', 'MODE', 'REASON', 'EXIT', 'RAN', 'STOPPED'], ...rows]);
  io.out(header ?? '');
  for (const [i, s] of stopped.entries()) {
    io.out(lines[i] ?? '');
    for (const l of s.last_lines.slice(-STOPPED_LINES)) io.out(`    ${MARKS[l.stream]}${l.line}`);
  }
}

/** Lines of a stream before its tail that the tail leaves out (the stream's lines are numbered from 1). */
const leftOut = (page: LogsPage): number => Math.max(0, Number(page.watch.index) - page.lines.length);

/** A whole stream: pages from its first line up to `last` (what its tail said was the newest). */
async function wholeStream(api: Api, gameId: string, lobbyId: string, stream: Stream, last: string): Promise<LogsPage> {
  const lines: string[] = [];
  const timestamps: string[] = [];
  let index = '0';
  while (Number(index) < Number(last)) {
    const page = await readPage(api, gameId, lobbyId, stream, index);
    if (page.lines.length === 0) break;
    lines.push(...page.lines);
    timestamps.push(...page.timestamps);
    index = page.watch.index;
  }
  return { lines, timestamps, watch: { index } };
}

/**
 * `tavern logs`: one stream as written, or every stream merged and marked; each stream's newest
 * lines, saying how many earlier ones were left out, or every line (`all`); `follow` keeps each going.
 */
async function printLogs(api: Api, gameId: string, lobbyId: string, streams: readonly Stream[], options: { readonly follow: boolean; readonly all: boolean }, io: CommandIo): Promise<void> {
  const mark = streams.length > 1;
  let tails = await Promise.all(streams.map(async (s) => [s, await readPage(api, gameId, lobbyId, s)] as const));
  if (options.all) tails = await Promise.all(tails.map(async ([s, tail]) => [s, leftOut(tail) === 0 ? tail : await wholeStream(api, gameId, lobbyId, s, tail.watch.index)] as const));
  for (const line of mark ? mergeMarked(tails) : tails.flatMap(([, page]) => page.lines.map(decode))) io.out(line);
  const skipped = tails.filter(([, page]) => leftOut(page) > 0).map(([stream, page]) => `${leftOut(page)} of ${stream}`);
  if (skipped.length > 0) io.err(`(earlier lines left out: ${skipped.join(', ')}; \`tavern logs ${lobbyId} --all\` prints every line)`);
  if (!options.follow) return;
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
  program.command('lobbies').description('lobbies').command('list')
    .description("a namespace's running lobbies, then those that failed in the last 24 h (crash, failed start, ready timeout) with their last log lines")
    .option('-n, --namespace <ns>', 'namespace', 'prod')
    .option('-a, --all', 'list every lobby stopped in the last 24 h, not only the failures')
    .action(async (options: { namespace: string; all?: boolean }, cmd: Command) => {
      const { api, globals } = await apiFor(cmd, io);
      const gameId = await resolveGameId(api, globals.game);
      const game = await getGame(api, gameId);
      const ns = findNamespace(game, options.namespace);
      const regionNames = new Map((game.available_regions ?? []).map((r) => [r.region_id, r.region_name_id]));
      const analytics = `/cloud/games/${gameId}/namespaces/${ns.namespace_id}/analytics/matchmaker`;
      const all = options.all === true;
      const [{ lobbies }, { lobbies: stopped }] = await Promise.all([
        api.call<{ lobbies: LobbyRow[] }>('GET', `${analytics}/live`),
        api.call<{ lobbies: StoppedRow[] }>('GET', `${analytics}/stopped?failed=${String(!all)}`),
      ]);
      const now = Date.now();
      const flags = (l: LobbyRow): string => [l.is_ready ? 'ready' : 'starting', l.is_idle ? 'idle' : '', l.is_closed ? 'closed' : ''].filter((f) => f !== '').join(',');
      const rows = lobbies.map((l) => [l.lobby_id, regionNames.get(l.region_id) ?? l.region_id, l.lobby_group_name_id, `${l.total_player_count}/${l.max_players_normal}`, flags(l), age(l.create_ts, now)]);
      for (const line of table([['LOBBY ID', 'REGION', 'MODE', 'PLAYERS', 'FLAGS', 'AGE'], ...rows])) io.out(line);
      printStopped(stopped, all, now, io);
    });
  program.command('logs <lobby_id>')
    .description("a lobby's log: its game server's output and Tavern's own lines, merged in time and marked (out|, err|, [tavern])")
    .option('-f, --follow', 'keep printing new lines until interrupted')
    .option('--stream <stream>', 'only this stream, as written: std_out, std_err or tavern')
    .option('-a, --all', 'every line the server keeps, not only the newest (256 per stream)')
    .action(async (lobbyId: string, options: { follow?: boolean; stream?: string; all?: boolean }, cmd: Command) => {
      const only = STREAMS.find((s) => s === options.stream);
      if (options.stream !== undefined && only === undefined) throw new UsageError('--stream must be std_out, std_err or tavern');
      const { api, globals } = await apiFor(cmd, io);
      const gameId = await resolveGameId(api, globals.game);
      await printLogs(api, gameId, lobbyId, only === undefined ? STREAMS : [only], { follow: options.follow === true, all: options.all === true }, io);
    });
}
