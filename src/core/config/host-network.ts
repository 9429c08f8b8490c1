/**
 * Host networking is an operator's opt-in (`TAVERN_DOCKER_ALLOW_HOST_NETWORK`): a host-network
 * container shares the host's network namespace, so every service the host keeps on loopback
 * answers it. One text says so wherever Tavern refuses it: at publish (validation) and at start
 * (the Docker runtime, for a version published earlier or written to the store directly).
 */

/**
 * Why a version asking for host networking is refused, and how an operator allows it.
 *
 * @example
 * explained(['config', 'matchmaker'], HOST_NETWORK_REFUSED, 'network-mode', 'host-not-allowed');
 */
export const HOST_NETWORK_REFUSED =
  "host networking is off on this server: a host-network container shares the host's network, so Tavern's API, " +
  'its database and the Docker engine listening on loopback would answer the game server; an operator who accepts ' +
  'that risk enables it with TAVERN_DOCKER_ALLOW_HOST_NETWORK=true';
