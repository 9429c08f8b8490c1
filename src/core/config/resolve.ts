/**
 * `resolveVersion`: the defaulting cascade of wire.md §2.1, one {@link GameMode} per configured
 * game mode with every default applied.
 */
import type {
  ActionConfig,
  ContainerConfig,
  CreateActionConfig,
  GameMode,
  GameModeConfig,
  MatchmakerConfig,
  ModeTimeouts,
  ResolvedAction,
  ResolvedContainer,
  ResolvedCreateAction,
  ResolvedPort,
  ResolvedRegion,
  ResolvedVersion,
  VersionConfig,
} from './types.js';
import {
  DEFAULT_CREATE_ACTION,
  DEFAULT_FIND_ACTION,
  DEFAULT_IDLE_LOBBIES,
  DEFAULT_JOIN_ACTION,
  DEFAULT_LOBBY_READY_MS,
  DEFAULT_MAX_PLAYERS,
  DEFAULT_MODE_FLAGS,
  DEFAULT_NETWORK_MODE,
  DEFAULT_PLAYER_CONNECT_MS,
  DEFAULT_PORT_PROTOCOL,
  DEFAULT_PROXY_KIND,
  DEFAULT_TIER,
} from './defaults.js';
import { cloneData, deepFreeze, defined, isForbiddenKey } from './path.js';

/** A null-prototype copy of `a` then `b` (later keys win), skipping prototype-polluting keys. */
function mergeMaps(...maps: readonly (Readonly<Record<string, string>> | undefined)[]): Readonly<Record<string, string>> {
  const merged = Object.create(null) as Record<string, string>;
  for (const map of maps) {
    // Stryker disable next-line ConditionalExpression: equivalent; resolveVersion, the only caller, merges maps of cloneData's copy, which has already dropped these keys.
    for (const [key, value] of Object.entries(map ?? {})) if (!isForbiddenKey(key)) merged[key] = value;
  }
  return merged;
}

function resolveRegions(mode: GameModeConfig, mm: MatchmakerConfig): readonly ResolvedRegion[] {
  return Object.entries(mode.regions ?? mm.regions ?? {}).map(([name, region]) => ({
    name,
    tier: region.tier ?? mode.tier ?? mm.tier ?? DEFAULT_TIER,
    idleLobbies: region.idleLobbies ?? mode.idleLobbies ?? mm.idleLobbies ?? DEFAULT_IDLE_LOBBIES,
  }));
}

function resolvePorts(container: ContainerConfig): readonly ResolvedPort[] {
  return Object.entries(container.ports ?? {}).map(([label, p]) =>
    defined<ResolvedPort>({
      label,
      protocol: p.protocol ?? DEFAULT_PORT_PROTOCOL,
      proxy: p.proxy ?? DEFAULT_PROXY_KIND,
      port: p.port,
      portRange: p.portRange,
    }),
  );
}

/** The mode's container if it has one, else the matchmaker's; env maps are merged (mode keys win). */
function resolveContainer(mode: GameModeConfig, mm: MatchmakerConfig): ResolvedContainer | undefined {
  const chosen = mode.container ?? mm.container;
  if (chosen === undefined) return undefined;
  return defined<ResolvedContainer>({
    imageId: chosen.imageId,
    args: chosen.args ?? [],
    env: mergeMaps(mm.container?.env, mode.container?.env),
    networkMode: chosen.networkMode ?? DEFAULT_NETWORK_MODE,
    ports: resolvePorts(chosen),
  });
}

function resolveAction(configured: ActionConfig | undefined, fallback: ResolvedAction): ResolvedAction {
  if (configured === undefined) return fallback;
  return defined<ResolvedAction>({
    enabled: configured.enabled,
    verification: configured.verification,
    identityRequirement: configured.identityRequirement ?? fallback.identityRequirement,
  });
}

function resolveCreate(configured: CreateActionConfig | undefined): ResolvedCreateAction {
  if (configured === undefined) return DEFAULT_CREATE_ACTION;
  return defined<ResolvedCreateAction>({
    ...resolveAction(configured, DEFAULT_CREATE_ACTION),
    enablePublic: configured.enablePublic ?? DEFAULT_CREATE_ACTION.enablePublic,
    enablePrivate: configured.enablePrivate ?? DEFAULT_CREATE_ACTION.enablePrivate,
    maxLobbiesPerIdentity: configured.maxLobbiesPerIdentity,
  });
}

function resolveTimeouts(mode: GameModeConfig, mm: MatchmakerConfig): ModeTimeouts {
  return defined<ModeTimeouts>({
    lobbyReadyMs: mode.lobbyReadyTimeout ?? mm.lobbyReadyTimeout ?? DEFAULT_LOBBY_READY_MS,
    playerConnectMs: mode.playerConnectTimeout ?? mm.playerConnectTimeout ?? DEFAULT_PLAYER_CONNECT_MS,
    playerMaxLifetimeMs: mode.playerMaxLifetime ?? mm.playerMaxLifetime,
  });
}

function resolveMode(name: string, mode: GameModeConfig, mm: MatchmakerConfig): GameMode {
  const normal = mode.maxPlayers ?? mm.maxPlayers ?? DEFAULT_MAX_PLAYERS;
  return defined<GameMode>({
    name,
    regions: resolveRegions(mode, mm),
    maxPlayers: {
      normal,
      direct: mode.maxPlayersDirect ?? mm.maxPlayersDirect ?? normal,
      party: mode.maxPlayersParty ?? mm.maxPlayersParty ?? normal,
    },
    container: resolveContainer(mode, mm),
    listable: mode.listable ?? DEFAULT_MODE_FLAGS.listable,
    taggable: mode.taggable ?? DEFAULT_MODE_FLAGS.taggable,
    allowDynamicMaxPlayers: mode.allowDynamicMaxPlayers ?? DEFAULT_MODE_FLAGS.allowDynamicMaxPlayers,
    actions: {
      find: resolveAction(mode.actions?.find ?? mm.actions?.find, DEFAULT_FIND_ACTION),
      join: resolveAction(mode.actions?.join ?? mm.actions?.join, DEFAULT_JOIN_ACTION),
      create: resolveCreate(mode.actions?.create ?? mm.actions?.create),
    },
    timeouts: resolveTimeouts(mode, mm),
  });
}

/**
 * Applies the defaulting cascade: regions mode ▸ matchmaker; per region tier and idle lobbies
 * region ▸ mode ▸ matchmaker ▸ default; max players normal mode ▸ matchmaker ▸ 32, direct/party
 * mode ▸ matchmaker ▸ normal; the container whole from the mode else the matchmaker, env merged;
 * actions mode entry ▸ matchmaker entry ▸ default; timeouts mode ▸ matchmaker ▸ default. Game modes
 * and ports keep configuration order. Pure, never throws on a parsed config (validated or not);
 * the result is deep-frozen and shares nothing with the input.
 *
 * @example
 * resolveVersion({ matchmaker: { maxPlayers: 8, gameModes: { default: {} } } }).gameModes[0]?.maxPlayers;
 * // { normal: 8, direct: 8, party: 8 }
 */
export function resolveVersion(config: VersionConfig): ResolvedVersion {
  const mm = cloneData(config.matchmaker ?? {});
  const gameModes = Object.entries(mm.gameModes ?? {}).map(([name, mode]) => resolveMode(name, mode, mm));
  return deepFreeze(defined<ResolvedVersion>({ gameModes, captcha: mm.captcha }));
}
