import { describe, expect, it } from 'vitest';
import { parseVersionConfig } from '../../../src/core/config/parse.js';
import type { Problem, VersionConfig } from '../../../src/core/config/types.js';

const paths = (problems: readonly Problem[]): string[] => problems.map((p) => p.path.join('.'));

function parsed(input: unknown): VersionConfig {
  const r = parseVersionConfig(input);
  if (!r.ok) throw new Error(`unexpected problems: ${paths(r.error).join(', ')}`);
  return r.value;
}

/** Problems are compared as sets: their order follows parse order, which is not part of the contract. */
function expectProblems(input: unknown, expected: readonly string[]): void {
  const r = parseVersionConfig(input);
  expect(r.ok ? [] : [...paths(r.error)].sort()).toEqual([...expected].sort());
}

describe('parseVersionConfig', () => {
  it('parses a full spec-spelled config into camelCase', () => {
    const config = parsed({
      scripts: { build: 'make' },
      kv: {},
      engine: { engine_a: {}, html5: {}, custom: {} },
      cdn: {
        build_command: 'npm run build', build_env: { NODE_ENV: 'production' }, build_output: 'dist', site_id: 'site',
        routes: [{ glob: '**/*.html', priority: 10, middlewares: [{ kind: { custom_headers: { headers: [{ name: 'X-A', value: 'b' }] } } }] }],
      },
      matchmaker: {
        max_players: 16, tier: 'basic-1d2', idle_lobbies: { min: 1, max: 2 }, dev_hostname: 'localhost',
        regions: { 'lnd-atl': { tier: 'basic-1d4', idle_lobbies: { min: 0, max: 1 } } },
        container: { image_id: 'build-1', args: ['--x'], env: { A: '1' }, network_mode: 'host', build_args: { B: '2' }, image: 'img', dockerfile: 'Dockerfile',
          ports: { game: { port: 7777, protocol: 'udp', proxy: 'game-proxy', dev_port: 7777, dev_protocol: 'udp', dev_port_range: { min: 1, max: 2 } } } },
        lobby_ready_timeout: 60_000, player_connect_timeout: 30_000, player_max_lifetime: 3_600_000,
        actions: { create: { enabled: true, enable_public: true } },
        captcha: { requests_before_reverify: 15, verification_ttl: 3_600_000, captcha_b: { site_key: 's', secret_key: 'k' } },
        game_modes: {
          default: { listable: false, taggable: true, allow_dynamic_max_players: true, max_players_direct: 4, max_players_party: 2,
            actions: { find: { enabled: false, verification: { url: 'https://x.example/v', headers: { A: 'b' } } } }, lobby_ready_timeout: 1 },
        },
      },
    });
    expect(config.scripts).toEqual({ build: 'make' });
    expect(config.engine).toEqual({ unity: {}, html5: {}, custom: {} });
    expect(config.cdn?.routes?.[0]?.middlewares[0]?.kind.customHeaders?.headers).toEqual([{ name: 'X-A', value: 'b' }]);
    expect(config.cdn?.buildEnv).toEqual({ NODE_ENV: 'production' });
    const mm = config.matchmaker;
    expect(mm?.container?.ports?.['game']).toEqual({ port: 7777, protocol: 'udp', proxy: 'game_guard', devPort: 7777, devProtocol: 'udp', devPortRange: { min: 1, max: 2 } });
    expect(mm?.container?.networkMode).toBe('host');
    expect(mm?.regions?.['lnd-atl']).toEqual({ tier: 'basic-1d4', idleLobbies: { min: 0, max: 1 } });
    expect(mm?.lobbyReadyTimeout).toBe(60_000);
    expect(mm?.playerMaxLifetime).toBe(3_600_000);
    expect(mm?.actions?.create).toEqual({ enabled: true, enablePublic: true });
    expect(mm?.captcha).toEqual({ requestsBeforeReverify: 15, verificationTtl: 3_600_000, turnstile: { siteKey: 's', secretKey: 'k' } });
    expect(mm?.gameModes?.['default']).toMatchObject({ listable: false, taggable: true, allowDynamicMaxPlayers: true, maxPlayersDirect: 4, lobbyReadyTimeout: 1 });
    expect(mm?.gameModes?.['default']?.actions?.find?.verification).toEqual({ url: 'https://x.example/v', headers: { A: 'b' } });
  });

  it('deep-freezes the result and gives user-keyed maps a null prototype', () => {
    const config = parsed({ matchmaker: { game_modes: { default: { regions: { a: {} } } } } });
    expect(Object.isFrozen(config.matchmaker?.gameModes?.['default']?.regions)).toBe(true);
    expect(Object.getPrototypeOf(config.matchmaker?.gameModes)).toBeNull();
    expect(Object.hasOwn(config.matchmaker?.gameModes ?? {}, 'toString') || 'toString' in (config.matchmaker?.gameModes ?? {})).toBe(false);
  });

  it('accepts docker as an alias of container at both levels and reports both spellings as a conflict', () => {
    const config = parsed({ matchmaker: { docker: { image_id: 'a' }, game_modes: { m: { docker: { image_id: 'b' } } } } });
    expect(config.matchmaker?.container?.imageId).toBe('a');
    expect(config.matchmaker?.gameModes?.['m']?.container?.imageId).toBe('b');
    expectProblems({ matchmaker: { container: {}, docker: {}, game_modes: { m: { container: {}, docker: {} } } } }, [
      'config.matchmaker.docker.conflicts-with-container',
      'config.matchmaker.game-modes.*m*.docker.conflicts-with-container',
    ]);
  });

  it('accepts both captcha spellings; captcha_a needs both keys, hcaptcha may carry only level', () => {
    const captcha = (provider: object): unknown => ({ matchmaker: { captcha: { requests_before_reverify: 1, verification_ttl: 2, ...provider } } });
    expect(parsed(captcha({ hcaptcha: { level: 'easy' } })).matchmaker?.captcha?.hcaptcha).toEqual({ level: 'easy' });
    expect(parsed(captcha({ captcha_a: { site_key: 'a', secret_key: 'b' } })).matchmaker?.captcha?.hcaptcha).toEqual({ siteKey: 'a', secretKey: 'b' });
    expect(parsed(captcha({ turnstile: { site_key: 'a', secret_key: 'b' } })).matchmaker?.captcha?.turnstile).toEqual({ siteKey: 'a', secretKey: 'b' });
    expectProblems(captcha({ captcha_a: { site_key: 'a' } }), ['config.matchmaker.captcha.captcha-a.secret-key.missing']);
    expectProblems(captcha({ hcaptcha: { level: 'hard' } }), ['config.matchmaker.captcha.hcaptcha.level.invalid']);
    expect(parsed(captcha({ captcha_a: { site_key: 'a', secret_key: 'b', level: 'moderate' } })).matchmaker?.captcha?.hcaptcha).toEqual({ siteKey: 'a', secretKey: 'b', level: 'moderate' });
    expectProblems(captcha({ captcha_a: { site_key: 'a', secret_key: 'b', level: 'hard' } }), ['config.matchmaker.captcha.captcha-a.level.invalid']);
    expectProblems(captcha({ hcaptcha: {}, captcha_a: { site_key: 'a', secret_key: 'b' }, turnstile: { site_key: 'a', secret_key: 'b' }, captcha_b: { site_key: 'a', secret_key: 'b' } }), [
      'config.matchmaker.captcha.hcaptcha.conflicts-with-captcha-a',
      'config.matchmaker.captcha.turnstile.conflicts-with-captcha-b',
    ]);
    expectProblems({ matchmaker: { captcha: { turnstile: { site_key: 'a', secret_key: 'b' } } } }, [
      'config.matchmaker.captcha.requests-before-reverify.missing',
      'config.matchmaker.captcha.verification-ttl.missing',
    ]);
  });

  it('accepts both engine spellings; unreal/engine_b and engine_c need game_module, godot does not', () => {
    expect(parsed({ engine: { unreal: { game_module: 'G' } } }).engine).toEqual({ unreal: { gameModule: 'G' } });
    expect(parsed({ engine: { engine_b: { game_module: 'G' } } }).engine).toEqual({ unreal: { gameModule: 'G' } });
    expect(parsed({ engine: { godot: {} } }).engine).toEqual({ godot: {} });
    expect(parsed({ engine: { engine_c: { game_module: 'M' } } }).engine).toEqual({ godot: { gameModule: 'M' } });
    expect(parsed({ engine: { unity: {} } }).engine).toEqual({ unity: {} });
    expectProblems({ engine: { engine_c: {}, unreal: {}, unity: {}, engine_a: {} } }, [
      'config.engine.unity.conflicts-with-engine-a',
      'config.engine.unreal.game-module.missing',
      'config.engine.engine-c.game-module.missing',
    ]);
  });

  it('says in words what a wrongly typed or out-of-range value should be', () => {
    const parsed = parseVersionConfig({ matchmaker: { max_players: '8', docker: { args: 'node', ports: { d: { port: -1, protocol: 'htp' } } }, game_modes: [] } });
    if (parsed.ok) throw new Error('parsed');
    const said = Object.fromEntries(parsed.error.map((p) => [p.path.join('.'), p.message]));
    expect(said).toEqual({
      'config.matchmaker.max-players.invalid-type': 'expected a whole number, got a string',
      'config.matchmaker.docker.args.invalid-type': 'expected a list, got a string',
      'config.matchmaker.docker.ports.*d*.port.negative': 'expected a whole number from 0 to 4294967295, got -1',
      'config.matchmaker.docker.ports.*d*.protocol.invalid': 'expected one of http, https, tcp, tcp_tls, udp, got "htp"',
      'config.matchmaker.game-modes.invalid-type': 'expected a table (an object), got a list',
    });
  });

  it('maps every proxy spelling and refuses unknown enumeration values', () => {
    const ports = (proxy: string): unknown => ({ matchmaker: { container: { ports: { p: { proxy } } } } });
    for (const spelling of ['game_guard', 'game-proxy', 'game_proxy']) {
      expect(parsed(ports(spelling)).matchmaker?.container?.ports?.['p']?.proxy).toBe('game_guard');
    }
    expect(parsed(ports('none')).matchmaker?.container?.ports?.['p']?.proxy).toBe('none');
    expectProblems(ports('gg'), ['config.matchmaker.container.ports.*p*.proxy.invalid']);
    expectProblems({ matchmaker: { container: { network_mode: 'nat', ports: { p: { protocol: 'quic' } } } } }, [
      'config.matchmaker.container.network-mode.invalid',
      'config.matchmaker.container.ports.*p*.protocol.invalid',
    ]);
  });

  it('converts deprecated lobby_groups into game modes, replacing game_modes', () => {
    const config = parsed({
      matchmaker: {
        game_modes: { ignored: {} },
        lobby_groups: [{
          name_id: 'default',
          regions: [{ region_id: 'lnd-atl', tier_name_id: 'basic-1d1', idle_lobbies: { min_idle_lobbies: 1, max_idle_lobbies: 3 } }],
          max_players_normal: 8, max_players_direct: 10, max_players_party: 4,
          runtime: { docker: {
            build_id: 'b1', args: ['-x'], env_vars: [{ key: 'K', value: 'V' }], network_mode: 'host',
            ports: [{ label: 'game', target_port: 7777, proxy_protocol: 'udp', proxy_kind: 'game_guard' },
              { label: 'range', port_range: { min: 26000, max: 26010 }, proxy_protocol: 'udp', proxy_kind: 'none' }],
          } },
        }],
      },
    });
    expect(Object.keys(config.matchmaker?.gameModes ?? {})).toEqual(['default']);
    expect(config.matchmaker?.gameModes?.['default']).toEqual({
      regions: { 'lnd-atl': { tier: 'basic-1d1', idleLobbies: { min: 1, max: 3 } } },
      maxPlayers: 8, maxPlayersDirect: 10, maxPlayersParty: 4,
      container: {
        imageId: 'b1', args: ['-x'], env: { K: 'V' }, networkMode: 'host',
        ports: { game: { port: 7777, protocol: 'udp', proxy: 'game_guard' }, range: { portRange: { min: 26000, max: 26010 }, protocol: 'udp', proxy: 'none' } },
      },
    });
  });

  it('reports repeated and malformed lobby group keys at their list index', () => {
    expectProblems({ matchmaker: { lobby_groups: [{ name_id: 'a' }, { name_id: 'a' }, {}, { name_id: '__proto__' },
      { name_id: 'b', runtime: { docker: { env_vars: [{ key: 'K', value: 'a' }, { key: 'K', value: 'b' }] } } }] } }, [
      'config.matchmaker.lobby-groups.1.name-id.not-unique',
      'config.matchmaker.lobby-groups.2.name-id.missing',
      'config.matchmaker.lobby-groups.3.name-id.invalid-key',
      'config.matchmaker.lobby-groups.4.runtime.docker.env-vars.1.key.not-unique',
    ]);
  });

  it('names the key field of a repeated port label or region id in a lobby group', () => {
    const port = { label: 'game', target_port: 7777, proxy_protocol: 'udp' };
    expectProblems({ matchmaker: { lobby_groups: [{ name_id: 'a', regions: [{ region_id: 'fra' }, { region_id: 'fra' }], runtime: { docker: { ports: [port, port] } } }] } }, [
      'config.matchmaker.lobby-groups.0.regions.1.region-id.not-unique',
      'config.matchmaker.lobby-groups.0.runtime.docker.ports.1.label.not-unique',
    ]);
  });

  it('refuses unknown keys, naming each as written', () => {
    expectProblems({ unknown: 1, matchmaker: { nope: [], game_modes: { m: { what: null } } } }, [
      'config.*unknown*.unknown-key',
      'config.matchmaker.*nope*.unknown-key',
      'config.matchmaker.game-modes.*m*.*what*.unknown-key',
    ]);
  });

  it('reports wrong types, arrays and null as objects, and bad numbers', () => {
    expectProblems(null, ['config.invalid-type']);
    expectProblems([], ['config.invalid-type']);
    expectProblems({ cdn: null, kv: [], scripts: { a: 1 }, matchmaker: { max_players: 1.5, max_players_direct: -1, max_players_party: 4_294_967_296, tier: 3, game_modes: { m: { listable: 'yes', lobby_ready_timeout: Number.MAX_SAFE_INTEGER + 2 } } } }, [
      'config.cdn.invalid-type',
      'config.kv.invalid-type',
      'config.matchmaker.max-players.not-an-integer',
      'config.matchmaker.max-players-direct.negative',
      'config.matchmaker.max-players-party.too-large',
      'config.matchmaker.tier.invalid-type',
      'config.matchmaker.game-modes.*m*.lobby-ready-timeout.too-large',
      'config.matchmaker.game-modes.*m*.listable.invalid-type',
      'config.scripts.*a*.invalid-type',
    ]);
    expect(parsed({ matchmaker: { max_players: 4_294_967_295, player_max_lifetime: Number.MAX_SAFE_INTEGER } }).matchmaker?.maxPlayers).toBe(4_294_967_295);
    expectProblems({ matchmaker: { max_players: Number.NaN, tier: Infinity } }, ['config.matchmaker.max-players.not-an-integer', 'config.matchmaker.tier.invalid-type']);
  });

  it('normalizes -0 to 0', () => {
    expect(Object.is(parsed({ matchmaker: { max_players: -0 } }).matchmaker?.maxPlayers, 0)).toBe(true);
  });

  it('refuses prototype-polluting map keys and never copies them', () => {
    const input: unknown = JSON.parse('{"scripts": {"__proto__": "x", "ok": "y"}, "matchmaker": {"game_modes": {"constructor": {}, "prototype": {}}, "container": {"env": {"__proto__": "z"}}}}');
    expectProblems(input, [
      'config.matchmaker.container.env.*__proto__*.invalid-key',
      'config.matchmaker.game-modes.*constructor*.invalid-key',
      'config.matchmaker.game-modes.*prototype*.invalid-key',
      'config.scripts.*__proto__*.invalid-key',
    ]);
    expect(({} as Record<string, unknown>)['x']).toBeUndefined();
  });

  it('reads own properties only', () => {
    const inherited = Object.create({ matchmaker: { max_players: 'bad' } }) as object;
    expect(parsed(inherited)).toEqual({});
  });

  it('collects every problem, not only the first', () => {
    expectProblems({
      cdn: { routes: [{ glob: 1, priority: -1 }] },
      identity: { display_names: [1], custom_avatars: [{}] },
      matchmaker: { regions: { a: { idle_lobbies: { min: 'x' } } }, actions: { find: {}, create: { enabled: true, enable_public: 1 } } },
    }, [
      'config.cdn.routes.0.middlewares.missing',
      'config.cdn.routes.0.glob.invalid-type',
      'config.cdn.routes.0.priority.negative',
      'config.identity.display-names.0.invalid-type',
      'config.identity.custom-avatars.0.upload-id.missing',
      'config.matchmaker.regions.*a*.idle-lobbies.max.missing',
      'config.matchmaker.regions.*a*.idle-lobbies.min.invalid-type',
      'config.matchmaker.actions.find.enabled.missing',
      'config.matchmaker.actions.create.enable-public.invalid-type',
    ]);
  });

  it('parses identity and cdn middlewares without headers', () => {
    const config = parsed({
      identity: { display_names: ['a'], avatars: ['b'], custom_display_names: [{ display_name: 'c' }], custom_avatars: [{ upload_id: 'd' }] },
      cdn: { routes: [{ glob: 'a', priority: 0, middlewares: [{ kind: {} }] }] },
    });
    expect(config.identity).toEqual({ displayNames: ['a'], avatars: ['b'], customDisplayNames: [{ displayName: 'c' }], customAvatars: [{ uploadId: 'd' }] });
    expect(config.cdn?.routes?.[0]?.middlewares).toEqual([{ kind: {} }]);
  });
});
