import { describe, expect, it } from 'vitest';
import { parseVersionConfig } from '../../../src/core/config/parse.js';
import { validateVersion } from '../../../src/core/config/validate.js';
import type { ValidationContext } from '../../../src/core/config/types.js';
import { portEnvNames } from '../../../src/core/config/validate-container.js';
import { type LobbyPortAllocation, portEnv } from '../../../src/core/ports/index.js';
import { wireReservedEnvNames } from './wire-env.js';

const ctx: ValidationContext = {
  regions: new Set(['lnd-atl', 'fra']),
  versionDisplayNames: new Set(['taken']),
  build: (id) => (id === 'gone' ? 'missing' : id === 'partial' ? 'incomplete' : 'complete'),
  site: (id) => (id === 'gone' ? 'missing' : id === 'partial' ? 'incomplete' : 'complete'),
};

const MM = {
  regions: { 'lnd-atl': {} },
  container: { image_id: 'build', ports: { game: { port: 7777, protocol: 'udp' } } },
  game_modes: { default: {} },
};

const withMm = (extra: object): object => ({ matchmaker: { ...MM, ...extra } });
const mode = (m: object, extra: object = {}): object => withMm({ game_modes: { default: m }, ...extra });

function problemsOf(wire: unknown, displayName: unknown = 'v1', context: ValidationContext = ctx): string[] {
  const parsed = parseVersionConfig(wire);
  if (!parsed.ok) throw new Error(`parse: ${parsed.error.map((p) => p.path.join('.')).join(', ')}`);
  return validateVersion({ displayName, config: parsed.value }, context).map((p) => p.path.join('.')).sort();
}

const expectProblems = (wire: unknown, expected: readonly string[], displayName?: unknown): void => {
  expect(problemsOf(wire, displayName)).toEqual([...expected].sort());
};

describe('validateVersion: display name', () => {
  it('accepts a valid configuration and name', () => {
    expectProblems(withMm({}), []);
    expectProblems({}, [], 'Version 1 ✓');
  });

  it.each([
    ['', ['display-name.too-short']],
    ['x'.repeat(129), ['display-name.too-long']],
    ['é'.repeat(65), ['display-name.too-long']],
    [' lead', ['display-name.invalid']],
    ['trail ', ['display-name.invalid']],
    ['double  space', ['display-name.invalid']],
    ['tab\there', ['display-name.invalid']],
    ['nbsp\u00a0here', ['display-name.invalid']],
    ['taken', ['display-name.not-unique']],
    [42, ['display-name.invalid-type']],
  ] as const)('%j → %j', (name, expected) => {
    expectProblems({}, expected, name);
  });

  it('reports a missing name', () => {
    expect(validateVersion({ displayName: undefined, config: {} }, ctx).map((p) => p.path)).toEqual([['display-name', 'missing']]);
  });

  it('accepts exactly 128 bytes', () => {
    expectProblems({}, [], 'é'.repeat(64));
  });
});

describe('validateVersion: cdn', () => {
  const route = (r: object): object => ({ glob: 'a', priority: 0, middlewares: [], ...r });
  const headers = (h: readonly object[]): object => ({ kind: { custom_headers: { headers: h } } });

  it('requires a known, complete site', () => {
    expectProblems({ cdn: {} }, ['config.cdn.no-site-id']);
    expectProblems({ cdn: { site_id: 'gone' } }, ['config.cdn.site-id.not-found']);
    expectProblems({ cdn: { site_id: 'partial' } }, ['config.cdn.site-id.upload-incomplete']);
  });

  it('checks globs, priorities and route counts', () => {
    expectProblems({ cdn: { site_id: 's', routes: [route({ glob: '' }), route({ glob: 'a**' }), route({ glob: '**/**/x' }), route({ glob: '**/x' }), route({ priority: 101 })] } }, [
      'config.cdn.routes.0.glob.invalid',
      'config.cdn.routes.1.glob.invalid',
      'config.cdn.routes.3.glob.not-unique',
      'config.cdn.routes.4.priority.too-high',
    ]);
    const many = Array.from({ length: 33 }, (_, i) => route({ glob: `p${i}` }));
    expectProblems({ cdn: { site_id: 's', routes: many } }, ['config.cdn.routes-meta.too-many']);
  });

  it('checks middlewares and headers', () => {
    const tooManyHeaders = Array.from({ length: 33 }, (_, i) => ({ name: `h${i}`, value: '' }));
    expectProblems({ cdn: { site_id: 's', routes: [
      route({ middlewares: [headers([{ name: '', value: 'v' }, { name: 'x'.repeat(513), value: 'v' }, { name: 'ok', value: 'v'.repeat(1025) }, { name: 'bad name', value: 'a\r\nb' }]), headers([])] }),
      route({ glob: 'b', middlewares: [headers(tooManyHeaders)] }),
      route({ glob: 'c', middlewares: Array.from({ length: 33 }, () => ({ kind: {} })) }),
    ] } }, [
      'config.cdn.routes.0.middlewares.0.custom-headers.headers.0.name.invalid',
      'config.cdn.routes.0.middlewares.0.custom-headers.headers.1.name.too-long',
      'config.cdn.routes.0.middlewares.0.custom-headers.headers.2.value.too-long',
      'config.cdn.routes.0.middlewares.0.custom-headers.headers.3.name.invalid',
      'config.cdn.routes.0.middlewares.0.custom-headers.headers.3.value.invalid',
      'config.cdn.routes.0.middlewares.1.not-unique',
      'config.cdn.routes.1.middlewares.0.custom-headers.headers-meta.too-many',
      'config.cdn.routes.2.middlewares-meta.too-many',
    ]);
  });
});

describe('validateVersion: captcha', () => {
  const captcha = (c: object): object => withMm({ captcha: { requests_before_reverify: 600, verification_ttl: 43_200_000, ...c } });

  it('accepts the limits and a level-only hcaptcha (23.2)', () => {
    expectProblems(captcha({ hcaptcha: { level: 'easy' } }), []);
  });

  it('checks limits, a provider, and key lengths', () => {
    expectProblems(captcha({ requests_before_reverify: 601, verification_ttl: 43_200_001 }), [
      'config.matchmaker.captcha.requests-before-reverify.too-high',
      'config.matchmaker.captcha.verification-ttl.too-high',
      'config.matchmaker.captcha-meta.must-have-one',
    ]);
    expectProblems(captcha({ turnstile: { site_key: '', secret_key: 'x'.repeat(43) } }), [
      'config.matchmaker.captcha.turnstile.site-key.too-short',
      'config.matchmaker.captcha.turnstile.secret-key.too-long',
    ]);
    expectProblems(captcha({ captcha_a: { site_key: 'x'.repeat(37), secret_key: '' } }), [
      'config.matchmaker.captcha.hcaptcha.site-key.too-long',
      'config.matchmaker.captcha.hcaptcha.secret-key.too-short',
    ]);
    expectProblems(captcha({ hcaptcha: { site_key: 'x' } }), ['config.matchmaker.captcha.hcaptcha.secret-key.required']);
    expectProblems(captcha({ turnstile: { site_key: 'x'.repeat(36), secret_key: 'y'.repeat(42) } }), []);
  });
});

describe('validateVersion: game modes', () => {
  it('needs 1–32 modes with ident names', () => {
    expectProblems(withMm({ game_modes: {} }), ['config.matchmaker.game-modes-meta.too-few']);
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`m${i}`, {}]));
    expectProblems(withMm({ game_modes: many }), ['config.matchmaker.game-modes-meta.too-many']);
    const names = { Upper: {}, 'a--b': {}, '-a': {}, 'a-': {}, ['x'.repeat(17)]: {}, 'ok-1': {} };
    expectProblems(withMm({ game_modes: names }), ['Upper', 'a--b', '-a', 'a-', 'x'.repeat(17)].map((n) => `config.matchmaker.game-modes.*${n}*.name-id-invalid`));
  });

  it('checks max players at the level where they are written, once', () => {
    expectProblems(withMm({ max_players: 0, max_players_direct: 257, game_modes: { a: {}, b: {} } }), [
      'config.matchmaker.max-players.too-low',
      'config.matchmaker.max-players-direct.too-high',
    ]);
    expectProblems(mode({ max_players: 256, max_players_direct: 1, max_players_party: 0 }), ['config.matchmaker.game-modes.*default*.max-players-party.too-low']);
  });

  it('checks regions, tiers and idle lobbies where they are written', () => {
    expectProblems(mode({ regions: { 'lnd-atl': { tier: 'basic-9d9' }, mars: {}, fra: { idle_lobbies: { min: 17, max: 33 } } }, tier: 'huge', idle_lobbies: { min: 3, max: 2 } }), [
      'config.matchmaker.game-modes.*default*.regions.*lnd-atl*.tier.not-found',
      'config.matchmaker.game-modes.*default*.regions.*mars*.not-found',
      'config.matchmaker.game-modes.*default*.regions.*fra*.idle-lobbies.min-too-high',
      'config.matchmaker.game-modes.*default*.regions.*fra*.idle-lobbies.max-too-high',
      'config.matchmaker.game-modes.*default*.tier.not-found',
      'config.matchmaker.game-modes.*default*.idle-lobbies.min-gt-max',
    ]);
    expectProblems(withMm({ regions: { 'lnd-atl': {}, nowhere: {} }, tier: 'nope', game_modes: { a: {}, b: {} } }), [
      'config.matchmaker.regions.*nowhere*.not-found',
      'config.matchmaker.tier.not-found',
    ]);
    const parsed = parseVersionConfig(withMm({ regions: { nowhere: {} } }));
    if (!parsed.ok) throw new Error('parse');
    const unknown = validateVersion({ displayName: 'v1', config: parsed.value }, ctx).find((p) => p.path.includes('*nowhere*'));
    expect(unknown?.message).toBe('this server has no region nowhere; it runs: lnd-atl, fra (an operator adds regions with TAVERN_REGIONS)');
  });

  it('uses ctx.tiers instead of the catalogue when given', () => {
    const wire = mode({ tier: 'custom-tier' });
    expect(problemsOf(wire, 'v1', { ...ctx, tiers: new Set(['custom-tier']) })).toEqual([]);
    expect(problemsOf(mode({ tier: 'basic-1d1' }), 'v1', { ...ctx, tiers: new Set(['custom-tier']) })).toEqual(['config.matchmaker.game-modes.*default*.tier.not-found']);
  });

  it('needs at least one region after the cascade', () => {
    expectProblems(mode({ regions: {} }), ['config.matchmaker.game-modes.*default*.regions-meta.too-few']);
    expectProblems(withMm({ regions: {}, game_modes: { a: {}, b: {} } }), ['config.matchmaker.regions-meta.too-few']);
    expectProblems({ matchmaker: { container: MM.container, game_modes: { a: { regions: { fra: {} } }, b: {} } } }, ['config.matchmaker.game-modes.*b*.regions-meta.too-few']);
  });
});

describe('validateVersion: containers', () => {
  const container = (c: object, extra: object = {}): object => mode({ container: { image_id: 'build', ...c } }, extra);
  const at = 'config.matchmaker.game-modes.*default*';

  it('needs a runtime with a known, complete build after the cascade', () => {
    expectProblems({ matchmaker: { regions: MM.regions, game_modes: { a: {} } } }, ['config.matchmaker.game-modes.*a*.no-runtime']);
    expectProblems(withMm({ container: {}, game_modes: { a: {}, b: {} } }), ['config.matchmaker.no-build']);
    expectProblems(mode({ container: {} }), [`${at}.no-build`]);
    expectProblems(container({ image_id: 'gone' }), [`${at}.image-id.not-found`]);
    expectProblems(container({ image_id: 'partial' }), [`${at}.image-id.upload-incomplete`]);
  });

  it('checks args', () => {
    expectProblems(container({ args: ['', 'x'.repeat(513), 'a', 'a'] }), [`${at}.args.0.invalid`, `${at}.args.1.too-long`, `${at}.args.3.not-unique`]);
    expectProblems(container({ args: Array.from({ length: 65 }, (_, i) => `a${i}`) }), [`${at}.args-too-many`]);
  });

  it('checks env vars, including an empty value', () => {
    expectProblems(container({ env: { ['K'.repeat(65)]: 'v', EMPTY: '', LONG: 'v'.repeat(513), 'A=B': 'v' } }), [
      `${at}.env-vars.*${'K'.repeat(65)}*.key.too-long`,
      `${at}.env-vars.*EMPTY*.value.invalid`,
      `${at}.env-vars.*LONG*.value.too-long`,
      `${at}.env-vars.*A=B*.key.invalid`,
    ]);
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`K${i}`, 'v']));
    expectProblems(container({ env: many }), [`${at}.env-vars-too-many`]);
  });

  it('refuses env names the container receives, as it really receives them (defect 16)', () => {
    const ports = { 'my-game': { port: 7777, protocol: 'udp' }, range: { port_range: { min: 26000, max: 26001 }, protocol: 'udp', proxy: 'none' } };
    const env = {
      RIVET_TOKEN: 'x', RIVET_KV_API_URL: 'x', PORT_MY_GAME: 'x', PORT_RANGE_MIN_RANGE: 'x', PORT_RANGE_MAX_RANGE: 'x',
      // Names the container never receives: as written, Rivet's range form, a range's single-port form.
      PORT_my_game: 'fine', PORT_my_GAME: 'fine', PORT_RANGE_range_MIN: 'fine', PORT_RANGE_MIN_range: 'fine', PORT_RANGE: 'fine', RIVET_OTHER: 'fine',
    };
    expectProblems(container({ network_mode: 'host', ports, env }), ['RIVET_TOKEN', 'RIVET_KV_API_URL', 'PORT_MY_GAME', 'PORT_RANGE_MIN_RANGE', 'PORT_RANGE_MAX_RANGE']
      .map((k) => `${at}.env-vars.*${k}*.key.conflicts-with-default`));
  });

  it('refuses exactly the port names portEnv gives the running container', () => {
    const allocations: LobbyPortAllocation[] = [
      { label: 'game-udp', protocol: 'udp', proxy: 'game_guard', transport: 'udp', publicPort: 27001, hostPort: 21001, containerPort: 7777 },
      { label: 'p2p', protocol: 'udp', proxy: 'none', transport: 'udp', range: { min: 27100, max: 27199 } },
    ];
    const received = Object.keys(portEnv(allocations));
    const ports = { 'game-udp': { port: 7777, protocol: 'udp' }, p2p: { port_range: { min: 27100, max: 27199 }, protocol: 'udp', proxy: 'none' } };
    const env = Object.fromEntries(received.map((k) => [k, 'mine']));
    expect(received).toHaveLength(3);
    expectProblems(container({ network_mode: 'host', ports, env }), received.map((k) => `${at}.env-vars.*${k}*.key.conflicts-with-default`));
    expect(portEnvNames({ 'game-udp': { port: 7777 }, p2p: { portRange: { min: 27100, max: 27199 } } })).toEqual(received);
  });

  it('refuses every name of wire.md §5.4 and the deprecated RIVET_*_API_URL, and nothing that merely resembles them', () => {
    const reserved = wireReservedEnvNames();
    expect(new Set(reserved).size).toBe(22);
    const env = Object.fromEntries([...reserved, 'RIVET_KV_API_URL', 'RIVET_MATCHMAKER_API_URL', 'MY_RIVET_KV_API_URL', 'RIVET_KV_API_URL_2', 'RIVET__API_URL', 'RIVET_TOKENS', 'rivet_token'].map((k) => [k, 'x']));
    expectProblems(container({ env }), [...reserved, 'RIVET_KV_API_URL', 'RIVET_MATCHMAKER_API_URL'].map((k) => `${at}.env-vars.*${k}*.key.conflicts-with-default`));
  });

  it('merges env for the collision check and reports a matchmaker env name once, where written', () => {
    const wire = withMm({
      container: { image_id: 'b', env: { PORT_WEB: '1', RIVET_LOBBY_ID: 'x' }, ports: {} },
      game_modes: { a: { container: { image_id: 'b', ports: { web: { port: 80, protocol: 'http' } } } }, b: {} },
    });
    expectProblems(wire, ['config.matchmaker.env-vars.*PORT_WEB*.key.conflicts-with-default', 'config.matchmaker.env-vars.*RIVET_LOBBY_ID*.key.conflicts-with-default']);
  });

  it('applies the port combination rules with their exact names', () => {
    const ports = {
      ok: { port: 80, protocol: 'http' },
      both: { port: 81, port_range: { min: 26000, max: 26001 }, protocol: 'tcp', proxy: 'none' },
      neither: { protocol: 'tcp' },
      'gg-range': { port_range: { min: 26000, max: 26001 }, protocol: 'udp' },
      'none-port': { port: 9000, protocol: 'udp', proxy: 'none' },
    };
    expectProblems(container({ ports }), [
      `${at}.ports.*both*.duplicate-port-and-port-range`,
      `${at}.ports.*neither*.missing-port-and-port-range`,
      `${at}.ports.*gg-range*.unsupported-port-range`,
      `${at}.ports.*none-port*.needs-host-network`,
    ]);
    const hostPorts = {
      gg: { port: 7777, protocol: 'udp' },
      single: { port: 9000, protocol: 'udp', proxy: 'none' },
      web: { port_range: { min: 26000, max: 26001 }, protocol: 'https', proxy: 'none' },
      range: { port_range: { min: 27000, max: 27010 }, protocol: 'udp', proxy: 'none' },
    };
    expectProblems(container({ network_mode: 'host', ports: hostPorts }), [`${at}.ports.*single*.unsupported-target-port`, `${at}.ports.*web*.needs-game-guard`]);
  });

  it('checks host ranges: bounds, order, overlap within a protocol', () => {
    const r = (min: number, max: number, protocol = 'udp'): object => ({ port_range: { min, max }, protocol, proxy: 'none' });
    const ports = { low: r(25999, 26000), high: r(31999, 32000), inverted: r(26100, 26050), a: r(26200, 26300), b: r(26300, 26400), c: r(26200, 26300, 'tcp') };
    expectProblems(container({ network_mode: 'host', ports }), [
      `${at}.ports.*low*.range-out-of-bounds`,
      `${at}.ports.*high*.range-out-of-bounds`,
      `${at}.ports.*inverted*.range-min-gt-max`,
      `${at}.ports.*b*.ranges-overlap`,
    ]);
  });

  it('checks labels, port/protocol uniqueness, port numbers and the port count', () => {
    const ports = { Bad_Label: { port: 1, protocol: 'udp' }, a: { port: 7000, protocol: 'udp' }, b: { port: 7000, protocol: 'udp' }, c: { port: 7000, protocol: 'tcp' }, d: { port: 70000 }, e: { port: 0 } };
    expectProblems(container({ ports }), [
      `${at}.ports.*Bad_Label*.label-invalid`,
      `${at}.ports.*b*.port-protocol-not-unique`,
      `${at}.ports.*d*.port-out-of-range`,
      `${at}.ports.*e*.port-out-of-range`,
    ]);
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`p${i}`, { port: 1000 + i }]));
    expectProblems(container({ ports: many }), [`${at}.ports-too-many`]);
  });
});

describe('validateVersion: verification', () => {
  const verify = (url: string, headers: object = {}): object => mode({ actions: { find: { enabled: true, verification: { url, headers } } } });
  const at = 'config.matchmaker.game-modes.*default*.find-config.verification-config';

  it('accepts a public https URL with valid headers', () => {
    expectProblems(verify('https://game.example.com:8443/verify?x=1', { Authorization: 'Bearer x' }), []);
  });

  it.each([
    ['ftp://example.com/', 'invalid-scheme'],
    ['example.com/verify', 'invalid-scheme'],
    ['http:example.com', 'no-host'],
    ['http://', 'no-host'],
    ['http://user:pw@example.com/', 'invalid'],
    ['http://127.0.0.1/', 'invalid-ip'],
    ['http://10.1.2.3/', 'invalid-ip'],
    ['http://[::1]/', 'invalid-ip'],
    ['http://localhost/', 'invalid'],
    ['http://printer.local/', 'invalid'],
    ['http://exa mple.com/', 'invalid'],
  ])('%s → url.%s', (url, name) => {
    expectProblems(verify(url), [`${at}.url.${name}`]);
  });

  it('checks headers and reports matchmaker-level and create/join verification at their own paths', () => {
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`h${i}`, 'v']));
    expectProblems(verify('https://a.example', { 'bad name': 'v', ok: 'line\nbreak' }), [`${at}.headers.*bad name*.invalid-name`, `${at}.headers.*ok*.invalid-value`]);
    expectProblems(verify('https://a.example', many), [`${at}.headers-meta.too-many`]);
    expectProblems(verify('https://a.example', Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`h${i}`, 'v']))), []);
    const v = { url: 'http://192.168.0.1', headers: {} };
    expectProblems(withMm({ actions: { join: { enabled: true, verification: v } }, game_modes: { a: { actions: { create: { enabled: true, verification: v } } }, b: {} } }), [
      'config.matchmaker.join-config.verification-config.url.invalid-ip',
      'config.matchmaker.game-modes.*a*.create-config.verification-config.url.invalid-ip',
    ]);
  });
});

describe('validateVersion: limits are inclusive, and each problem names its own field', () => {
  const container = (c: object, extra: object = {}): object => mode({ container: { image_id: 'build', ...c } }, extra);
  const at = 'config.matchmaker.game-modes.*default*';
  const route = (r: object): object => ({ glob: 'a', priority: 0, middlewares: [], ...r });

  it('accepts exactly 64 args, 64 env vars and 16 ports', () => {
    expectProblems(container({ args: Array.from({ length: 64 }, (_, i) => `a${i}`) }), []);
    expectProblems(container({ env: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`K${i}`, 'v'])) }), []);
    expectProblems(container({ ports: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`p${i}`, { port: 1000 + i }])) }), []);
  });

  it('reports an empty env name as an invalid key', () => {
    expectProblems(container({ env: { '': 'v' } }), [`${at}.env-vars.**.key.invalid`]);
  });

  it('accepts exactly 32 routes, 32 middlewares and 32 headers', () => {
    const headers = Array.from({ length: 32 }, (_, i) => ({ name: `h${i}`, value: 'v' }));
    const routes = Array.from({ length: 32 }, (_, i) => route({ glob: `p${i}` }));
    routes[0] = route({ glob: 'p0', middlewares: [{ kind: { custom_headers: { headers } } }, ...Array.from({ length: 31 }, () => ({ kind: {} }))] });
    expectProblems({ cdn: { site_id: 's', routes } }, []);
  });

  it('reports a header name that is too long once, as too long, even when it is not a token', () => {
    const name = 'a b'.repeat(200);
    expectProblems({ cdn: { site_id: 's', routes: [route({ middlewares: [{ kind: { custom_headers: { headers: [{ name, value: 'v' }] } } }] })] } }, [
      'config.cdn.routes.0.middlewares.0.custom-headers.headers.0.name.too-long',
    ]);
  });

  it('accepts exactly 32 game modes and a 16-character mode name', () => {
    expectProblems(withMm({ game_modes: Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`m${i}`, {}])) }), []);
    expectProblems(withMm({ game_modes: { ['m'.repeat(16)]: {} } }), []);
  });

  it('allows a port range only with host networking and no proxy', () => {
    const range = { port_range: { min: 26000, max: 26010 }, protocol: 'udp', proxy: 'none' };
    expectProblems(container({ ports: { r: range } }), [`${at}.ports.*r*.needs-host-network`]);
    expectProblems(container({ network_mode: 'host', ports: { r: { ...range, proxy: 'game_guard' } } }), [`${at}.ports.*r*.unsupported-port-range`]);
    expectProblems(container({ network_mode: 'host', ports: { r: range } }), []);
  });

  it('accepts a one-port range and a range ending at 31999; a range ending where an earlier one starts overlaps it', () => {
    const r = (min: number, max: number): object => ({ port_range: { min, max }, protocol: 'udp', proxy: 'none' });
    expectProblems(container({ network_mode: 'host', ports: { one: r(26000, 26000), top: r(31000, 31999) } }), []);
    expectProblems(container({ network_mode: 'host', ports: { a: r(26200, 26300), b: r(26100, 26200), c: r(26000, 26099) } }), [`${at}.ports.*b*.ranges-overlap`]);
  });
});
