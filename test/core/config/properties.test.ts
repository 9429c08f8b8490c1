/**
 * Properties of the version configuration: seeded errors are all reported at their paths, parsing
 * never throws, render/parse round-trips, and resolution always yields playable game modes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseVersionConfig } from '../../../src/core/config/parse.js';
import { renderVersionConfig } from '../../../src/core/config/parse-render.js';
import { resolveVersion } from '../../../src/core/config/resolve.js';
import { validateVersion } from '../../../src/core/config/validate.js';
import { TIER_CATALOGUE } from '../../../src/core/config/defaults.js';
import type { Problem, ValidationContext, VersionConfig } from '../../../src/core/config/types.js';

const REGIONS = ['lnd-atl', 'fra', 'sfo', 'tok'] as const;
const ctx: ValidationContext = { regions: new Set(REGIONS), versionDisplayNames: new Set(['taken']) };

// ---------------------------------------------------------------------------------------------
// A valid wire configuration (snake_case), every optional member sometimes present.

const chars = (set: string, min: number, max: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...set), minLength: min, maxLength: max });
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ident = fc.tuple(chars(LOWER, 1, 1), chars(LOWER + DIGITS, 0, 5), fc.option(chars(LOWER + DIGITS, 1, 4), { nil: undefined }))
  .map(([head, body, tail]) => (tail === undefined ? head + body : `${head}${body}-${tail}`));
const alnum = (max: number): fc.Arbitrary<string> => chars(LOWER + LOWER.toUpperCase() + DIGITS, 1, max);
const token = fc.tuple(chars(LOWER + LOWER.toUpperCase(), 1, 1), chars(LOWER + DIGITS + '-', 0, 8)).map(([a, b]) => a + b);
const envKey = fc.tuple(chars(LOWER.toUpperCase(), 1, 1), chars(LOWER.toUpperCase() + DIGITS + '_', 0, 8)).map(([a, b]) => a + b)
  .filter((k) => !k.startsWith('RIVET_') && !k.startsWith('PORT_'));
const uuid = fc.constantFrom<string>('6f1b0a52-3f0e-4c1b-9a51-0d6c2f6a8e01', '0b7d5b6e-52a3-4f4e-8f3e-3f1c9e2d7a10', 'build-1');
const idle = fc.integer({ min: 0, max: 16 }).chain((min) => fc.integer({ min, max: 32 }).map((max) => ({ min, max })));
const tier = fc.constantFrom(...TIER_CATALOGUE);
const players = fc.integer({ min: 1, max: 256 });
const millis = fc.integer({ min: 1, max: 86_400_000 });

const regions = fc.dictionary(fc.constantFrom(...REGIONS), fc.record({ tier, idle_lobbies: idle }, { requiredKeys: [] }), { minKeys: 1, maxKeys: 4 });

const singlePorts = fc
  .uniqueArray(fc.record({ label: ident, port: fc.integer({ min: 1000, max: 65_535 }), protocol: fc.constantFrom('http', 'https', 'tcp', 'tcp_tls', 'udp'), proxy: fc.constantFrom('game_guard', 'game-proxy') }, { requiredKeys: ['label', 'port'] }), { selector: (p) => p.label, maxLength: 4 })
  .map((ports) => ports.filter((p, i) => ports.findIndex((q) => q.port === p.port && (q.protocol ?? 'https') === (p.protocol ?? 'https')) === i));

const hostRanges = fc.uniqueArray(fc.record({ block: fc.integer({ min: 0, max: 59 }), width: fc.integer({ min: 0, max: 99 }), protocol: fc.constantFrom('tcp', 'udp'), label: ident }), { selector: (r) => r.block, maxLength: 3 })
  .map((ranges) => ranges.map((r) => ({ label: `r${r.block}`, port_range: { min: 26_000 + r.block * 100, max: 26_000 + r.block * 100 + r.width }, protocol: r.protocol, proxy: 'none' })));

type WirePort = { label: string; port?: number; port_range?: { min: number; max: number }; protocol?: string; proxy?: string };

const toPorts = (ports: readonly WirePort[]): Record<string, Omit<WirePort, 'label'>> =>
  Object.fromEntries(ports.map(({ label, ...rest }) => [label, rest]));

function containerArb(network: 'bridge' | 'host'): fc.Arbitrary<WireContainer> {
  const ports = network === 'bridge' ? singlePorts : fc.tuple(singlePorts, hostRanges).map(([s, r]) => [...s, ...r]);
  return fc.record({
    image_id: uuid,
    args: fc.uniqueArray(chars(LOWER, 1, 6).map((a) => `--${a}`), { maxLength: 3 }),
    env: fc.dictionary(envKey, alnum(10), { maxKeys: 4 }),
    network_mode: fc.constant(network),
    ports: ports.map(toPorts),
  }, { requiredKeys: network === 'host' ? ['image_id', 'network_mode'] : ['image_id'] });
}

interface WireContainer {
  image_id?: string;
  args?: string[];
  env?: Record<string, string>;
  network_mode?: string;
  ports?: Record<string, Omit<WirePort, 'label'>>;
}

const verification = fc.record({ url: fc.constantFrom<string>('https://verify.example.com/x', 'http://game.example.org:8080/v?a=b'), headers: fc.dictionary(token, alnum(8), { maxKeys: 3 }) });
const action = fc.record({ enabled: fc.boolean(), verification, identity_requirement: fc.constantFrom('none', 'guest') }, { requiredKeys: ['enabled'] });
const createAction = fc.record({ enabled: fc.boolean(), verification, enable_public: fc.boolean(), enable_private: fc.boolean(), max_lobbies_per_identity: fc.nat(10) }, { requiredKeys: ['enabled'] });
const actions = fc.record({ find: action, join: action, create: createAction }, { requiredKeys: [] });

const settings = {
  regions, max_players: players, max_players_direct: players, max_players_party: players, tier, idle_lobbies: idle, actions,
  lobby_ready_timeout: millis, player_connect_timeout: millis, player_max_lifetime: millis,
};

const gameMode = fc.record({
  ...settings,
  docker: fc.constantFrom('bridge' as const, 'host' as const).chain(containerArb),
  listable: fc.boolean(), taggable: fc.boolean(), allow_dynamic_max_players: fc.boolean(),
}, { requiredKeys: [] });

const captcha = fc.record({
  requests_before_reverify: fc.integer({ min: 0, max: 600 }),
  verification_ttl: fc.integer({ min: 0, max: 43_200_000 }),
  provider: fc.oneof(
    fc.record({ turnstile: fc.record({ site_key: alnum(36), secret_key: alnum(42) }) }),
    fc.record({ hcaptcha: fc.record({ level: fc.constantFrom('easy', 'always_on') }) }),
    fc.record({ captcha_a: fc.record({ site_key: alnum(36), secret_key: alnum(42) }) }),
  ),
}).map(({ provider, ...rest }) => ({ ...rest, ...provider }));

const route = fc.record({
  priority: fc.integer({ min: 0, max: 100 }),
  middlewares: fc.array(fc.record({ kind: fc.record({ custom_headers: fc.record({ headers: fc.array(fc.record({ name: token, value: alnum(12) }), { maxLength: 3 }) }) }, { requiredKeys: [] }) }), { maxLength: 1 }),
});
const cdn = fc.record({
  site_id: uuid,
  routes: fc.uniqueArray(fc.tuple(chars(LOWER, 1, 5), fc.constantFrom('', '/*', '/**/*.html')).map(([a, b]) => a + b), { maxLength: 4 }).chain((globs) =>
    fc.tuple(...globs.map(() => route)).map((rs) => rs.map((r, i) => ({ glob: globs[i] ?? '', ...r })))),
});

const validWire = fc.record({
  cdn,
  matchmaker: fc.record({
    ...settings,
    container: containerArb('bridge'),
    regions,
    captcha,
    game_modes: fc.dictionary(ident, gameMode, { minKeys: 1, maxKeys: 4 }),
  }, { requiredKeys: ['container', 'regions', 'game_modes'] }),
}, { requiredKeys: ['matchmaker'] });

type Wire = typeof validWire extends fc.Arbitrary<infer T> ? T : never;
type WireMode = Wire['matchmaker']['game_modes'][string];

const displayName = fc.array(alnum(10), { minLength: 1, maxLength: 4 }).map((words) => words.join(' ')).filter((n) => n !== 'taken');

function parsed(wire: unknown): VersionConfig {
  const r = parseVersionConfig(wire);
  if (!r.ok) throw new Error(`parse: ${r.error.map((p) => p.path.join('.')).join(', ')}`);
  return r.value;
}

const sortedPaths = (problems: readonly Problem[]): string[] => problems.map((p) => p.path.join('.')).sort();

// ---------------------------------------------------------------------------------------------
// Seeded errors. Generated single ports are ≥ 1000 and args never contain a second `-`, so what is
// injected here (ports 1 and 2, `--dup-x`) never collides with what was generated.

const MM = 'config.matchmaker';
type Injection = (wire: Wire, modeIndex: number) => { readonly path: string; readonly displayName?: string };

function pickMode(wire: Wire, index: number): [string, WireMode] {
  const entries = Object.entries(wire.matchmaker.game_modes);
  const entry = entries[index % entries.length];
  if (entry === undefined) throw new Error('no mode');
  return entry;
}

const SEMANTIC: Readonly<Record<string, Injection>> = {
  idleMinGtMax: (w, i) => {
    const [name, mode] = pickMode(w, i);
    mode.idle_lobbies = { min: 5, max: 2 };
    return { path: `${MM}.game-modes.*${name}*.idle-lobbies.min-gt-max` };
  },
  unknownRegion: (w, i) => {
    const [name, mode] = pickMode(w, i);
    mode.regions = { ...mode.regions, nowhere: {} };
    return { path: `${MM}.game-modes.*${name}*.regions.*nowhere*.not-found` };
  },
  noPlayers: (w, i) => {
    const [name, mode] = pickMode(w, i);
    mode.max_players = 0;
    return { path: `${MM}.game-modes.*${name}*.max-players.too-low` };
  },
  unknownTier: (w, i) => {
    const [name, mode] = pickMode(w, i);
    mode.tier = 'basic-99d1';
    return { path: `${MM}.game-modes.*${name}*.tier.not-found` };
  },
  privateVerification: (w, i) => {
    const [name, mode] = pickMode(w, i);
    mode.actions = { ...mode.actions, join: { enabled: true, verification: { url: 'http://192.168.1.10/verify', headers: {} } } };
    return { path: `${MM}.game-modes.*${name}*.join-config.verification-config.url.invalid-ip` };
  },
  emptyEnvValue: (w, i) => {
    const [name, mode] = pickMode(w, i);
    mode.docker = { image_id: 'b', ...mode.docker, env: { ...mode.docker?.env, EMPTY_VALUE: '' } };
    return { path: `${MM}.game-modes.*${name}*.env-vars.*EMPTY_VALUE*.value.invalid` };
  },
  badLabel: (w) => {
    w.matchmaker.container.ports = { ...w.matchmaker.container.ports, Bad_Label: { port: 1, protocol: 'tcp' } };
    return { path: `${MM}.ports.*Bad_Label*.label-invalid` };
  },
  needsHostNetwork: (w) => {
    w.matchmaker.container.ports = { ...w.matchmaker.container.ports, raw: { port: 2, protocol: 'udp', proxy: 'none' } };
    return { path: `${MM}.ports.*raw*.needs-host-network` };
  },
  reservedEnv: (w) => {
    w.matchmaker.container.env = { ...w.matchmaker.container.env, RIVET_TOKEN: 'x' };
    return { path: `${MM}.env-vars.*RIVET_TOKEN*.key.conflicts-with-default` };
  },
  duplicateArg: (w) => {
    const args = [...(w.matchmaker.container.args ?? []), '--dup-x', '--dup-x'];
    w.matchmaker.container.args = args;
    return { path: `${MM}.args.${args.length - 1}.not-unique` };
  },
  captchaTooOften: (w) => {
    w.matchmaker.captcha = { requests_before_reverify: 601, verification_ttl: 0, turnstile: { site_key: 'a', secret_key: 'b' } };
    return { path: `${MM}.captcha.requests-before-reverify.too-high` };
  },
  invalidGlob: (w) => {
    const cdnConfig = w.cdn ?? { site_id: 's', routes: [] };
    cdnConfig.routes = [...cdnConfig.routes, { glob: 'x**', priority: 0, middlewares: [] }];
    w.cdn = cdnConfig;
    return { path: `config.cdn.routes.${cdnConfig.routes.length - 1}.glob.invalid` };
  },
  doubleSpace: () => ({ path: 'display-name.invalid', displayName: 'two  spaces' }),
};

const PARSE: Readonly<Record<string, Injection>> = {
  negative: (w, i) => {
    const [name, mode] = pickMode(w, i);
    mode.max_players = -1;
    return { path: `${MM}.game-modes.*${name}*.max-players.negative` };
  },
  tooLarge: (w, i) => {
    const [name, mode] = pickMode(w, i);
    mode.max_players_party = 2 ** 32;
    return { path: `${MM}.game-modes.*${name}*.max-players-party.too-large` };
  },
  notAnInteger: (w) => {
    w.matchmaker.idle_lobbies = { min: 1.5, max: 2 };
    return { path: `${MM}.idle-lobbies.min.not-an-integer` };
  },
  wrongType: (w, i) => {
    const [name, mode] = pickMode(w, i);
    Object.assign(mode, { listable: 'yes' });
    return { path: `${MM}.game-modes.*${name}*.listable.invalid-type` };
  },
  protoKey: (w) => {
    const env = { ...w.matchmaker.container.env };
    Object.defineProperty(env, '__proto__', { value: 'x', enumerable: true, configurable: true, writable: true });
    w.matchmaker.container.env = env;
    return { path: `${MM}.container.env.*__proto__*.invalid-key` };
  },
  aliasConflict: (w) => {
    Object.assign(w.matchmaker, { docker: { image_id: 'other' } });
    return { path: `${MM}.docker.conflicts-with-container` };
  },
  badEnum: (w) => {
    w.matchmaker.container.network_mode = 'nat';
    return { path: `${MM}.container.network-mode.invalid` };
  },
  missingMember: (w) => {
    Object.assign(w.matchmaker, { captcha: { verification_ttl: 1, turnstile: { site_key: 'a', secret_key: 'b' } } });
    return { path: `${MM}.captcha.requests-before-reverify.missing` };
  },
};

function seeded(catalogue: Readonly<Record<string, Injection>>): fc.Arbitrary<{ wire: Wire; name: string; injected: { path: string; displayName?: string }[] }> {
  return fc.record({
    wire: validWire,
    name: displayName,
    kinds: fc.uniqueArray(fc.constantFrom(...Object.keys(catalogue)), { minLength: 1, maxLength: 6 }),
    modes: fc.array(fc.nat(), { minLength: 6, maxLength: 6 }),
  }).map(({ wire, name, kinds, modes }) => {
    const copy = structuredClone(wire);
    const injected = kinds.map((kind, k) => {
      const inject = catalogue[kind];
      if (inject === undefined) throw new Error(kind);
      return inject(copy, modes[k] ?? 0);
    });
    return { wire: copy, name, injected };
  });
}

describe('version configuration properties', () => {
  it('a generated configuration is valid', () => {
    fc.assert(fc.property(validWire, displayName, (wire, name) => {
      expect(sortedPaths(validateVersion({ displayName: name, config: parsed(wire) }, ctx))).toEqual([]);
    }), { numRuns: 100 });
  });

  it('validation reports every seeded error with its path (and nothing else)', () => {
    fc.assert(fc.property(seeded(SEMANTIC), ({ wire, name, injected }) => {
      const displayNameUsed = injected.find((i) => i.displayName !== undefined)?.displayName ?? name;
      const problems = sortedPaths(validateVersion({ displayName: displayNameUsed, config: parsed(wire) }, ctx));
      expect(problems).toEqual([...new Set(injected.map((i) => i.path))].sort());
    }), { numRuns: 150 });
  });

  it('parsing reports every seeded structural error with its path (and nothing else)', () => {
    fc.assert(fc.property(seeded(PARSE), ({ wire, injected }) => {
      const r = parseVersionConfig(wire);
      expect(r.ok ? [] : sortedPaths(r.error)).toEqual(injected.map((i) => i.path).sort());
    }), { numRuns: 150 });
  });

  const WIRE_KEYS = ['matchmaker', 'game_modes', 'lobby_groups', 'docker', 'container', 'ports', 'port', 'port_range', 'min', 'max', 'regions',
    'captcha', 'hcaptcha', 'captcha_a', 'turnstile', 'cdn', 'routes', 'middlewares', 'kind', 'custom_headers', 'headers', 'engine', 'godot',
    'engine_c', 'actions', 'find', 'create', 'verification', 'env', 'env_vars', 'runtime', 'name_id', 'key', 'value', 'label', '__proto__', 'constructor'];
  const wireLike = fc.object({
    key: fc.oneof(fc.constantFrom(...WIRE_KEYS), fc.string()),
    maxDepth: 6,
    values: [fc.integer(), fc.double(), fc.string(), fc.boolean(), fc.constant(null), fc.constantFrom('udp', 'none', 'host', 'game-proxy')],
    withNullPrototype: true,
  });
  const anyInput = fc.oneof(
    fc.anything({ withNullPrototype: true, withBoxedValues: true, withMap: true, withSet: true, withDate: true, withSparseArray: true, withBigInt: true }),
    fc.jsonValue(),
    wireLike,
    wireLike.map((m) => ({ matchmaker: m })),
    wireLike.map((m) => ({ matchmaker: { game_modes: { m } } })),
    wireLike.map((c) => ({ matchmaker: { lobby_groups: [c] } })),
    validWire.chain((w) => fc.tuple(fc.constant(w), fc.anything())).map(([w, junk]) => ({ ...w, matchmaker: { ...w.matchmaker, regions: junk } })),
  );

  it('parsing never throws; problems have non-empty string paths; parsed values validate, resolve and round-trip', () => {
    fc.assert(fc.property(anyInput, (input) => {
      const r = parseVersionConfig(input);
      if (!r.ok) {
        expect(r.error.length).toBeGreaterThan(0);
        for (const p of r.error) {
          expect(p.path.length).toBeGreaterThan(1);
          for (const segment of p.path) expect(typeof segment === 'string' && segment !== '').toBe(true);
        }
        return;
      }
      expect(Object.isFrozen(r.value)).toBe(true);
      validateVersion({ displayName: 'v', config: r.value }, ctx);
      resolveVersion(r.value);
      expect(parsed(renderVersionConfig(r.value))).toEqual(r.value);
    }), { numRuns: 300 });
  });

  // A parsed configuration built directly in camelCase, as parse produces it.
  const u32 = fc.integer({ min: 0, max: 4_294_967_295 });
  const name = fc.tuple(chars(LOWER, 1, 1), chars(LOWER + DIGITS + '-', 0, 8)).map(([a, b]) => a + b);
  const map = <T>(value: fc.Arbitrary<T>): fc.Arbitrary<Record<string, T>> => fc.dictionary(name, value, { maxKeys: 3 });
  const range = fc.record({ min: u32, max: u32 });
  const protocol = fc.constantFrom('http' as const, 'https' as const, 'tcp' as const, 'tcp_tls' as const, 'udp' as const);
  const port = fc.record({ port: u32, portRange: range, protocol, proxy: fc.constantFrom('game_guard' as const, 'none' as const), devPort: u32, devPortRange: range, devProtocol: protocol }, { requiredKeys: [] });
  const container = fc.record({
    image: fc.string(), dockerfile: fc.string(), buildArgs: map(fc.string()), imageId: fc.string(), args: fc.array(fc.string(), { maxLength: 3 }),
    env: map(fc.string()), networkMode: fc.constantFrom('bridge' as const, 'host' as const), ports: map(port),
  }, { requiredKeys: [] });
  const camelAction = fc.record({ enabled: fc.boolean(), verification: fc.record({ url: fc.string(), headers: map(fc.string()) }), identityRequirement: fc.constantFrom('none' as const, 'guest' as const, 'registered' as const) }, { requiredKeys: ['enabled'] });
  const camelSettings = {
    regions: map(fc.record({ tier: fc.string(), idleLobbies: range }, { requiredKeys: [] })), maxPlayers: u32, maxPlayersDirect: u32, maxPlayersParty: u32,
    container, tier: fc.string(), idleLobbies: range,
    actions: fc.record({ find: camelAction, join: camelAction, create: fc.tuple(camelAction, fc.record({ enablePublic: fc.boolean(), enablePrivate: fc.boolean(), maxLobbiesPerIdentity: u32 }, { requiredKeys: [] })).map(([a, b]) => ({ ...a, ...b })) }, { requiredKeys: [] }),
    lobbyReadyTimeout: fc.maxSafeNat(), playerConnectTimeout: fc.maxSafeNat(), playerMaxLifetime: fc.maxSafeNat(),
  };
  const camelConfig: fc.Arbitrary<VersionConfig> = fc.record({
    cdn: fc.record({
      buildCommand: fc.string(), buildEnv: map(fc.string()), buildOutput: fc.string(), siteId: fc.string(),
      routes: fc.array(fc.record({ glob: fc.string(), priority: u32, middlewares: fc.array(fc.record({ kind: fc.record({ customHeaders: fc.record({ headers: fc.array(fc.record({ name: fc.string(), value: fc.string() }), { maxLength: 2 }) }) }, { requiredKeys: [] }) }), { maxLength: 2 }) }), { maxLength: 2 }),
    }, { requiredKeys: [] }),
    engine: fc.record({ custom: fc.constant({}), html5: fc.constant({}), unity: fc.constant({}), unreal: fc.record({ gameModule: fc.string() }), godot: fc.record({ gameModule: fc.string() }, { requiredKeys: [] }) }, { requiredKeys: [] }),
    kv: fc.constant({}),
    identity: fc.record({ displayNames: fc.array(fc.string()), avatars: fc.array(fc.string()), customDisplayNames: fc.array(fc.record({ displayName: fc.string() })), customAvatars: fc.array(fc.record({ uploadId: fc.string() })) }, { requiredKeys: [] }),
    matchmaker: fc.record({
      ...camelSettings,
      gameModes: map(fc.record({ ...camelSettings, listable: fc.boolean(), taggable: fc.boolean(), allowDynamicMaxPlayers: fc.boolean() }, { requiredKeys: [] })),
      captcha: fc.record({
        requestsBeforeReverify: u32, verificationTtl: fc.maxSafeNat(),
        hcaptcha: fc.record({ level: fc.constantFrom('easy' as const, 'moderate' as const, 'difficult' as const, 'always_on' as const), siteKey: fc.string(), secretKey: fc.string() }, { requiredKeys: [] }),
        turnstile: fc.record({ siteKey: fc.string(), secretKey: fc.string() }),
      }, { requiredKeys: ['requestsBeforeReverify', 'verificationTtl'] }),
      devHostname: fc.string(),
    }, { requiredKeys: [] }),
    scripts: map(fc.string()),
  }, { requiredKeys: [] });

  it('render then parse gives back the parsed configuration', () => {
    fc.assert(fc.property(camelConfig, (config) => {
      expect(parsed(renderVersionConfig(config))).toEqual(config);
    }), { numRuns: 200 });
  });

  it('every resolved mode of a valid configuration is playable; direct and party default to normal', () => {
    fc.assert(fc.property(validWire, (wire) => {
      const config = parsed(wire);
      const mm = config.matchmaker;
      for (const mode of resolveVersion(config).gameModes) {
        const written = mm?.gameModes?.[mode.name];
        expect(mode.maxPlayers.normal).toBeGreaterThanOrEqual(1);
        expect(mode.maxPlayers.direct).toBeGreaterThanOrEqual(1);
        expect(mode.maxPlayers.party).toBeGreaterThanOrEqual(1);
        if (written?.maxPlayersDirect === undefined && mm?.maxPlayersDirect === undefined) expect(mode.maxPlayers.direct).toBe(mode.maxPlayers.normal);
        if (written?.maxPlayersParty === undefined && mm?.maxPlayersParty === undefined) expect(mode.maxPlayers.party).toBe(mode.maxPlayers.normal);
        expect(mode.regions.length).toBeGreaterThanOrEqual(1);
        expect(mode.container?.imageId).toBeDefined();
      }
    }), { numRuns: 100 });
  });
});
