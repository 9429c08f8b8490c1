/**
 * What HAProxy is told so that it serves the routes Tavern wants (desired) instead of the ones it
 * holds (applied): per changed route, its slot and runtime-API commands, in an order that never
 * sends a request to a slot that does not point at the route's lobby; the commands in runs that fit
 * HAProxy's command buffer; and the maps and slot addresses HAProxy starts with. No I/O: plain data
 * in and out, except the slot table (`slots.ts`), which lends and frees slots as told; the proxy
 * (`proxy.ts`) sends the commands and records what HAProxy took.
 */
import type { ProxyRoute } from '../../core/effects.js';
import { slotName } from './config.js';
import type { SlotTable } from './slots.js';

/** The route maps: `http` routes on the HTTP listener, `https` on the HTTPS one. */
export type Proto = 'http' | 'https';

export const PROTOS: readonly Proto[] = ['http', 'https'];

/**
 * Which map a route goes in; `tcp`/`udp` are published by the runtime itself, `tcp_tls` is not proxied yet.
 *
 * @example
 * protoOf({ ...route, protocol: 'udp' }) // undefined
 */
export const protoOf = (route: ProxyRoute): Proto | undefined => (route.protocol === 'http' ? 'http' : route.protocol === 'https' ? 'https' : undefined);

/** Per map, hostname → the lobby's address (`127.0.0.1:20001`, `[::1]:20001`). */
export type RouteMaps = Readonly<Record<Proto, ReadonlyMap<string, string>>>;

/**
 * A route's name in the slot table and among the changed routes (hostnames have no space).
 *
 * @example
 * routeKey('http', 'a-default.lobby.local.example.test') // 'http a-default.lobby.local.example.test'
 */
export const routeKey = (proto: Proto, host: string): string => `${proto} ${host}`;

/**
 * A route's map and hostname, from its key.
 *
 * @example
 * parseRouteKey('https a-default.lobby.local.example.test') // ['https', 'a-default.lobby.local.example.test']
 */
export const parseRouteKey = (key: string): [Proto, string] => key.split(' ') as [Proto, string];

/**
 * Whether the route `key` is wanted at another address than the one `applied` holds (or wanted and
 * not held, or held and not wanted).
 *
 * @example
 * differs(desired, applied, routeKey('http', host)) // true after a bind not yet sent
 */
export const differs = (desired: RouteMaps, applied: RouteMaps, key: string): boolean => {
  const [proto, host] = parseRouteKey(key);
  return desired[proto].get(host) !== applied[proto].get(host);
};

/** One route to change: `want` undefined removes it, `have` undefined adds it, both set move it. */
export interface RouteChange {
  readonly key: string;
  readonly proto: Proto;
  readonly host: string;
  readonly want: string | undefined;
  readonly have: string | undefined;
}

/**
 * The routes among `keys` that differ, in the order of `keys`.
 *
 * @example
 * routeChanges({ http: new Map([['a.x', '127.0.0.1:1']]), https: new Map() }, { http: new Map(), https: new Map() }, ['http a.x'])
 * // [{ key: 'http a.x', proto: 'http', host: 'a.x', want: '127.0.0.1:1', have: undefined }]
 */
export function routeChanges(desired: RouteMaps, applied: RouteMaps, keys: Iterable<string>): RouteChange[] {
  const changes: RouteChange[] = [];
  for (const key of keys) {
    const [proto, host] = parseRouteKey(key);
    const want = desired[proto].get(host);
    const have = applied[proto].get(host);
    if (want !== have) changes.push({ key, proto, host, want, have });
  }
  return changes;
}

/**
 * `127.0.0.1:20001` → ['127.0.0.1', '20001']; `[::1]:20001` → ['::1', '20001'].
 *
 * @example
 * splitAddress('[::1]:20001') // ['::1', '20001']
 */
export const splitAddress = (addr: string): [string, string] => {
  const colon = addr.lastIndexOf(':');
  return [addr.slice(0, colon).replace(/^\[|\]$/g, ''), addr.slice(colon + 1)];
};

/** An address as a `server` line takes it (IPv6 in brackets). */
const configAddress = (addr: string): string => {
  const [ip, port] = splitAddress(addr);
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
};

/**
 * The commands that make HAProxy serve `change` through `slot`, whose hostname lives in `mapFile`.
 * A new route: the slot's server pointed at the lobby and made ready, then the hostname mapped to
 * the slot. A moved route: the server pointed at the new address. A removed route: the hostname
 * unmapped, then the slot's server put in maintenance and its sessions cut (the lobby is stopping).
 *
 * @example
 * routeCommands({ key: 'http a.x', proto: 'http', host: 'a.x', want: '127.0.0.1:20001', have: undefined }, 3, '/p/routes-http.map')
 * // ['set server lobby-slot-3/lobby addr 127.0.0.1 port 20001', 'set server lobby-slot-3/lobby state ready', 'add map /p/routes-http.map a.x lobby-slot-3']
 */
export function routeCommands(change: RouteChange, slot: number, mapFile: string): string[] {
  const server = `${slotName(slot)}/lobby`;
  if (change.want === undefined) return [`del map ${mapFile} ${change.host}`, `set server ${server} state maint`, `shutdown sessions server ${server}`];
  const [ip, port] = splitAddress(change.want);
  const point = `set server ${server} addr ${ip} port ${port}`;
  return change.have === undefined ? [point, `set server ${server} state ready`, `add map ${mapFile} ${change.host} ${slotName(slot)}`] : [point];
}

/** A change to send: the route's slot and the commands. */
export interface RouteStep {
  readonly change: RouteChange;
  readonly slot: number;
  readonly commands: readonly string[];
}

/**
 * Each change with its slot (a bound or moved route's, lent now if it has none; a removed route's
 * own, freed only once HAProxy took the commands: the caller's `slots.release`) and its commands;
 * and the keys of the routes refused a slot (every slot was held), which are left out.
 *
 * @example
 * const { steps, refused } = routeSteps(routeChanges(desired, applied, dirty), slots, { http: '/p/routes-http.map', https: '/p/routes-https.map' });
 */
export function routeSteps(changes: readonly RouteChange[], slots: SlotTable, mapFiles: Readonly<Record<Proto, string>>): { steps: RouteStep[]; refused: string[] } {
  const steps: RouteStep[] = [];
  const refused: string[] = [];
  for (const change of changes) {
    const slot = change.want === undefined ? slots.slotOf(change.key) : slots.assign(change.key);
    if (slot !== undefined) steps.push({ change, slot, commands: routeCommands(change, slot, mapFiles[change.proto]) });
    else if (change.want !== undefined) refused.push(change.key);
  }
  return { steps, refused };
}

/**
 * `steps` in order, in runs whose commands (each with its `;` or newline) take at most `maxBytes`;
 * a step is never split, and one larger than `maxBytes` runs alone.
 *
 * @example
 * inBatches([{ commands: ['a'.repeat(6)] }, { commands: ['b'.repeat(6)] }], 10) // two runs of one step
 */
export function inBatches<T extends { readonly commands: readonly string[] }>(steps: readonly T[], maxBytes: number): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const step of steps) {
    const size = step.commands.reduce((n, c) => n + c.length + 1, 0);
    if (batch.length > 0 && bytes + size > maxBytes) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(step);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** What HAProxy starts with. */
export interface StartingRoutes {
  /** Each map file's text: a `<hostname> <slot backend>` line per route. */
  readonly maps: Readonly<Record<Proto, string>>;
  /** Each slot's server address (`config.ts`'s `slots`), undefined for a free slot. */
  readonly slots: ReadonlyArray<string | undefined>;
  /** The routes HAProxy holds once started: the desired ones with a slot. */
  readonly written: Record<Proto, Map<string, string>>;
}

/**
 * Lends a slot to every desired route for a new HAProxy, after freeing the slots of the routes no
 * longer desired; the keys of the routes refused one (every slot was held).
 *
 * @example
 * for (const key of slotsForStart(slots, desired)) log.error({ route: key }, 'no free route slot');
 */
export function slotsForStart(slots: SlotTable, desired: RouteMaps): string[] {
  for (const [key] of [...slots.held()]) {
    const [proto, host] = parseRouteKey(key);
    if (!desired[proto].has(host)) slots.release(key);
  }
  const refused: string[] = [];
  for (const proto of PROTOS) {
    for (const host of desired[proto].keys()) if (slots.assign(routeKey(proto, host)) === undefined) refused.push(routeKey(proto, host));
  }
  return refused;
}

/**
 * The maps and slot addresses that make a new HAProxy serve every desired route holding a slot in
 * `slotOf` (a route without one is left out), for a table of `size` slots.
 *
 * @example
 * startingRoutes({ http: new Map([['a.x', '127.0.0.1:20001']]), https: new Map() }, new Map([['http a.x', 0]]), 2)
 * // { maps: { http: 'a.x lobby-slot-0\n', https: '' }, slots: ['127.0.0.1:20001', undefined], written: … }
 */
export function startingRoutes(desired: RouteMaps, slotOf: ReadonlyMap<string, number>, size: number): StartingRoutes {
  const slots: Array<string | undefined> = Array.from({ length: size }, () => undefined);
  const written = { http: new Map<string, string>(), https: new Map<string, string>() };
  const maps = { http: '', https: '' };
  for (const proto of PROTOS) {
    const lines: string[] = [];
    for (const [host, addr] of desired[proto]) {
      const slot = slotOf.get(routeKey(proto, host));
      if (slot === undefined) continue;
      slots[slot] = configAddress(addr);
      written[proto].set(host, addr);
      lines.push(`${host} ${slotName(slot)}\n`);
    }
    maps[proto] = lines.join('');
  }
  return { maps, slots, written };
}
