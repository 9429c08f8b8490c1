/**
 * `tavern deploy` refuses unknown and forbidden keys of rivet.toml, its overlays and `-o` before
 * anything is built or uploaded (issue 37 item 2): each named as written, with file and line.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Api } from '../../src/cli/api.js';
import { checkConfigKeys, configKeys } from '../../src/cli/config-keys.js';
import { deploy, type DeployIo } from '../../src/cli/deploy.js';
import { ConfigError, loadProjectConfig } from '../../src/cli/project-config.js';
import { RIVET_TOML } from './game-folder.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tavern-keys-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** The message of the ConfigError the project's keys give, or '' when they pass. */
async function refusal(files: Record<string, string>, options: { namespace?: string; overrides?: string[] } = {}): Promise<string> {
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const project = await loadProjectConfig(dir, options);
  try {
    checkConfigKeys(project.config, project.sources);
    return '';
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.message.replaceAll(`${dir}/`, '');
  }
}

describe('checkConfigKeys', () => {
  it('names a typo in rivet.toml as written, with its file, line and the key it meant', async () => {
    expect(await refusal({ 'rivet.toml': '[matchmaker]\nmax_player = 32\ntier = "basic-1d1"\n' })).toBe(
      'the version config has 1 key Tavern does not take (nothing was built or uploaded):\n'
      + '  rivet.toml:2: matchmaker.max_player: unknown key `max_player`: did you mean `max_players`?',
    );
  });

  it('names a typo given with -o by the override, and lists every key of every layer in file order', async () => {
    const text = await refusal({
      'rivet.toml': '[matchmaker.docker]\ndockerfile = "Dockerfile"\nprivileged = true\n\n[matchmaker.docker.ports.game]\nport = 7777\nprotocl = "udp"\n',
      'rivet.prod.yaml': 'matchmaker:\n  game_modes:\n    default:\n      max-players: 8\n',
    }, { namespace: 'prod', overrides: ['matchmaker.max_player=8'] });
    expect(text.split('\n')).toEqual([
      'the version config has 4 keys Tavern does not take (nothing was built or uploaded):',
      '  rivet.toml:3: matchmaker.docker.privileged: `privileged` is never allowed: lobbies run unprivileged, with no added capabilities: Tavern sets their user, security profile and runtime',
      '  rivet.toml:7: matchmaker.docker.ports.game.protocl: unknown key `protocl`: did you mean `protocol`?',
      '  rivet.prod.yaml:4: matchmaker.game_modes.default.max-players: unknown key `max-players`: did you mean `max_players`?',
      '  -o matchmaker.max_player=8: matchmaker.max_player: unknown key `max_player`: did you mean `max_players`?',
    ]);
  });

  it('names every file that sets the key, and finds keys in JSON and in arrays of tables', async () => {
    expect(await refusal({ 'rivet.json': '{\n  "matchmaker": {\n    "tire": "basic-1d1"\n  }\n}\n', 'rivet.qa.json': '{"matchmaker": {"tire": "x"}}' }, { namespace: 'qa' }))
      .toContain('  rivet.json:3, rivet.qa.json:1: matchmaker.tire: unknown key `tire`: did you mean `tier`?');
    expect(await refusal({ 'rivet.toml': '[[matchmaker.lobby_groups]]\nname_id = "a"\n[[matchmaker.lobby_groups]]\nname_id = "b"\nmax_players_normel = 4\n' }))
      .toContain('  rivet.toml:5: matchmaker.lobby_groups.1.max_players_normel: unknown key `max_players_normel`: did you mean `max_players_normal`?');
  });

  it('passes the sample game (CLI-only keys included) and a config whose only problems are not keys', async () => {
    expect(await refusal({ 'rivet.toml': RIVET_TOML })).toBe('');
    expect(await refusal({ 'rivet.toml': '[matchmaker]\nmax_players = -3\n' })).toBe('');
  });
});

describe('configKeys', () => {
  it('turns a problem path back into the keys as written', () => {
    const config = { matchmaker: { game_modes: { 'a-b': { max_player: 1 } }, lobby_groups: [{ 'name-id': 'x' }] } };
    expect(configKeys(config, ['matchmaker', 'game-modes', '*a-b*', '*max_player*'])).toEqual(['matchmaker', 'game_modes', 'a-b', 'max_player']);
    expect(configKeys(config, ['matchmaker', 'lobby-groups', '0', '*name-id*'])).toEqual(['matchmaker', 'lobby_groups', '0', 'name-id']);
    expect(configKeys(config, ['matchmaker', 'nothing'])).toBeUndefined();
  });
});

describe('tavern deploy', () => {
  it('refuses a typo before it calls the server at all', async () => {
    await writeFile(join(dir, 'rivet.toml'), RIVET_TOML);
    const calls: string[] = [];
    const api: Api = {
      origin: 'http://127.0.0.1:1',
      call: (method: string, path: string) => {
        calls.push(`${method} ${path}`);
        return Promise.reject(new Error('no server here'));
      },
      download: () => Promise.reject(new Error('no server here')),
    };
    const io: DeployIo = {
      cwd: dir, docker: () => { throw new Error('no docker needed'); }, progress: { start: () => undefined, add: () => undefined, stop: () => undefined },
      log: () => undefined, commandOutput: process.stderr, now: () => new Date(0),
    };
    await expect(deploy(api, { namespace: 'prod', overrides: ['matchmaker.max_player=8'] }, io))
      .rejects.toThrow('-o matchmaker.max_player=8: matchmaker.max_player: unknown key `max_player`: did you mean `max_players`?');
    expect(calls).toEqual([]);
  });
});
