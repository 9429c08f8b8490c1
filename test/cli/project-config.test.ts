/** The project config: three formats, overlays, overrides, CLI-only keys; errors name file, line and field. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/errors.js';
import { ConfigError, loadProjectConfig, overrideValue, parseConfigText } from '../../src/cli/project-config.js';
import { cliOnlyProblems, dockerBlocks, stripCliKeys } from '../../src/cli/version-config.js';
import { RIVET_TOML } from './game-folder.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tavern-config-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('reading the config', () => {
  it('reads the Rivet example layout from TOML', () => {
    const config = parseConfigText('rivet.toml', RIVET_TOML);
    expect(config).toMatchObject({
      matchmaker: { max_players: 32, tier: 'basic-1d1', regions: { 'lnd-sfo': {}, 'lnd-fra': {} }, docker: { dockerfile: 'Dockerfile', ports: { default: { port: 3000 } } }, game_modes: { default: {} } },
      cdn: { build_output: './dist/' }, kv: {}, identity: {},
    });
  });

  it('reads YAML and JSON alike', () => {
    const want = { matchmaker: { max_players: 4 } };
    expect(parseConfigText('rivet.yaml', 'matchmaker:\n  max_players: 4\n')).toEqual(want);
    expect(parseConfigText('rivet.json', '{"matchmaker": {"max_players": 4}}')).toEqual(want);
  });

  it('names the file, line and column of a syntax error in each format', () => {
    expect(() => parseConfigText('rivet.toml', '[matchmaker]\nmax_players = = 3\n')).toThrow(/^rivet\.toml:2:\d+: /);
    expect(() => parseConfigText('rivet.yaml', 'matchmaker:\n  a: 1\n b: [\n')).toThrow(/^rivet\.yaml:\d+:\d+: /);
    expect(() => parseConfigText('rivet.json', '{\n"a": 1,\n}')).toThrow(/^rivet\.json:3:1: /);
    expect(() => parseConfigText('rivet.json', '[1]')).toThrow(ConfigError);
  });

  it('merges the namespace overlay over the base, then -o overrides', async () => {
    await writeFile(join(dir, 'rivet.toml'), '[matchmaker]\nmax_players = 32\ntier = "basic-1d1"\n[matchmaker.docker]\ndockerfile = "Dockerfile"\n');
    await writeFile(join(dir, 'rivet.staging.yaml'), 'matchmaker:\n  max_players: 8\n');
    const { config, files } = await loadProjectConfig(dir, { namespace: 'staging', overrides: ['matchmaker.tier=basic-1d2', 'matchmaker.docker.env={"A":"1"}'] });
    expect(files.map((f) => f.slice(dir.length + 1))).toEqual(['rivet.toml', 'rivet.staging.yaml']);
    expect(config).toEqual({ matchmaker: { max_players: 8, tier: 'basic-1d2', docker: { dockerfile: 'Dockerfile', env: { A: '1' } } } });
    expect((await loadProjectConfig(dir, { namespace: 'prod' })).files).toHaveLength(1);
  });

  it('says where it looked when there is no config, and rejects malformed overrides as usage', async () => {
    await expect(loadProjectConfig(dir, {})).rejects.toThrow(`no rivet.toml (or rivet.yaml, rivet.json, tavern.toml) in ${dir}`);
    expect(() => overrideValue('novalue')).toThrow(UsageError);
    expect(() => overrideValue('a..b=1')).toThrow(UsageError);
    expect(() => overrideValue('a={oops')).toThrow(UsageError);
  });
});

describe('CLI-only keys', () => {
  const config = {
    matchmaker: {
      dev_hostname: 'x', docker: { dockerfile: 'Dockerfile', build_args: { A: 'b' }, ports: {} },
      game_modes: { default: {}, big: { docker: { image: 'game:big', env: {} } } },
    },
    cdn: { build_command: 'make', build_output: 'dist', site_id: undefined },
  };

  it('finds the matchmaker docker block and each mode one', () => {
    expect(dockerBlocks(config).map((b) => [b.path, b.mode])).toEqual([['matchmaker.docker', undefined], ['matchmaker.game_modes.big.docker', 'big']]);
  });

  it('removes them before the config is sent', () => {
    expect(stripCliKeys(config)).toEqual({
      matchmaker: { docker: { ports: {} }, game_modes: { default: {}, big: { docker: { env: {} } } } },
      cdn: { site_id: undefined },
    });
  });

  it('names the field of a wrong type, and a block that gives both dockerfile and image', () => {
    expect(() => cliOnlyProblems({ matchmaker: { docker: { dockerfile: 3 } } }, 'rivet.toml')).toThrow('rivet.toml: matchmaker.docker.dockerfile must be a non-empty string');
    expect(() => cliOnlyProblems({ cdn: { build_output: [] } }, 'rivet.toml')).toThrow('cdn.build_output must be');
    expect(() => cliOnlyProblems({ matchmaker: { docker: { dockerfile: 'D', image: 'i' } } }, 'x')).toThrow('give dockerfile or image, not both');
    expect(() => cliOnlyProblems(config, 'rivet.toml')).not.toThrow();
  });
});
