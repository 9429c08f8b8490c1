/**
 * Recorded demand on the command line: `tavern demand export` writes a namespace's requests as the
 * JSONL `tavern sim --recorded` reads, and `tavern sim calibrate` writes a scenario fitted to what
 * the server observed (see `src/sim/scenario/calibrate.ts`).
 */
import { createWriteStream } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Command } from 'commander';
import { parseDuration } from '../core/duration.js';
import { calibrateScenario, type Observed, type RegionDescription } from '../sim/scenario/calibrate.js';
import { parseScenario } from '../sim/scenario/parse.js';
import type { Api } from './api.js';
import { apiFor, type CommandIo } from './commands.js';
import { UsageError } from './errors.js';
import { findNamespace, getGame, resolveGameId } from './game.js';

/** `--since 24h` → the window `[now - 24h, now)` as query parameters. */
const windowQuery = (since: string, now: number): { query: string; from: number; to: number } => {
  const ms = parseDuration(since);
  if (ms === undefined) throw new UsageError(`--since ${since}: expected a duration such as 90m, 24h or 7d`);
  const from = now - ms;
  return { query: new URLSearchParams({ start: String(from), end: String(now) }).toString(), from, to: now };
};

interface Target {
  readonly gameId: string;
  readonly nsId: string;
  readonly nsName: string;
  readonly versionId: string;
}

const target = async (api: Api, game: string | undefined, namespace: string): Promise<Target> => {
  const gameId = await resolveGameId(api, game);
  const ns = findNamespace(await getGame(api, gameId), namespace);
  return { gameId, nsId: ns.namespace_id, nsName: ns.name_id, versionId: ns.version_id };
};

const demandPath = (t: Target): string => `/cloud/games/${t.gameId}/namespaces/${t.nsId}/analytics/matchmaker/demand`;

/**
 * Streams the export into `out` (through a temporary file renamed at the end, so a failed export
 * never leaves a partial file behind); returns the number of lines.
 */
async function download(api: Api, path: string, out: string): Promise<number> {
  const res = await api.download(path);
  const partial = `${out}.partial`;
  const file = createWriteStream(partial);
  let lines = 0;
  try {
    if (res.body !== null) {
      for await (const chunk of res.body) {
        for (const byte of chunk) if (byte === 10) lines += 1;
        if (!file.write(chunk)) await new Promise<void>((r) => file.once('drain', () => r()));
      }
    }
    await new Promise<void>((ok, fail) => file.end((e?: Error | null) => (e ? fail(e) : ok())));
    await rename(partial, out);
    return lines;
  } catch (error) {
    file.destroy();
    await rm(partial, { force: true });
    throw error;
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function registerDemand(program: Command, io: CommandIo): void {
  program.command('demand').description("a namespace's recorded matchmaking demand").command('export')
    .description('write the requests of a recent window as the JSONL `tavern sim --recorded` reads')
    .option('-n, --namespace <ns>', 'namespace', 'prod')
    .option('--since <duration>', 'how far back the window starts (e.g. 90m, 24h, 7d)', '24h')
    .requiredOption('-o, --out <file>', 'where to write the JSONL')
    .action(async (options: { namespace: string; since: string; out: string }, cmd: Command) => {
      const w = windowQuery(options.since, Date.now());
      const { api, globals } = await apiFor(cmd, io);
      const t = await target(api, globals.game, options.namespace);
      const out = resolve(io.cwd, options.out);
      const lines = await download(api, `${demandPath(t)}?${w.query}`, out);
      if (lines === 0) io.err(`no requests in ${t.nsName} between ${iso(w.from)} and ${iso(w.to)}: wrote an empty file ${options.out}`);
      else io.out(`${lines} requests of ${t.nsName} between ${iso(w.from)} and ${iso(w.to)} written to ${options.out}`);
    });
}

export const CALIBRATE_USAGE = `usage: tavern sim calibrate -n NS [--since 24h] -o scenario.json [--seed N]
  fits a scenario to what the server observed of the namespace (its current version; per region
  lobby start delay, crash rate, session lengths; per game mode and region a synthetic demand)`;

/**
 * The options `tavern sim calibrate` takes (node's `parseArgs`).
 *
 * @example
 * parseArgs({ args: ['-n', 'prod', '-o', 'scenario.json'], options: CALIBRATE_OPTIONS }).values.out; // 'scenario.json'
 */
export const CALIBRATE_OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  since: { type: 'string' },
  out: { type: 'string', short: 'o' },
  seed: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

interface CalibrateOptions {
  readonly namespace: string;
  readonly since: string;
  readonly out: string;
  readonly seed?: number;
}

const calibrateOptions = (args: readonly string[]): CalibrateOptions | 'help' => {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: CALIBRATE_OPTIONS });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n${CALIBRATE_USAGE}`);
  }
  const v = parsed.values;
  if (v.help === true) return 'help';
  if (v.out === undefined) throw new UsageError(`-o scenario.json is required\n${CALIBRATE_USAGE}`);
  if (v.seed !== undefined && (!/^\d+$/.test(v.seed) || Number(v.seed) > 0xffffffff)) throw new UsageError(`--seed must be an integer in 0..4294967295, got ${v.seed}`);
  return { namespace: v.namespace ?? 'prod', since: v.since ?? '24h', out: v.out, ...(v.seed === undefined ? {} : { seed: Number(v.seed) }) };
};

/**
 * `tavern sim calibrate ...args`: fetches the namespace's version and what the server observed,
 * fits the scenario, prints each figure with its sample count, checks the scenario parses and
 * writes it.
 */
export async function calibrateCommand(args: readonly string[], cmd: Command, io: CommandIo): Promise<void> {
  const options = calibrateOptions(args);
  if (options === 'help') {
    io.out(CALIBRATE_USAGE);
    return;
  }
  const w = windowQuery(options.since, Date.now());
  const { api, globals } = await apiFor(cmd, io);
  const t = await target(api, globals.game, options.namespace);
  const { version } = await api.call<{ version: { config: unknown } }>('GET', `/cloud/games/${t.gameId}/versions/${t.versionId}`);
  const observed = await api.call<Observed & { lobby_count_max: number; regions_info: RegionDescription[] }>('GET', `${demandPath(t)}/observed?${w.query}`);
  const { scenario, report } = calibrateScenario({
    version: version.config, observed, regions: observed.regions_info, lobbyCountMax: observed.lobby_count_max,
    name: `${t.nsName}-calibrated`, ...(options.seed === undefined ? {} : { seed: options.seed }),
  });
  for (const line of report) io.out(line);
  const check = parseScenario(scenario, { externalDemand: true });
  if (!check.ok) throw new Error(`the fitted scenario is invalid: ${check.error.map((p) => p.path.join('.')).join(', ')}`);
  await writeFile(resolve(io.cwd, options.out), `${JSON.stringify(scenario, null, 2)}\n`);
  io.out(`scenario written to ${options.out}`);
}
