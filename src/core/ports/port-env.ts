/**
 * The port variables of a lobby's container environment (wire.md §5.4). Tavern documents the exact
 * names (fixing Rivet defect 16): the label with `-` turned into `_`, upper-cased.
 */
import type { LobbyPortAllocation } from './lobby-ports.js';

/**
 * The environment-name form of a port label: `-` → `_`, upper-cased.
 *
 * @example
 * portEnvLabel('game-udp'); // 'GAME_UDP'
 */
export const portEnvLabel = (label: string): string => label.replace(/-/g, '_').toUpperCase();

/**
 * `PORT_<LABEL>` = the container port of each single port (skipped when it has none), and
 * `PORT_RANGE_MIN_<LABEL>` / `PORT_RANGE_MAX_<LABEL>` = the bounds of each range.
 *
 * @example
 * portEnv([
 *   { label: 'game', protocol: 'udp', proxy: 'game_guard', transport: 'udp', publicPort: 27001, hostPort: 21001, containerPort: 7777 },
 *   { label: 'p2p-udp', protocol: 'udp', proxy: 'none', transport: 'udp', range: { min: 27100, max: 27199 } },
 * ]);
 * // { PORT_GAME: '7777', PORT_RANGE_MIN_P2P_UDP: '27100', PORT_RANGE_MAX_P2P_UDP: '27199' }
 */
export const portEnv = (allocations: readonly LobbyPortAllocation[]): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const a of allocations) {
    const label = portEnvLabel(a.label);
    if (a.containerPort !== undefined) env[`PORT_${label}`] = String(a.containerPort);
    if (a.range !== undefined) {
      env[`PORT_RANGE_MIN_${label}`] = String(a.range.min);
      env[`PORT_RANGE_MAX_${label}`] = String(a.range.max);
    }
  }
  return env;
};
