/**
 * Parsers of the container runtime block (`container` in the spec, `docker` in the 23.2 client)
 * and its ports.
 */
import type { ContainerConfig, IdleLobbies, NetworkMode, PortConfig, PortProtocol, PortRange, ProxyKind } from './types.js';
import { forbiddenContainerKey } from './forbidden-keys.js';
import { arrayOf, mapOf, object, oneOf, str, u32, type Parser, type StrayKeys } from './parse-reader.js';
import { defined } from './path.js';

export const PROTOCOLS: Readonly<Record<string, PortProtocol>> = Object.freeze({
  http: 'http', https: 'https', tcp: 'tcp', tcp_tls: 'tcp_tls', udp: 'udp',
});

/** `game_guard` (23.2), `game-proxy` (the spec) and `game_proxy` all name the game proxy. */
export const PROXIES: Readonly<Record<string, ProxyKind>> = Object.freeze({
  game_guard: 'game_guard', 'game-proxy': 'game_guard', game_proxy: 'game_guard', none: 'none',
});

export const NETWORK_MODES: Readonly<Record<string, NetworkMode>> = Object.freeze({ bridge: 'bridge', host: 'host' });

/** A container block (either shape) refuses Docker's host options with their reason. */
export const CONTAINER_KEYS: StrayKeys = Object.freeze({ forbidden: forbiddenContainerKey });

/** `{min, max}`, both required u32. @example portRange({ min: 1, max: 2 }, ['r'], []); */
export const portRange: Parser<PortRange> = object((f) => {
  const min = f.req('min', u32);
  const max = f.req('max', u32);
  return min === undefined || max === undefined ? undefined : { min, max };
});

/** Idle lobby counts `{min, max}` (same shape as a port range). @example idleLobbies({ min: 0, max: 1 }, ['i'], []); */
export const idleLobbies: Parser<IdleLobbies> = portRange;

/** One port of `ports`. @example port({ port: 80, protocol: 'http' }, ['p'], []); */
export const port: Parser<PortConfig> = object((f) =>
  defined<PortConfig>({
    port: f.opt('port', u32),
    portRange: f.opt('port_range', portRange),
    protocol: f.opt('protocol', oneOf(PROTOCOLS)),
    proxy: f.opt('proxy', oneOf(PROXIES)),
    devPort: f.opt('dev_port', u32),
    devPortRange: f.opt('dev_port_range', portRange),
    devProtocol: f.opt('dev_protocol', oneOf(PROTOCOLS)),
  }),
);

/**
 * The container block; Docker's host options (`privileged`, `volumes`…) are `forbidden-key`.
 *
 * @example
 * container({ image_id: 'b', ports: {} }, ['c'], []);
 * container({ privileged: true }, ['c'], out); // {}, out: [['c', '*privileged*', 'forbidden-key']]
 */
export const container: Parser<ContainerConfig> = object((f) =>
  defined<ContainerConfig>({
    image: f.opt('image', str),
    dockerfile: f.opt('dockerfile', str),
    buildArgs: f.opt('build_args', mapOf(str)),
    imageId: f.opt('image_id', str),
    args: f.opt('args', arrayOf(str)),
    env: f.opt('env', mapOf(str)),
    networkMode: f.opt('network_mode', oneOf(NETWORK_MODES)),
    ports: f.opt('ports', mapOf(port)),
  }), CONTAINER_KEYS);
