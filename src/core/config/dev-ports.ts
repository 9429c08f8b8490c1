/**
 * `validateDevelopmentPorts`: the port rules of validateGameNamespaceTokenDevelopment (wire.md
 * §2.5, Rivet `game-token-development-validate`) over the deprecated `lobby_ports` list.
 */
import type { PortProtocol, PortRange, Problem } from './types.js';
import { LIMITS } from './defaults.js';
import { PROTOCOLS, portRange } from './parse-container.js';
import { object, oneOf, str, u32, type Parser } from './parse-reader.js';
import { dedupeProblems, defined, problem, type Path } from './path.js';
import { isIdent } from './validate-text.js';

interface DevPort {
  readonly label?: string;
  readonly targetPort?: number;
  readonly portRange?: PortRange;
  readonly protocol?: PortProtocol;
}

const devPort: Parser<DevPort> = object((f) =>
  defined<DevPort>({
    label: f.req('label', str),
    targetPort: f.opt('target_port', u32),
    portRange: f.opt('port_range', portRange),
    protocol: f.req('proxy_protocol', oneOf(PROTOCOLS)),
  }),
  // Not a version config: this body keeps Rivet's rule, unknown request keys are ignored (wire.md §1.3).
  { unknown: 'ignore' },
);

type State = { readonly labels: Set<string>; readonly ports: Set<string>; readonly ranges: PortRange[] };

function checkCombination(port: DevPort, protocol: PortProtocol, at: Path, state: State, out: Problem[]): void {
  const { targetPort, portRange: range } = port;
  if (targetPort !== undefined && range === undefined) return;
  if (targetPort === undefined && range !== undefined) {
    if (protocol !== 'tcp' && protocol !== 'udp') {
      out.push(problem(at, 'unsupported-port-range'));
      return;
    }
    if (range.min > range.max) out.push(problem(at, 'range-min-gt-max'));
    if (state.ranges.some((r) => range.max >= r.min && range.min <= r.max)) out.push(problem(at, 'ranges-overlap'));
    state.ranges.push(range);
    return;
  }
  out.push(problem(at, range === undefined ? 'missing-port-and-port-range' : 'duplicate-port-and-port-range'));
}

function checkPort(port: DevPort, at: Path, state: State, out: Problem[]): void {
  if (port.label !== undefined) {
    if (!isIdent(port.label)) out.push(problem(at, 'label-invalid'));
    else if (state.labels.has(port.label)) out.push(problem(at, 'label-not-unique'));
    state.labels.add(port.label);
  }
  if (port.protocol === undefined) return;
  if (port.targetPort !== undefined) {
    const key = `${port.targetPort}/${port.protocol}`;
    if (state.ports.has(key)) out.push(problem(at, 'port-protocol-not-unique'));
    state.ports.add(key);
  }
  checkCombination(port, port.protocol, at, state, out);
}

/**
 * Validates the `lobby_ports` of a development token: more than 16 is `['ports-too-many']`; per
 * entry (path `['ports', '<index>', …]`) `label-invalid`, `label-not-unique`,
 * `port-protocol-not-unique`, `unsupported-port-range` (a range only for tcp/udp),
 * `range-min-gt-max`, `ranges-overlap` (across all protocols), `duplicate-port-and-port-range`,
 * `missing-port-and-port-range`. Malformed input gives `invalid-type` (and `missing`, `negative`…)
 * problems; never throws.
 *
 * @example
 * validateDevelopmentPorts([{ label: 'game', target_port: 7777, proxy_protocol: 'udp' }]); // []
 * validateDevelopmentPorts([{ label: 'Game', proxy_protocol: 'udp' }]);
 * // [['ports', '0', 'label-invalid'], ['ports', '0', 'missing-port-and-port-range']]
 */
export function validateDevelopmentPorts(lobbyPorts: unknown): readonly Problem[] {
  const out: Problem[] = [];
  if (!Array.isArray(lobbyPorts)) return [problem(['ports'], 'invalid-type')];
  if (lobbyPorts.length > LIMITS.ports) out.push(problem([], 'ports-too-many'));
  const state: State = { labels: new Set(), ports: new Set(), ranges: [] };
  lobbyPorts.forEach((entry: unknown, i) => {
    const at = ['ports', String(i)];
    const port = devPort(entry, at, out);
    if (port !== undefined) checkPort(port, at, state, out);
  });
  return dedupeProblems(out);
}
