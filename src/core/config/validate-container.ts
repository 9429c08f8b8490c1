/**
 * Validation of container blocks: each written block where it is written (args, env, build,
 * ports), and each game mode's effective container after the cascade (a runtime and a build are
 * required; env names must not collide with what the container receives).
 */
import type { ContainerConfig, GameModeConfig, MatchmakerConfig, PortConfig, Problem, ValidationContext } from './types.js';
import { DEFAULT_PORT_PROTOCOL, DEFAULT_PROXY_KIND, LIMITS, RESERVED_ENV_NAMES } from './defaults.js';
import { HOST_NETWORK_REFUSED } from './host-network.js';
import { explained, named, problem, type Path } from './path.js';
import { portEnvLabel } from '../ports/port-env.js';
import { validatePorts } from './validate-ports.js';
import { lengthProblem } from './validate-text.js';

function validateArgs(args: readonly string[], base: Path, out: Problem[]): void {
  if (args.length > LIMITS.args) out.push(problem(base, 'args-too-many'));
  const seen = new Set<string>();
  args.forEach((arg, i) => {
    const length = lengthProblem(arg, 1, LIMITS.argBytes);
    const name = length === 'too-short' || arg.includes('\u0000') ? 'invalid' : length ?? (seen.has(arg) ? 'not-unique' : undefined);
    if (name !== undefined) out.push(problem(base, 'args', String(i), name));
    seen.add(arg);
  });
}

function validateEnv(env: Readonly<Record<string, string>>, base: Path, out: Problem[]): void {
  const entries = Object.entries(env);
  if (entries.length > LIMITS.envVars) out.push(problem(base, 'env-vars-too-many'));
  for (const [key, value] of entries) {
    const at = [...base, 'env-vars', named(key)];
    const keyLength = lengthProblem(key, 1, LIMITS.envKeyBytes);
    // Tavern: `=` and NUL cannot appear in an environment name, nor NUL in a value.
    if (keyLength === 'too-short' || key.includes('=') || key.includes('\u0000')) out.push(problem(at, 'key', 'invalid'));
    else if (keyLength === 'too-long') out.push(problem(at, 'key', 'too-long'));
    const valueLength = lengthProblem(value, 1, LIMITS.envValueBytes);
    if (valueLength === 'too-short' || value.includes('\u0000')) out.push(problem(at, 'value', 'invalid'));
    else if (valueLength === 'too-long') out.push(problem(at, 'value', 'too-long'));
  }
}

/**
 * Validates one container block written at `base` (a game mode or the matchmaker), with Rivet's
 * flattened paths: `args-too-many`, `args.<i>.invalid|too-long|not-unique`, `env-vars-too-many`,
 * `env-vars.*KEY*.key|value.invalid|too-long`, `image-id.not-found|upload-incomplete` (when
 * `ctx.build` is given), the port rules of {@link validatePorts}, and `ports.*label*.protocol-not-served`
 * for a game-proxy port whose protocol the operator's proxy does not serve (`ctx.proxyProtocols`; a port
 * with no protocol is `https`, Rivet's default), in the words of `ctx.protocolRefusals` when it has them, and
 * `network-mode.host-not-allowed` (with {@link HOST_NETWORK_REFUSED} as its message) for host networking
 * on a server whose operator did not allow it (`ctx.hostNetworkAllowed === false`).
 *
 * @example
 * validateContainer({ args: [''] }, ['config', 'matchmaker'], ctx, out);
 * // out: [{ path: ['config', 'matchmaker', 'args', '0', 'invalid'] }]
 */
export function validateContainer(container: ContainerConfig, base: Path, ctx: ValidationContext, out: Problem[]): void {
  // Stryker disable next-line ArrayDeclaration: equivalent; the only literal a mutant puts here (['Stryker was here']) is one valid arg, which gives no problem, just as no args.
  validateArgs(container.args ?? [], base, out);
  validateEnv(container.env ?? {}, base, out);
  const build = container.imageId === undefined ? undefined : ctx.build?.(container.imageId);
  if (build === 'missing') out.push(problem(base, 'image-id', 'not-found'));
  if (build === 'incomplete') out.push(problem(base, 'image-id', 'upload-incomplete'));
  validatePorts(container, base, out);
  if (container.networkMode === 'host' && ctx.hostNetworkAllowed === false) out.push(explained(base, HOST_NETWORK_REFUSED, 'network-mode', 'host-not-allowed'));
  const served = ctx.proxyProtocols;
  if (served === undefined) return;
  for (const [label, port] of Object.entries(container.ports ?? {})) {
    const protocol = port.protocol ?? DEFAULT_PORT_PROTOCOL;
    if ((port.proxy ?? DEFAULT_PROXY_KIND) !== 'game_guard' || served.has(protocol)) continue;
    const why = ctx.protocolRefusals?.[protocol];
    const at = [...base, 'ports', named(label)];
    // The README-sample trap: `{ port = 3000 }` asks for https without saying so.
    const implicit = port.protocol === undefined ? `this port names no protocol, so it is ${protocol} (Rivet's default)` : undefined;
    const words = [why, implicit].filter((w): w is string => w !== undefined);
    out.push(words.length === 0 ? problem(at, 'protocol-not-served') : explained(at, words.join('; '), 'protocol-not-served'));
  }
}

/**
 * The environment names a lobby receives for its ports (wire.md §5.4), exactly as `portEnv`
 * (ports/port-env.ts) sets them: `PORT_<LABEL>` for a single port and `PORT_RANGE_MIN_<LABEL>` /
 * `PORT_RANGE_MAX_<LABEL>` for a range, the label with `-` → `_` and upper-cased (Rivet defect 16:
 * it validated `PORT_RANGE_<label>_MIN`, a name the container never receives).
 *
 * @example
 * portEnvNames({ 'game-udp': { port: 7777 } }); // ['PORT_GAME_UDP']
 */
export function portEnvNames(ports: Readonly<Record<string, PortConfig>>): readonly string[] {
  return Object.entries(ports).flatMap(([label, port]) => {
    const l = portEnvLabel(label);
    return [
      ...(port.port === undefined ? [] : [`PORT_${l}`]),
      ...(port.portRange === undefined ? [] : [`PORT_RANGE_MIN_${l}`, `PORT_RANGE_MAX_${l}`]),
    ];
  });
}

const isReservedRivetName = (key: string): boolean => RESERVED_ENV_NAMES.includes(key) || /^RIVET_[A-Z0-9_]+_API_URL$/.test(key);

/**
 * Checks one game mode's effective container (the mode's block, else the matchmaker's): none at
 * all is `<mode>.no-runtime`; no `image_id` is `no-build` at the block's owner; an env name (from
 * either level, merged) that the container receives anyway is
 * `env-vars.*KEY*.key.conflicts-with-default` where it was written.
 *
 * @example
 * validateEffectiveContainer({}, modePath, {}, out); // out: [{ path: [...modePath, 'no-runtime'] }]
 */
export function validateEffectiveContainer(mode: GameModeConfig, modePath: Path, mm: MatchmakerConfig, out: Problem[]): void {
  const mmPath = ['config', 'matchmaker'];
  const chosen = mode.container ?? mm.container;
  if (chosen === undefined) {
    out.push(problem(modePath, 'no-runtime'));
    return;
  }
  if (chosen.imageId === undefined) out.push(problem(mode.container ? modePath : mmPath, 'no-build'));
  const portNames = portEnvNames(chosen.ports ?? {});
  const written: readonly (readonly [Path, Readonly<Record<string, string>> | undefined])[] = [
    [mmPath, mm.container?.env],
    [modePath, mode.container?.env],
  ];
  for (const [owner, env] of written) {
    for (const key of Object.keys(env ?? {})) {
      if (isReservedRivetName(key) || portNames.includes(key)) out.push(problem(owner, 'env-vars', named(key), 'key', 'conflicts-with-default'));
    }
  }
}
