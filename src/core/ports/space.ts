/**
 * The ports taken on one host (region): per transport, one persistent bitset over the hull of two
 * pools (wire.md §5.1–5.3):
 *
 * - `proxied` (default 26000..31999): the game proxy's TCP/UDP listen ports returned to clients. The
 *   ranges of proxy `none` + host-network ports use the same numbers, so a reserved range and a
 *   random proxied port can never overlap.
 * - `host` (default 20000..25999): host ports mapped to container ports (or listened on directly in
 *   host networking).
 *
 * Every operation returns a new space and leaves the old one untouched.
 */
import type { PortRange } from '../config/types.js';
import { matchError } from '../errors.js';
import type { MatchError } from '../errors.js';
import { err, ok } from '../result.js';
import type { Result } from '../result.js';
import type { Rng } from '../rng.js';
import { PortBitset } from './bitset.js';

/**
 * The transport a port is taken on; TCP and UDP ports are independent.
 *
 * @example
 * const t: Transport = 'udp';
 */
export type Transport = 'tcp' | 'udp';

/**
 * Which pool a single port is drawn from.
 *
 * @example
 * const p: PortPool = 'proxied';
 */
export type PortPool = 'proxied' | 'host';

/**
 * The two pools of a space.
 *
 * @example
 * const pools: PortPools = { proxied: { min: 26000, max: 31999 }, host: { min: 20000, max: 25999 } };
 */
export interface PortPools {
  readonly proxied: PortRange;
  readonly host: PortRange;
}

/**
 * The default pools: proxied 26000..31999, host 20000..25999 (frozen).
 *
 * @example
 * DEFAULT_PORT_POOLS.proxied.min; // 26000
 */
export const DEFAULT_PORT_POOLS: PortPools = Object.freeze({
  proxied: Object.freeze({ min: 26000, max: 31999 }),
  host: Object.freeze({ min: 20000, max: 25999 }),
});

/**
 * Pools to override at creation; absent ones take the defaults.
 *
 * @example
 * const options: PortSpaceOptions = { proxied: { min: 40000, max: 40009 } };
 */
export interface PortSpaceOptions {
  readonly proxied?: PortRange;
  readonly host?: PortRange;
}

/**
 * The taken ports of one host. Build it with `createPortSpace`; change it only through this module.
 *
 * @example
 * const space: PortSpace = createPortSpace();
 */
export interface PortSpace {
  readonly pools: PortPools;
  /** Taken TCP ports over the hull of both pools. */
  readonly tcp: PortBitset;
  /** Taken UDP ports over the hull of both pools. */
  readonly udp: PortBitset;
}

const validRange = (r: PortRange): boolean =>
  Number.isInteger(r.min) && Number.isInteger(r.max) && r.min >= 1 && r.max <= 65535 && r.min <= r.max;

/**
 * Why `pools` cannot make a space, or `undefined` when they can: each pool must be integers with
 * 1 <= min <= max <= 65535, and the pools must not overlap. Lets a config loader report the problem
 * as a value before calling `createPortSpace`.
 *
 * @example
 * portPoolsProblem({ proxied: { min: 100, max: 200 }, host: { min: 150, max: 300 } }); // 'the proxied and host pools overlap'
 */
export const portPoolsProblem = (pools: PortPools): string | undefined => {
  for (const name of ['proxied', 'host'] as const) {
    const r = pools[name];
    if (!validRange(r)) return `the ${name} pool ${r.min}..${r.max} is not 1 <= min <= max <= 65535`;
  }
  const { proxied, host } = pools;
  if (proxied.min <= host.max && host.min <= proxied.max) return 'the proxied and host pools overlap';
  return undefined;
};

/**
 * An empty space. Pools come from operator configuration, so invalid pools are a deployment bug:
 * this throws a RangeError with `portPoolsProblem`'s message (check it first to report a value).
 *
 * @example
 * const space = createPortSpace({ proxied: { min: 40000, max: 40009 } });
 * freeCount(space, 'tcp', 'proxied'); // 10
 */
export const createPortSpace = (options: PortSpaceOptions = {}): PortSpace => {
  const pools: PortPools = Object.freeze({
    proxied: Object.freeze({ ...(options.proxied ?? DEFAULT_PORT_POOLS.proxied) }),
    host: Object.freeze({ ...(options.host ?? DEFAULT_PORT_POOLS.host) }),
  });
  const problem = portPoolsProblem(pools);
  if (problem !== undefined) throw new RangeError(problem);
  const hull = {
    min: Math.min(pools.proxied.min, pools.host.min),
    max: Math.max(pools.proxied.max, pools.host.max),
  };
  const empty = PortBitset.create(hull);
  return Object.freeze({ pools, tcp: empty, udp: empty });
};

const withBits = (space: PortSpace, transport: Transport, bits: PortBitset): PortSpace =>
  bits === space[transport]
    ? space
    : Object.freeze({ pools: space.pools, tcp: transport === 'tcp' ? bits : space.tcp, udp: transport === 'udp' ? bits : space.udp });

const exhausted = (pool: string, range: PortRange): MatchError =>
  matchError('PORT_RANGE_EXHAUSTED', { pool, min: range.min, max: range.max });

/**
 * Takes a uniformly random free port of `pool` on `transport`: one `rng.int(free)` draw, then the
 * draw-th free port (bitset select). Fails with PORT_RANGE_EXHAUSTED `{pool, min, max}` exactly
 * when the pool is full (then `rng` is not drawn from).
 *
 * @example
 * const r = allocatePort(createPortSpace(), 'udp', 'proxied', createRng(1));
 * if (r.ok) r.value.port; // some port in 26000..31999
 */
export const allocatePort = (
  space: PortSpace,
  transport: Transport,
  pool: PortPool,
  rng: Rng,
): Result<{ readonly space: PortSpace; readonly port: number }, MatchError> => {
  const range = space.pools[pool];
  const bits = space[transport];
  const free = bits.countFree(range);
  if (free === 0) return err(exhausted(pool, range));
  const port = bits.nthFree(range, rng.int(free));
  if (port === undefined) throw new Error(`select found no free port in ${range.min}..${range.max}`);
  return ok({ space: withBits(space, transport, bits.setMany([port])), port });
};

function* portsOf(range: PortRange): Generator<number> {
  for (let p = range.min; p <= range.max; p++) yield p;
}

/**
 * Takes every port of `range` on `transport` (proxy `none` + host networking). Fails with
 * PORT_RANGE_EXHAUSTED `{pool: 'range', min, max}` (the range's bounds) when any port of it is
 * taken or lies outside the space's hull (the ports between the lowest and highest pool bound).
 * Throws a RangeError when `range` is not integers with min <= max (validation guarantees it).
 *
 * @example
 * const r = reserveRange(createPortSpace(), 'tcp', { min: 27000, max: 27009 });
 * if (r.ok) isAllocated(r.value, 'tcp', 27005); // true
 */
export const reserveRange = (space: PortSpace, transport: Transport, range: PortRange): Result<PortSpace, MatchError> => {
  if (!Number.isInteger(range.min) || !Number.isInteger(range.max) || range.min > range.max) {
    throw new RangeError(`invalid port range ${range.min}..${range.max}`);
  }
  const bits = space[transport];
  if (!bits.covers(range.min) || !bits.covers(range.max) || bits.countUsed(range) > 0) {
    return err(exhausted('range', range));
  }
  return ok(withBits(space, transport, bits.setMany(portsOf(range))));
};

/**
 * Takes these exact `ports` on `transport` (ports already taken stay taken); returns `space` itself
 * when nothing changes. Throws a RangeError for a port outside the space's hull (callers check
 * first: see `claimLobbyPorts`).
 *
 * @example
 * const s = claimPorts(createPortSpace(), 'udp', [26001, 21001]);
 */
export const claimPorts = (space: PortSpace, transport: Transport, ports: Iterable<number>): PortSpace =>
  withBits(space, transport, space[transport].setMany(ports));

/**
 * Gives back `ports` on `transport`. Ports not taken (or outside the space) are ignored; returns
 * `space` itself when nothing changes.
 *
 * @example
 * const s = releasePorts(space, 'tcp', [26001, 26002]);
 */
export const releasePorts = (space: PortSpace, transport: Transport, ports: Iterable<number>): PortSpace =>
  withBits(space, transport, space[transport].clearMany(ports));

/**
 * Gives back every port of `range` on `transport` (what `reserveRange` took).
 *
 * @example
 * const s = releaseRange(space, 'udp', { min: 27000, max: 27009 });
 */
export const releaseRange = (space: PortSpace, transport: Transport, range: PortRange): PortSpace =>
  releasePorts(space, transport, portsOf(range));

/**
 * Whether `port` is taken on `transport`.
 *
 * @example
 * isAllocated(createPortSpace(), 'tcp', 26000); // false
 */
export const isAllocated = (space: PortSpace, transport: Transport, port: number): boolean =>
  space[transport].has(port);

/**
 * How many ports of `pool` are taken on `transport` (random picks and reserved ranges alike).
 *
 * @example
 * usedCount(createPortSpace(), 'udp', 'host'); // 0
 */
export const usedCount = (space: PortSpace, transport: Transport, pool: PortPool): number =>
  space[transport].countUsed(space.pools[pool]);

/**
 * How many ports of `pool` are free on `transport`.
 *
 * @example
 * freeCount(createPortSpace(), 'udp', 'host'); // 6000
 */
export const freeCount = (space: PortSpace, transport: Transport, pool: PortPool): number =>
  space[transport].countFree(space.pools[pool]);
