/**
 * The port rules of wire.md §2.1 for one written container block (network mode × proxy ×
 * protocol × port/range), with Rivet's problem names at `<base>.ports.*label*.<problem>`.
 */
import type { ContainerConfig, NetworkMode, PortConfig, PortProtocol, PortRange, Problem, ProxyKind } from './types.js';
import { DEFAULT_NETWORK_MODE, DEFAULT_PORT_PROTOCOL, DEFAULT_PROXY_KIND, HOST_PORT_RANGE, LIMITS } from './defaults.js';
import { named, problem, type Path } from './path.js';
import { isIdent } from './validate-text.js';

type Combination =
  | 'range'
  | 'duplicate-port-and-port-range'
  | 'missing-port-and-port-range'
  | 'unsupported-target-port'
  | 'unsupported-port-range'
  | 'needs-host-network'
  | 'needs-game-guard';

/**
 * Classifies one port: `undefined` when valid as a single port, `'range'` when valid as a host
 * range (still to be checked for bounds and overlap), else the problem name. Mirrors the match in
 * Rivet's `game-version-validate`, arm by arm.
 *
 * @example
 * portCombination('bridge', 'none', 'udp', { port: 7777 }); // 'needs-host-network'
 */
export function portCombination(network: NetworkMode, proxy: ProxyKind, protocol: PortProtocol, port: PortConfig): Combination | undefined {
  const hasPort = port.port !== undefined;
  const hasRange = port.portRange !== undefined;
  if (network === 'host' && proxy === 'none' && (protocol === 'tcp' || protocol === 'udp') && !hasPort && hasRange) return 'range';
  if (proxy === 'game_guard' && hasPort && !hasRange) return undefined;
  if (hasPort && hasRange) return 'duplicate-port-and-port-range';
  if (!hasPort && !hasRange) return 'missing-port-and-port-range';
  if (network === 'host' && hasPort) return 'unsupported-target-port';
  if (proxy === 'game_guard') return 'unsupported-port-range';
  if (network === 'bridge') return 'needs-host-network';
  return 'needs-game-guard';
}

type ProtocolRange = PortRange & { readonly protocol: PortProtocol };

function validateRange(range: ProtocolRange, earlier: readonly ProtocolRange[], at: Path, out: Problem[]): void {
  if (range.min > range.max) out.push(problem(at, 'range-min-gt-max'));
  if (range.min < HOST_PORT_RANGE.min || range.max > HOST_PORT_RANGE.max) out.push(problem(at, 'range-out-of-bounds'));
  else if (earlier.some((r) => r.protocol === range.protocol && range.max >= r.min && range.min <= r.max)) out.push(problem(at, 'ranges-overlap'));
}

/**
 * Validates the ports of one container block written at `base`: at most 16 (`ports-too-many`),
 * labels are idents (`label-invalid`), `(port, protocol)` unique (`port-protocol-not-unique`), a
 * single port lies in 1–65535 (`port-out-of-range`, a Tavern addition), the combination rules, and
 * host ranges within 26000–31999 (`range-out-of-bounds`), min ≤ max (`range-min-gt-max`) and not
 * overlapping an earlier range of the same protocol (`ranges-overlap`).
 *
 * @example
 * validatePorts({ networkMode: 'bridge', ports: { game: { port: 7777, proxy: 'none' } } }, base, out);
 * // out: [{ path: [...base, 'ports', '*game*', 'needs-host-network'] }]
 */
export function validatePorts(container: ContainerConfig, base: Path, out: Problem[]): void {
  const ports = Object.entries(container.ports ?? {});
  if (ports.length > LIMITS.ports) out.push(problem(base, 'ports-too-many'));
  const network = container.networkMode ?? DEFAULT_NETWORK_MODE;
  const seen = new Set<string>();
  const ranges: ProtocolRange[] = [];
  for (const [label, port] of ports) {
    const at = [...base, 'ports', named(label)];
    const protocol = port.protocol ?? DEFAULT_PORT_PROTOCOL;
    if (!isIdent(label)) out.push(problem(at, 'label-invalid'));
    if (port.port !== undefined) {
      const key = `${port.port}/${protocol}`;
      if (seen.has(key)) out.push(problem(at, 'port-protocol-not-unique'));
      seen.add(key);
      if (port.port < 1 || port.port > LIMITS.portNumber) out.push(problem(at, 'port-out-of-range'));
    }
    const combination = portCombination(network, port.proxy ?? DEFAULT_PROXY_KIND, protocol, port);
    if (combination === 'range' && port.portRange !== undefined) {
      const range = { ...port.portRange, protocol };
      validateRange(range, ranges, at, out);
      ranges.push(range);
    } else if (combination !== undefined) out.push(problem(at, combination));
  }
}
