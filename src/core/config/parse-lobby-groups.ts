/**
 * The deprecated 23.2 `matchmaker.lobby_groups` list, converted into game modes keyed by
 * `name_id`. When present it replaces `game_modes` entirely (as in Rivet). The conversion:
 *
 * - `regions: [{region_id, tier_name_id, idle_lobbies: {min_idle_lobbies, max_idle_lobbies}}]` →
 *   `regions` keyed by `region_id` (taken as a region name id), `tier`, `idleLobbies: {min, max}`;
 * - `max_players_normal|direct|party` → `maxPlayers|maxPlayersDirect|maxPlayersParty`;
 * - `runtime.docker` → `container`: `build_id` → `imageId`, `args`, `env_vars: [{key, value}]` → `env`,
 *   `network_mode`, `ports: [{label, target_port, port_range, proxy_protocol, proxy_kind}]` → `ports`
 *   keyed by label with `port`, `portRange`, `protocol`, `proxy`.
 *
 * Every member except the keys (`name_id`, `region_id`, `key`/`value`, `label`) and the two idle lobby
 * counts is optional. Members the client does not know are `unknown-key`, Docker host options in
 * `runtime.docker` `forbidden-key`, as in the current shapes.
 * Problems keep the wire path (`['config', 'matchmaker', 'lobby-groups', '0', ...]`).
 */
import type { ContainerConfig, GameModeConfig, IdleLobbies, PortConfig, RegionConfig } from './types.js';
import { arrayOf, keyedList, object, oneOf, str, u32, type Parser } from './parse-reader.js';
import { CONTAINER_KEYS, NETWORK_MODES, PROTOCOLS, PROXIES, portRange } from './parse-container.js';
import { defined } from './path.js';

type Entry<T> = { readonly key: string; readonly value: T };

function keyed<T>(key: string | undefined, value: T | undefined): Entry<T> | undefined {
  return key === undefined || value === undefined ? undefined : { key, value };
}

/** The 23.2 client's `{min_idle_lobbies, max_idle_lobbies}`, both required. */
const idleLobbies: Parser<IdleLobbies> = object((f) => {
  const min = f.req('min_idle_lobbies', u32);
  const max = f.req('max_idle_lobbies', u32);
  return min === undefined || max === undefined ? undefined : { min, max };
});

const region: Parser<Entry<RegionConfig>> = object((f) =>
  keyed(f.req('region_id', str), defined<RegionConfig>({ tier: f.opt('tier_name_id', str), idleLobbies: f.opt('idle_lobbies', idleLobbies) })),
);

const envVar: Parser<Entry<string>> = object((f) => keyed(f.req('key', str), f.req('value', str)));

const dockerPort: Parser<Entry<PortConfig>> = object((f) =>
  keyed(
    f.req('label', str),
    defined<PortConfig>({
      port: f.opt('target_port', u32),
      portRange: f.opt('port_range', portRange),
      protocol: f.opt('proxy_protocol', oneOf(PROTOCOLS)),
      proxy: f.opt('proxy_kind', oneOf(PROXIES)),
    }),
  ),
);

const docker: Parser<ContainerConfig> = object((f) =>
  defined<ContainerConfig>({
    imageId: f.opt('build_id', str),
    args: f.opt('args', arrayOf(str)),
    env: f.opt('env_vars', keyedList('key', envVar)),
    networkMode: f.opt('network_mode', oneOf(NETWORK_MODES)),
    ports: f.opt('ports', keyedList('label', dockerPort)),
  }), CONTAINER_KEYS);

const runtime: Parser<ContainerConfig> = object((f) => f.opt('docker', docker));

const lobbyGroup: Parser<Entry<GameModeConfig>> = object((f) =>
  keyed(
    f.req('name_id', str),
    defined<GameModeConfig>({
      regions: f.opt('regions', keyedList('region_id', region)),
      maxPlayers: f.opt('max_players_normal', u32),
      maxPlayersDirect: f.opt('max_players_direct', u32),
      maxPlayersParty: f.opt('max_players_party', u32),
      container: f.opt('runtime', runtime),
    }),
  ),
);

/**
 * Parses `lobby_groups` into game modes keyed by name id.
 *
 * @example
 * lobbyGroups([{ name_id: 'default', max_players_normal: 8 }], ['config', 'matchmaker', 'lobby-groups'], out);
 * // { default: { maxPlayers: 8 } }
 */
export const lobbyGroups: Parser<Readonly<Record<string, GameModeConfig>>> = keyedList('name_id', lobbyGroup);
