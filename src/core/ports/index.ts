/**
 * Port allocation for one host: a persistent bitset, the per-transport port space with its proxied
 * and host pools, a lobby's all-or-nothing port allocation, and the container's port variables.
 *
 * @example
 * import { allocateLobbyPorts, createPortSpace, portEnv } from './ports/index.js';
 */
export { PortBitset, popcount32 } from './bitset.js';
export {
  DEFAULT_PORT_POOLS,
  allocatePort,
  claimPorts,
  createPortSpace,
  freeCount,
  isAllocated,
  portPoolsProblem,
  releasePorts,
  releaseRange,
  reserveRange,
  usedCount,
} from './space.js';
export type { PortPool, PortPools, PortSpace, PortSpaceOptions, Transport } from './space.js';
export { allocateLobbyPorts, claimLobbyPorts, lobbyPortsInUse, releaseLobbyPorts, transportOf } from './lobby-ports.js';
export type { LobbyPortAllocation } from './lobby-ports.js';
export { portEnv, portEnvLabel } from './port-env.js';
