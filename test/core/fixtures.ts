import {
  DEFAULT_CREATE_ACTION,
  DEFAULT_FIND_ACTION,
  DEFAULT_JOIN_ACTION,
  DEFAULT_LOBBY_READY_MS,
  DEFAULT_MODE_FLAGS,
  DEFAULT_PLAYER_CONNECT_MS,
} from '../../src/core/config/defaults.js';
import type { FindCommand } from '../../src/core/matchmaker/find.js';
import type { GameMode, ResolvedVersion } from '../../src/core/config/types.js';
import type { Ctx } from '../../src/core/context.js';
import type { Client } from '../../src/core/matchmaker/request.js';
import { addNamespace, publishVersion } from '../../src/core/namespace.js';
import { createWorld, makeVersion, type NamespaceSettings, type RegionInfo, type World, DEFAULT_NAMESPACE_SETTINGS } from '../../src/core/world.js';

type DeepPartial<T> = { -readonly [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

/** A resolved game mode with Tavern's defaults and the given overrides (shallow per field group). */
export const mode = (name: string, over: DeepPartial<GameMode> = {}): GameMode => {
  const base: GameMode = {
    name,
    regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } }],
    maxPlayers: { normal: 4, direct: 6, party: 4 },
    container: {
      imageId: '00000000-0000-4000-8000-000000000001',
      args: [],
      env: { MODE: name },
      networkMode: 'bridge',
      ports: [{ label: 'default', protocol: 'udp', proxy: 'game_guard', port: 7777 }],
    },
    ...DEFAULT_MODE_FLAGS,
    actions: { find: DEFAULT_FIND_ACTION, join: DEFAULT_JOIN_ACTION, create: DEFAULT_CREATE_ACTION },
    timeouts: { lobbyReadyMs: DEFAULT_LOBBY_READY_MS, playerConnectMs: DEFAULT_PLAYER_CONNECT_MS },
  };
  return {
    ...base,
    ...(over as Partial<GameMode>),
    maxPlayers: { ...base.maxPlayers, ...over.maxPlayers },
    actions: {
      find: { ...base.actions.find, ...over.actions?.find },
      join: { ...base.actions.join, ...over.actions?.join },
      create: { ...base.actions.create, ...over.actions?.create },
    },
    timeouts: { ...base.timeouts, ...over.timeouts },
  };
};

export const REGIONS: readonly RegionInfo[] = [
  { id: 'local', displayName: 'Local', provider: 'Tavern', coords: { latitude: 0, longitude: 0 } },
  { id: 'eu', displayName: 'Frankfurt', provider: 'Tavern', coords: { latitude: 50.1, longitude: 8.7 } },
  { id: 'us', displayName: 'Atlanta', provider: 'Tavern', coords: { latitude: 33.7, longitude: -84.4 } },
];

export const NS = 'ns-1';
export const client = (ip = '10.0.0.1', extra: Partial<Client> = {}): Client => ({ ip, ...extra });

/** A world with one namespace running a version of the given modes. */
export const worldWith = (
  modes: readonly GameMode[],
  opts: { readonly settings?: Partial<NamespaceSettings>; readonly captcha?: ResolvedVersion['captcha']; readonly versionId?: string } = {},
): World => {
  const world = addNamespace(createWorld(REGIONS), NS, { ...DEFAULT_NAMESPACE_SETTINGS, ...opts.settings });
  const config: ResolvedVersion = { gameModes: modes, ...(opts.captcha ? { captcha: opts.captcha } : {}) };
  return publishVersion(world, NS, makeVersion(opts.versionId ?? 'v1', config), { now: 0, seed: 0 }).world;
};

/** Sequential fresh ids for tests. */
export const ids = (prefix: string): (() => string) => {
  let n = 0;
  return () => `${prefix}-${++n}`;
};

export const at = (now: number, seed = 1): Ctx => ({ now, seed });

/**
 * A find-command builder with fresh ids from `newId`: one player, mode `default` unless overridden.
 */
export const findCommands =
  (newId: () => string, defaults: Partial<FindCommand> = {}) =>
  (over: Partial<FindCommand> = {}): FindCommand => ({
    namespaceId: NS,
    gameModes: ['default'],
    playerIds: [newId()],
    newLobbyId: newId(),
    client: client(),
    ...defaults,
    ...over,
  });
