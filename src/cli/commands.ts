/**
 * The cloud commands of `tavern` (beside `sim`, `serve` and `deploy`): login through a device
 * link, games, namespaces, tokens, versions, live lobbies and lobby logs. Each prints plain
 * lines on stdout; failures throw (main.ts prints them and picks the exit code).
 */
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { createApi, type Api } from './api.js';
import { UsageError } from './errors.js';
import { previewOnly } from './deploy.js';
import { previewFlags, printPreview } from './preview.js';
import { findNamespace, getGame, resolveGameId } from './game.js';
import { registerLobbies } from './lobbies.js';
import { readSaved, requireToken, resolveApi, resolveToken, saveLogin, type GlobalOptions } from './settings.js';
import { table } from './table.js';

export interface CommandIo {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

export interface Globals extends GlobalOptions {
  readonly game?: string;
}

/** The API client for the command's global options (the token required unless `optional`). */
export async function apiFor(cmd: Command, io: CommandIo, optional = false): Promise<{ api: Api; globals: Globals }> {
  const globals = cmd.optsWithGlobals<Globals>();
  const saved = await readSaved(io.cwd);
  const token = resolveToken(globals, io.env, saved);
  return { api: createApi(resolveApi(globals, io.env, saved), optional ? token : requireToken(token)), globals };
}

function registerLogin(program: Command, io: CommandIo): void {
  program
    .command('login')
    .description('get a cloud token through a device link (wire.md §6.4) and save it in .tavern/cloud_token')
    .option('--complete <device_link_token>', 'complete a link for --game (run by someone whose token may access that game)')
    .action(async (options: { complete?: string }, cmd: Command) => {
      if (options.complete !== undefined) {
        const { api, globals } = await apiFor(cmd, io);
        const gameId = await resolveGameId(api, globals.game);
        await api.call('POST', '/cloud/devices/links/complete', { device_link_token: options.complete, game_id: gameId });
        io.out(`device link completed for game ${gameId}`);
        return;
      }
      const { api } = await apiFor(cmd, io, true);
      const link = await api.call<{ device_link_token: string; device_link_url: string }>('POST', '/cloud/devices/links', {});
      io.err(`To link this device, someone whose token may access the game runs:\n  tavern login --complete ${link.device_link_token} --game <game>\nwaiting...`);
      for (;;) {
        const q = new URLSearchParams({ device_link_token: link.device_link_token, watch_index: '0' });
        const status = await api.call<{ cloud_token?: string }>('GET', `/cloud/devices/links?${q.toString()}`);
        if (status.cloud_token === undefined) continue;
        const file = await saveLogin(io.cwd, { token: status.cloud_token, api: api.origin });
        io.out(`logged in; token saved in ${file}`);
        return;
      }
    });
}

function registerGames(program: Command, io: CommandIo): void {
  const game = program.command('game').description('games (creating one needs the admin token)');
  game.command('create <name_id>').description('create a game; prints its id')
    .option('--display-name <name>', 'shown name (default: the name id)')
    .action(async (nameId: string, options: { displayName?: string }, cmd: Command) => {
      const { api } = await apiFor(cmd, io);
      const { game_id } = await api.call<{ game_id: string }>('POST', '/cloud/games', { name_id: nameId, display_name: options.displayName ?? nameId, developer_group_id: randomUUID() });
      io.out(game_id);
    });
  game.command('list').description('the games this token may see').action(async (_o: unknown, cmd: Command) => {
    const { api } = await apiFor(cmd, io);
    const { games } = await api.call<{ games: { game_id: string; name_id: string; display_name: string }[] }>('GET', '/cloud/games');
    for (const line of table([['GAME ID', 'NAME', 'DISPLAY NAME'], ...games.map((g) => [g.game_id, g.name_id, g.display_name])])) io.out(line);
  });
  const ns = program.command('namespace').description("a game's namespaces (prod, staging...)");
  ns.command('create <name_id>').description('create a namespace running the newest version')
    .option('--display-name <name>', 'shown name (default: the name id)')
    .action(async (nameId: string, options: { displayName?: string }, cmd: Command) => {
      const { api, globals } = await apiFor(cmd, io);
      const gameId = await resolveGameId(api, globals.game);
      const g = await getGame(api, gameId);
      const newest = [...g.versions].sort((a, b) => b.create_ts.localeCompare(a.create_ts))[0];
      if (newest === undefined) throw new UsageError(`game ${g.name_id} has no version yet`);
      const { namespace_id } = await api.call<{ namespace_id: string }>('POST', `/cloud/games/${gameId}/namespaces`, { name_id: nameId, display_name: options.displayName ?? nameId, version_id: newest.version_id });
      io.out(namespace_id);
    });
  ns.command('list').description("the game's namespaces and the version each runs").action(async (_o: unknown, cmd: Command) => {
    const { api, globals } = await apiFor(cmd, io);
    const g = await getGame(api, await resolveGameId(api, globals.game));
    const names = new Map(g.versions.map((v) => [v.version_id, v.display_name]));
    for (const line of table([['NAMESPACE ID', 'NAME', 'VERSION'], ...g.namespaces.map((n) => [n.namespace_id, n.name_id, names.get(n.version_id) ?? n.version_id])])) io.out(line);
  });
}

function registerTokens(program: Command, io: CommandIo): void {
  program.command('token').description('tokens').command('create')
    .description('create a token: cloud (for the CLI), public (for game clients) or development (a local server)')
    .requiredOption('--kind <kind>', 'cloud | public | development')
    .option('-n, --namespace <ns>', 'namespace of a public or development token', 'prod')
    .option('--hostname <host>', 'development: where your local game server listens', '127.0.0.1')
    .option('--port <label=port/protocol...>', 'development: a port, e.g. default=7777/udp', ['default=7777/udp'])
    .action(async (options: { kind: string; namespace: string; hostname: string; port: string[] }, cmd: Command) => {
      const { api, globals } = await apiFor(cmd, io);
      const gameId = await resolveGameId(api, globals.game);
      if (options.kind === 'cloud') {
        io.out((await api.call<{ token: string }>('POST', `/cloud/games/${gameId}/tokens/cloud`, {})).token);
        return;
      }
      if (options.kind !== 'public' && options.kind !== 'development') throw new UsageError(`--kind must be cloud, public or development, not ${options.kind}`);
      const ns = findNamespace(await getGame(api, gameId), options.namespace);
      const path = `/cloud/games/${gameId}/namespaces/${ns.namespace_id}/tokens/${options.kind}`;
      const body = options.kind === 'public' ? {} : { hostname: options.hostname, ports: Object.fromEntries(options.port.map(parsePort)) };
      io.out((await api.call<{ token: string }>('POST', path, body)).token);
    });
}

/** `default=7777/udp` → `['default', {port: 7777, protocol: 'udp'}]`. */
export function parsePort(spec: string): [string, { port: number; protocol: string }] {
  const m = /^([a-z0-9_-]+)=(\d{1,5})\/(udp|tcp|http|https|tcp_tls)$/.exec(spec);
  if (m === null) throw new UsageError(`--port ${spec}: expected label=port/protocol, e.g. default=7777/udp`);
  return [m[1] as string, { port: Number(m[2]), protocol: m[3] as string }];
}

function registerVersions(program: Command, io: CommandIo): void {
  const version = program.command('version').description("a game's versions");
  version.command('preview <config>').description('preview a config (rivet.toml, or a version config in JSON) on the recorded demand of a namespace against its live version; nothing is created')
    .option('-n, --namespace <ns>', 'namespace whose demand and live version to compare with', 'prod')
    .option('-o, --override <key=json...>', 'override a config value, e.g. -o matchmaker.max_players=16', [])
    .option('--since <duration>', 'the window (default 7d, or whatever is recorded)')
    .option('--seed <n>', 'the seed (default 1)')
    .option('--json', 'print the preview as one JSON object')
    .action(async (file: string, options: { namespace: string; override: string[]; since?: string; seed?: string; json?: boolean }, cmd: Command) => {
      const flags = previewFlags({ ...options, preview: true });
      const { api, globals } = await apiFor(cmd, io);
      const preview = await previewOnly(api, { namespace: options.namespace, overrides: options.override, configPath: file, ...flags, ...(globals.game === undefined ? {} : { game: globals.game }) }, {
        cwd: io.cwd, log: io.err, commandOutput: process.stderr, now: () => new Date(),
        docker: () => { throw new Error('a preview builds nothing'); },
        progress: { start: () => undefined, add: () => undefined, stop: () => undefined },
      });
      printPreview(preview, options.json === true, io);
    });
  version.command('list').action(async (_o: unknown, cmd: Command) => {
    const { api, globals } = await apiFor(cmd, io);
    const g = await getGame(api, await resolveGameId(api, globals.game));
    const live = new Map(g.namespaces.map((n) => [n.version_id, n.name_id]));
    const rows = [...g.versions].sort((a, b) => b.create_ts.localeCompare(a.create_ts)).map((v) => [v.version_id, v.display_name, v.create_ts, live.get(v.version_id) ?? '']);
    for (const line of table([['VERSION ID', 'NAME', 'CREATED', 'LIVE IN'], ...rows])) io.out(line);
  });
  version.command('publish <version>').description('make a version (id or name) live in a namespace')
    .option('-n, --namespace <ns>', 'namespace', 'prod')
    .action(async (wanted: string, options: { namespace: string }, cmd: Command) => {
      const { api, globals } = await apiFor(cmd, io);
      const gameId = await resolveGameId(api, globals.game);
      const g = await getGame(api, gameId);
      const v = g.versions.find((x) => x.version_id === wanted || x.display_name === wanted);
      if (v === undefined) throw new UsageError(`game ${g.name_id} has no version ${wanted}`);
      const ns = findNamespace(g, options.namespace);
      await api.call('PUT', `/cloud/games/${gameId}/namespaces/${ns.namespace_id}/version`, { version_id: v.version_id });
      io.out(`${v.display_name} (${v.version_id}) is live in ${ns.name_id}`);
    });
}

export function registerCloudCommands(program: Command, io: CommandIo): void {
  registerLogin(program, io);
  registerGames(program, io);
  registerTokens(program, io);
  registerVersions(program, io);
  registerLobbies(program, io);
}
