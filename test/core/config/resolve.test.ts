import { describe, expect, it } from 'vitest';
import { parseVersionConfig } from '../../../src/core/config/parse.js';
import { resolveVersion } from '../../../src/core/config/resolve.js';
import { cloneData } from '../../../src/core/config/path.js';
import {
  DEFAULT_CREATE_ACTION,
  DEFAULT_LOBBY_READY_MS,
  DEFAULT_PLAYER_CONNECT_MS,
} from '../../../src/core/config/defaults.js';
import type { GameMode, VersionConfig } from '../../../src/core/config/types.js';

function modes(wire: unknown): readonly GameMode[] {
  const parsed = parseVersionConfig(wire);
  if (!parsed.ok) throw new Error(parsed.error.map((p) => p.path.join('.')).join(', '));
  return resolveVersion(parsed.value).gameModes;
}

const only = (wire: unknown): GameMode => {
  const [first] = modes(wire);
  if (first === undefined) throw new Error('no mode');
  return first;
};

describe('resolveVersion', () => {
  it('applies every default to a bare mode', () => {
    expect(only({ matchmaker: { game_modes: { default: {} } } })).toEqual({
      name: 'default',
      regions: [],
      maxPlayers: { normal: 32, direct: 32, party: 32 },
      listable: true,
      taggable: false,
      allowDynamicMaxPlayers: false,
      actions: {
        find: { enabled: true, identityRequirement: 'none' },
        join: { enabled: true, identityRequirement: 'none' },
        create: { enabled: false, enablePublic: false, enablePrivate: true, identityRequirement: 'none' },
      },
      timeouts: { lobbyReadyMs: 300_000, playerConnectMs: 120_000 },
    });
    expect(DEFAULT_LOBBY_READY_MS).toBe(300_000);
    expect(DEFAULT_PLAYER_CONNECT_MS).toBe(120_000);
    expect(Object.isFrozen(DEFAULT_CREATE_ACTION)).toBe(true);
  });

  it('keeps configuration order of modes, regions and ports', () => {
    const resolved = modes({ matchmaker: {
      regions: { zz: {}, aa: {} },
      docker: { ports: { zeta: { port: 2 }, alpha: { port: 1 } } },
      game_modes: { second: {}, first: {} },
    } });
    expect(resolved.map((m) => m.name)).toEqual(['second', 'first']);
    expect(resolved[0]?.regions.map((r) => r.name)).toEqual(['zz', 'aa']);
    expect(resolved[0]?.container?.ports.map((p) => p.label)).toEqual(['zeta', 'alpha']);
  });

  it('cascades regions as a whole map, and tier and idle lobbies region ▸ mode ▸ matchmaker ▸ default', () => {
    const wire = { matchmaker: {
      regions: { fra: {} }, tier: 'basic-2d1', idle_lobbies: { min: 1, max: 2 },
      game_modes: {
        inherits: {},
        own: { regions: { 'lnd-atl': { tier: 'basic-1d8' }, fra: { idle_lobbies: { min: 3, max: 4 } } }, tier: 'basic-1d4' },
      },
    } };
    const [inherits, own] = modes(wire);
    expect(inherits?.regions).toEqual([{ name: 'fra', tier: 'basic-2d1', idleLobbies: { min: 1, max: 2 } }]);
    expect(own?.regions).toEqual([
      { name: 'lnd-atl', tier: 'basic-1d8', idleLobbies: { min: 1, max: 2 } },
      { name: 'fra', tier: 'basic-1d4', idleLobbies: { min: 3, max: 4 } },
    ]);
    expect(only({ matchmaker: { game_modes: { m: { regions: { fra: {} } } } } }).regions).toEqual([{ name: 'fra', tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } }]);
  });

  it('cascades max players; direct and party default to the resolved normal', () => {
    const [a, b, c] = modes({ matchmaker: { max_players: 10, max_players_party: 4, game_modes: { a: {}, b: { max_players: 20 }, c: { max_players_direct: 5, max_players_party: 6 } } } });
    expect(a?.maxPlayers).toEqual({ normal: 10, direct: 10, party: 4 });
    expect(b?.maxPlayers).toEqual({ normal: 20, direct: 20, party: 4 });
    expect(c?.maxPlayers).toEqual({ normal: 10, direct: 5, party: 6 });
  });

  it('takes the whole container from the mode if present, merging env (mode keys win)', () => {
    const [inherits, own] = modes({ matchmaker: {
      container: { image_id: 'mm', args: ['--mm'], env: { A: 'mm', B: 'mm' }, network_mode: 'host', ports: { mm: { port_range: { min: 26000, max: 26001 }, protocol: 'udp', proxy: 'none' } } },
      game_modes: { inherits: {}, own: { docker: { image_id: 'mode', env: { B: 'mode', C: 'mode' }, ports: { web: { port: 80 } } } } },
    } });
    expect(inherits?.container).toEqual({
      imageId: 'mm', args: ['--mm'], env: { A: 'mm', B: 'mm' }, networkMode: 'host',
      ports: [{ label: 'mm', protocol: 'udp', proxy: 'none', portRange: { min: 26000, max: 26001 } }],
    });
    expect(own?.container).toEqual({
      imageId: 'mode', args: [], env: { A: 'mm', B: 'mode', C: 'mode' }, networkMode: 'bridge',
      ports: [{ label: 'web', protocol: 'https', proxy: 'game_guard', port: 80 }],
    });
    expect(only({ matchmaker: { game_modes: { m: {} } } }).container).toBeUndefined();
  });

  it('resolves actions: mode entry ▸ matchmaker entry ▸ default, each entry replaced whole', () => {
    const verification = { url: 'https://v.example', headers: {} };
    const [a, b] = modes({ matchmaker: {
      actions: { find: { enabled: false }, create: { enabled: true, enable_public: true, verification } },
      game_modes: { a: {}, b: { actions: { create: { enabled: true, identity_requirement: 'guest', max_lobbies_per_identity: 3 }, join: { enabled: false } } } },
    } });
    expect(a?.actions).toEqual({
      find: { enabled: false, identityRequirement: 'none' },
      join: { enabled: true, identityRequirement: 'none' },
      create: { enabled: true, enablePublic: true, enablePrivate: true, identityRequirement: 'none', verification },
    });
    expect(b?.actions).toEqual({
      find: { enabled: false, identityRequirement: 'none' },
      join: { enabled: false, identityRequirement: 'none' },
      create: { enabled: true, enablePublic: false, enablePrivate: true, identityRequirement: 'guest', maxLobbiesPerIdentity: 3 },
    });
  });

  it('resolves flags and timeouts mode ▸ matchmaker ▸ default; player max lifetime stays absent unless set', () => {
    const [a, b] = modes({ matchmaker: {
      lobby_ready_timeout: 1000, player_max_lifetime: 9000,
      game_modes: { a: { listable: false, taggable: true, allow_dynamic_max_players: true }, b: { lobby_ready_timeout: 2000, player_connect_timeout: 3000 } },
    } });
    expect([a?.listable, a?.taggable, a?.allowDynamicMaxPlayers]).toEqual([false, true, true]);
    expect(a?.timeouts).toEqual({ lobbyReadyMs: 1000, playerConnectMs: 120_000, playerMaxLifetimeMs: 9000 });
    expect(b?.timeouts).toEqual({ lobbyReadyMs: 2000, playerConnectMs: 3000, playerMaxLifetimeMs: 9000 });
    expect(only({ matchmaker: { game_modes: { m: {} } } }).timeouts.playerMaxLifetimeMs).toBeUndefined();
  });

  it('passes the captcha through, freezes its output and never freezes its input', () => {
    const input: VersionConfig = {
      matchmaker: {
        captcha: { requestsBeforeReverify: 1, verificationTtl: 2, turnstile: { siteKey: 'a', secretKey: 'b' } },
        idleLobbies: { min: 1, max: 1 },
        gameModes: { m: { regions: { fra: {} } } },
      },
    };
    const resolved = resolveVersion(input);
    expect(resolved.captcha).toEqual(input.matchmaker?.captcha);
    expect(Object.isFrozen(resolved.gameModes[0]?.regions[0]?.idleLobbies)).toBe(true);
    expect(Object.isFrozen(input.matchmaker?.idleLobbies)).toBe(false);
    expect(Object.isFrozen(input.matchmaker?.captcha)).toBe(false);
    expect(resolveVersion({})).toEqual({ gameModes: [] });
  });
});

describe('prototype-polluting keys in an unparsed configuration', () => {
  it('cloneData drops them instead of changing the copy’s prototype', () => {
    const input: unknown = JSON.parse('{"__proto__": {"admin": true}, "a": {"__proto__": {"admin": true}, "b": 1}}');
    const copy = cloneData(input) as Record<string, Record<string, unknown>>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(copy['a'])).toBe(Object.prototype);
    expect(copy).toEqual({ a: { b: 1 } });
    expect((copy as Record<string, unknown>)['admin']).toBeUndefined();
  });

  it('resolveVersion keeps them out of the merged container env', () => {
    const env = JSON.parse('{"__proto__": "x", "K": "v"}') as Record<string, string>;
    const config: VersionConfig = { matchmaker: { container: { imageId: 'b', env }, gameModes: { m: { container: { imageId: 'b', env } } } } };
    const [mode] = resolveVersion(config).gameModes;
    expect(Object.keys(mode?.container?.env ?? {})).toEqual(['K']);
  });
});
