/**
 * Unknown and forbidden keys in a version config (issues 36 item 5 and 37 item 2): refused with the
 * key as written and the closest known key; Docker host options refused with their reason; every
 * key the 23.2 client (and Rivet's CLI) can send still accepted.
 */
import { describe, expect, it } from 'vitest';
import { parseVersionConfig } from '../../../src/core/config/parse.js';
import { validateDevelopmentPorts } from '../../../src/core/config/dev-ports.js';
import type { Problem } from '../../../src/core/config/types.js';
import { loadSchemas } from './client-schema.js';

const schemas = loadSchemas();

const problems = (input: unknown): readonly Problem[] => {
  const r = parseVersionConfig(input);
  return r.ok ? [] : r.error;
};
const shown = (input: unknown): string[] => problems(input).map((p) => `${p.path.join('.')}${p.message === undefined ? '' : ` (${p.message})`}`).sort();
const stray = (p: Problem): boolean => ['unknown-key', 'forbidden-key'].includes(p.path[p.path.length - 1] ?? '');

/** Docker and Compose options a lobby never gets, as issue 36 lists them. */
const ISSUE_36 = ['privileged', 'cap_add', 'volumes', 'binds', 'devices', 'pid_mode', 'mounts', 'security_opt', 'ipc_mode', 'userns_mode',
  'cgroup_parent', 'sysctls', 'ulimits', 'runtime', 'extra_hosts', 'dns', 'user', 'network'];

describe('unknown keys', () => {
  it('refuse a typo with the key as written and the key it meant', () => {
    expect(shown({ matchmaker: { max_player: 32 } })).toEqual([
      'config.matchmaker.*max_player*.unknown-key (unknown key `max_player`: did you mean `max_players`?)',
    ]);
    expect(shown({ matchmaker: { docker: { ports: { game: { port: 7777, protocl: 'udp' } } } } })).toEqual([
      'config.matchmaker.docker.ports.*game*.*protocl*.unknown-key (unknown key `protocl`: did you mean `protocol`?)',
    ]);
  });

  it('say nothing more than "unknown" for a key far from every known one', () => {
    expect(shown({ matchmaker: { game_modes: { default: { colour: 'red' } } } })).toEqual([
      'config.matchmaker.game-modes.*default*.*colour*.unknown-key (unknown key `colour`)',
    ]);
  });

  it('are refused at every level of the config, in both shapes and every alias', () => {
    const paths = problems({
      scripts: { ok: 'x' }, skripts: {},
      kv: { anything: 1 },
      engine: { unity: { version: 1 }, godot: { game_modul: 'm' } },
      identity: { custom_avatars: [{ upload_id: 'u', size: 1 }] },
      cdn: { routes: [{ glob: 'a', priority: 1, middlewares: [{ kind: { custom_header: {} } }] }] },
      matchmaker: {
        captcha: { requests_before_reverify: 1, verification_ttl: 1, turnstile: { site_key: 'a', secret_key: 'b', sitekey: 'c' } },
        regions: { fra: { tier: 'basic-1d1', idle_lobbies: { min: 0, max: 1, mid: 0 } } },
        actions: { create: { enabled: true, enable_publc: true } },
        lobby_groups: [{ name_id: 'g', regions: [{ region_id: 'fra', idle_lobbies: { min_idle_lobbies: 0, max_idle_lobbies: 1, min: 0 } }],
          runtime: { docker: { ports: [{ label: 'p', target_port: 1, proxy_protocol: 'udp', proxy: 'none' }] } } }],
      },
    }).map((p) => p.path.join('.'));
    expect([...paths].sort()).toEqual([
      'config.*skripts*.unknown-key',
      'config.cdn.routes.0.middlewares.0.kind.*custom_header*.unknown-key',
      'config.engine.godot.*game_modul*.unknown-key',
      'config.engine.unity.*version*.unknown-key',
      'config.identity.custom-avatars.0.*size*.unknown-key',
      'config.kv.*anything*.unknown-key',
      'config.matchmaker.actions.create.*enable_publc*.unknown-key',
      'config.matchmaker.captcha.turnstile.*sitekey*.unknown-key',
      'config.matchmaker.lobby-groups.0.regions.0.idle-lobbies.*min*.unknown-key',
      'config.matchmaker.lobby-groups.0.runtime.docker.ports.0.*proxy*.unknown-key',
      'config.matchmaker.regions.*fra*.idle-lobbies.*mid*.unknown-key',
    ]);
  });

  it('name the dashed spelling as written and point at the wire key', () => {
    expect(shown({ matchmaker: { 'max-players': 8 } })).toEqual([
      'config.matchmaker.*max-players*.unknown-key (unknown key `max-players`: did you mean `max_players`?)',
    ]);
  });

  it('do not stop the other problems from being reported', () => {
    expect(problems({ matchmaker: { max_players: -1, tire: 'x' } }).map((p) => p.path.join('.')).sort()).toEqual([
      'config.matchmaker.*tire*.unknown-key',
      'config.matchmaker.max-players.negative',
    ]);
  });

  it('are still ignored in a development token\'s lobby ports (not a version config: Rivet ignored unknown request keys)', () => {
    expect(validateDevelopmentPorts([{ label: 'game', target_port: 7777, proxy_protocol: 'udp', proxy_kind: 'game_guard' }])).toEqual([]);
  });
});

describe('forbidden keys', () => {
  const docker = (extra: Record<string, unknown>): unknown => ({ matchmaker: { docker: { image_id: 'b', ...extra } } });

  it('refuse each Docker option of issue 36 in a docker block with the reason, never as a typo', () => {
    for (const key of ISSUE_36) {
      const found = problems(docker({ [key]: true }));
      expect(found.map((p) => p.path.join('.')), key).toEqual([`config.matchmaker.docker.*${key}*.forbidden-key`]);
      expect(found[0]?.message, key).toMatch(new RegExp(`^\`${key}\` is never allowed: lobbies|^\`${key}\` is never allowed: Tavern`));
      expect(found[0]?.message, key).not.toContain('did you mean');
    }
    expect(problems(docker({ privileged: true }))[0]?.message).toBe('`privileged` is never allowed: lobbies run unprivileged, with no added capabilities: Tavern sets their user, security profile and runtime');
    expect(problems(docker({ binds: ['/:/host'] }))[0]?.message).toBe('`binds` is never allowed: lobbies run unprivileged, with no host mounts or devices');
  });

  it('refuse them in every container block: top level, game mode, spec spelling, deprecated lobby group; in any casing', () => {
    const paths = problems({
      matchmaker: {
        container: { CapAdd: ['SYS_ADMIN'] },
        game_modes: { m: { docker: { 'security-opt': ['seccomp=unconfined'] } } },
        lobby_groups: [{ name_id: 'g', runtime: { docker: { Privileged: true, HostConfig: {} } } }],
      },
    }).map((p) => p.path.join('.'));
    expect([...paths].sort()).toEqual([
      'config.matchmaker.container.*CapAdd*.forbidden-key',
      'config.matchmaker.game-modes.*m*.docker.*security-opt*.forbidden-key',
      'config.matchmaker.lobby-groups.0.runtime.docker.*HostConfig*.forbidden-key',
      'config.matchmaker.lobby-groups.0.runtime.docker.*Privileged*.forbidden-key',
    ]);
  });

  it('cover every Docker Engine HostConfig option: each is forbidden or a known key spelled otherwise', () => {
    const hostConfig = schemas.hostConfigKeys();
    expect(hostConfig.length).toBeGreaterThan(50);
    for (const key of hostConfig) {
      const [found] = problems(docker({ [key]: null }));
      const name = found?.path[found.path.length - 1];
      if (name === 'forbidden-key') continue;
      // NetworkMode: Docker's spelling of `network_mode`, which a lobby may set (bridge or host).
      expect({ key, name, message: found?.message }).toEqual({ key, name: 'unknown-key', message: `unknown key \`${key}\`: did you mean \`network_mode\`?` });
    }
  });
});

describe('wire compatibility', () => {
  it('accepts a config with every key of the 23.2 client\'s schema, with no problem at all', () => {
    const { config, keys } = schemas.clientVersionConfig();
    expect(keys.length).toBeGreaterThan(100);
    expect(keys).toEqual(expect.arrayContaining(['config.matchmaker.lobby_groups.0.regions.0.idle_lobbies.max_idle_lobbies', 'config.cdn.routes.0.middlewares.0.kind.custom_headers.headers.0.value']));
    expect(shown(config)).toEqual([]);
  });

  it('accepts what only Rivet\'s CLI and the spec send (CLI-only keys, later spellings)', () => {
    const { config } = schemas.clientVersionConfig() as { config: { matchmaker: Record<string, Record<string, unknown>>; cdn: object } };
    const withCli = {
      ...config,
      scripts: { start: 'x' },
      engine: { custom: {}, engine_a: {} },
      cdn: { ...config.cdn, build_env: { A: 'b' } },
      matchmaker: {
        ...config.matchmaker,
        docker: { ...config.matchmaker['docker'], build_args: { A: 'b' } },
        captcha: { requests_before_reverify: 1, verification_ttl: 1, captcha_a: { site_key: 'a', secret_key: 'b', level: 'easy' }, captcha_b: { site_key: 'a', secret_key: 'b' } },
        lobby_ready_timeout: 1, player_connect_timeout: 1, player_max_lifetime: 1,
        lobby_groups: [{ name_id: 'g', runtime: { docker: { ports: [{ label: 'p', proxy_protocol: 'udp', proxy_kind: 'none' }] } } }],
      },
    };
    expect(shown(withCli)).toEqual([]);
    expect(problems(withCli).filter(stray)).toEqual([]);
  });
});
