/**
 * The ports of one lobby, taken all at once from a `PortSpace` (wire.md §5.1–5.3) and given back
 * all at once when the lobby stops.
 */
import type { NetworkMode, PortProtocol, PortRange, ProxyKind, ResolvedPort } from '../config/types.js';
import type { MatchError } from '../errors.js';
import { err, ok } from '../result.js';
import type { Result } from '../result.js';
import type { Rng } from '../rng.js';
import { allocatePort, claimPorts, releasePorts, reserveRange } from './space.js';
import type { PortSpace, Transport } from './space.js';
import { optional } from '../optional.js';

/**
 * What one configured port of a lobby got.
 *
 * - game proxy + http/https: `publicPort` 80/443 (clients come by hostname; not taken from the
 *   space), `hostPort` from the host pool.
 * - game proxy + tcp/tcp_tls/udp: `publicPort` a random proxied port, `hostPort` from the host pool.
 * - proxy none (host networking): `range`, the configured range, reserved whole.
 *
 * `containerPort` is where the game listens: the configured `port` in bridge mode (absent when the
 * configuration has none); in host mode the proxied port itself for tcp and udp (clients reach the
 * game there directly, with no hop between) and the host port for http, https and tcp_tls (the
 * game proxy terminates or routes them onto it); absent for ranges.
 *
 * @example
 * const a: LobbyPortAllocation = {
 *   label: 'game', protocol: 'udp', proxy: 'game_guard', transport: 'udp',
 *   publicPort: 27001, hostPort: 21001, containerPort: 7777,
 * };
 */
export interface LobbyPortAllocation {
  readonly label: string;
  readonly protocol: PortProtocol;
  readonly proxy: ProxyKind;
  readonly transport: Transport;
  readonly publicPort?: number;
  readonly hostPort?: number;
  readonly containerPort?: number;
  readonly range?: PortRange;
}

/**
 * The transport a protocol runs on: udp for 'udp', tcp for the rest.
 *
 * @example
 * transportOf('https'); // 'tcp'
 */
export const transportOf = (protocol: PortProtocol): Transport => (protocol === 'udp' ? 'udp' : 'tcp');

/** http and https reach the proxy on 80/443 by hostname; no proxied port is taken for them. */
const fixedPublicPort = (protocol: PortProtocol): number | undefined =>
  protocol === 'http' ? 80 : protocol === 'https' ? 443 : undefined;

type Step = Result<{ readonly space: PortSpace; readonly allocation: LobbyPortAllocation }, MatchError>;

const allocateProxied = (space: PortSpace, port: ResolvedPort, mode: NetworkMode, rng: Rng): Step => {
  const transport = transportOf(port.protocol);
  let current = space;
  let publicPort = fixedPublicPort(port.protocol);
  if (publicPort === undefined) {
    const proxied = allocatePort(current, transport, 'proxied', rng);
    if (!proxied.ok) return proxied;
    current = proxied.value.space;
    publicPort = proxied.value.port;
  }
  const host = allocatePort(current, transport, 'host', rng);
  if (!host.ok) return host;
  const hostPort = host.value.port;
  const containerPort = mode === 'host' ? (port.protocol === 'tcp' || port.protocol === 'udp' ? publicPort : hostPort) : port.port;
  const allocation: LobbyPortAllocation = {
    label: port.label,
    protocol: port.protocol,
    proxy: port.proxy,
    transport,
    publicPort,
    hostPort,
    ...optional('containerPort', containerPort),
  };
  return ok({ space: host.value.space, allocation });
};

const allocateRange = (space: PortSpace, port: ResolvedPort): Step => {
  const range = port.portRange;
  if (range === undefined) throw new Error(`port ${port.label}: proxy none needs a port range (validation bug)`);
  const transport = transportOf(port.protocol);
  const reserved = reserveRange(space, transport, range);
  if (!reserved.ok) return reserved;
  const allocation: LobbyPortAllocation = {
    label: port.label,
    protocol: port.protocol,
    proxy: port.proxy,
    transport,
    range: { min: range.min, max: range.max },
  };
  return ok({ space: reserved.value, allocation });
};

/**
 * Takes every port a lobby needs, in configuration order, or nothing: on failure (the first
 * PORT_RANGE_EXHAUSTED) `space` is untouched, since a space never changes. Draws from `rng` once
 * per random port (proxied, then host). Throws for proxy `none` without a `portRange`, which
 * validation rejects.
 *
 * @example
 * const r = allocateLobbyPorts(createPortSpace(), mode.container.ports, 'bridge', createRng(seed));
 * if (r.ok) lobby = { ...lobby, ports: r.value.allocations };
 */
export const allocateLobbyPorts = (
  space: PortSpace,
  ports: readonly ResolvedPort[],
  networkMode: NetworkMode,
  rng: Rng,
): Result<{ readonly space: PortSpace; readonly allocations: readonly LobbyPortAllocation[] }, MatchError> => {
  let current = space;
  const allocations: LobbyPortAllocation[] = [];
  for (const port of ports) {
    const step = port.proxy === 'none' ? allocateRange(current, port) : allocateProxied(current, port, networkMode, rng);
    if (!step.ok) return step;
    current = step.value.space;
    allocations.push(step.value.allocation);
  }
  return ok({ space: current, allocations });
};

function* takenBy(a: LobbyPortAllocation): Generator<number> {
  if (a.publicPort !== undefined && fixedPublicPort(a.protocol) === undefined) yield a.publicPort;
  if (a.hostPort !== undefined) yield a.hostPort;
  if (a.range !== undefined) for (let p = a.range.min; p <= a.range.max; p++) yield p;
}

/**
 * The ports `allocations` hold in the space, per transport, ascending and without duplicates:
 * proxied and host ports and every port of each range (never the fixed 80/443).
 *
 * @example
 * lobbyPortsInUse([{ label: 'g', protocol: 'udp', proxy: 'game_guard', transport: 'udp', publicPort: 27001, hostPort: 21001 }]);
 * // { tcp: [], udp: [21001, 27001] }
 */
export const lobbyPortsInUse = (
  allocations: readonly LobbyPortAllocation[],
): { readonly tcp: number[]; readonly udp: number[] } => {
  const used = { tcp: new Set<number>(), udp: new Set<number>() };
  for (const a of allocations) for (const p of takenBy(a)) used[a.transport].add(p);
  const sorted = (s: ReadonlySet<number>): number[] => [...s].sort((x, y) => x - y);
  return { tcp: sorted(used.tcp), udp: sorted(used.udp) };
};

/**
 * Gives back exactly what `allocateLobbyPorts` took for `allocations`.
 *
 * @example
 * const after = releaseLobbyPorts(space, lobby.ports);
 */
export const releaseLobbyPorts = (space: PortSpace, allocations: readonly LobbyPortAllocation[]): PortSpace => {
  const used = lobbyPortsInUse(allocations);
  return releasePorts(releasePorts(space, 'tcp', used.tcp), 'udp', used.udp);
};

/**
 * Takes exactly the ports `allocations` hold (the inverse of {@link releaseLobbyPorts}): what
 * rebuilding a space from persisted lobbies needs. Fails with the first port (per transport,
 * ascending; tcp first) that is already taken or lies outside the space, leaving `space` untouched.
 *
 * @example
 * const r = claimLobbyPorts(createPortSpace(), lobby.ports);
 * if (r.ok) space = r.value;
 */
export const claimLobbyPorts = (
  space: PortSpace,
  allocations: readonly LobbyPortAllocation[],
): Result<PortSpace, { readonly transport: Transport; readonly port: number }> => {
  const used = lobbyPortsInUse(allocations);
  for (const transport of ['tcp', 'udp'] as const) {
    const bits = space[transport];
    const port = used[transport].find((p) => !bits.covers(p) || bits.has(p));
    if (port !== undefined) return err({ transport, port });
  }
  return ok(claimPorts(claimPorts(space, 'tcp', used.tcp), 'udp', used.udp));
};
