/**
 * The game proxy's counters as HAProxy reports them (`show stat`'s CSV), read into per-slot and
 * per-listener figures. No I/O: the proxy (`proxy.ts`) asks HAProxy and passes the answer.
 */
import type { ProxyRoute } from '../../core/effects.js';
import { slotName } from './config.js';
import type { TableEntry } from './runtime-api.js';

/** One route's counters, as HAProxy counted them since the route's first request. */
export interface RouteStats {
  readonly route: ProxyRoute;
  readonly hostname: string;
  readonly requests: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** Requests HAProxy counts as client errors (4xx answers and invalid requests). */
  readonly clientErrors: number;
  /** 5xx answers of the game server (the proxy's own 503 when the lobby does not answer: `connectErrors`). */
  readonly serverErrors: number;
  /** Requests refused by a per-address limit (429). */
  readonly limited: number;
  /** Connections to the lobby that failed since the route was bound (nothing listening on its port: 503). */
  readonly connectErrors: number;
}

/** One listener's counters; `lobbies` is the lobbies' side (every route slot together). */
export interface ListenerStats {
  readonly listener: string;
  /** Requests refused by the limits (429). */
  readonly denied: number;
  /** Bad or slow requests (408). */
  readonly invalid: number;
  readonly requests: number;
  /** Connections to a lobby that failed (nothing listening on its port: 503). */
  readonly connectErrors: number;
}

/** The name every slot backend starts with (`lobby-slot-`). */
const SLOT_PREFIX = slotName(0).slice(0, -1);

/** `show stat`'s rows, and a row's number in a named column (0 when absent or not a number). */
const parseStat = (csv: string): { readonly rows: string[][]; readonly col: (row: readonly string[], name: string) => number } => {
  const lines = csv.split('\n').filter((l) => l.trim() !== '');
  const header = lines[0]?.replace(/^# /, '').split(',') ?? [];
  return {
    rows: lines.slice(1).map((l) => l.split(',')),
    col: (row, name) => Number(row[header.indexOf(name)] ?? 0) || 0,
  };
};

const isSlot = (row: readonly string[]): boolean => row[1] === 'BACKEND' && (row[0] ?? '').startsWith(SLOT_PREFIX);

/**
 * Each route slot's failed connections (`econ`), by slot number.
 *
 * @example
 * slotFailures(await runtimeCall(socket, 'show stat -1 2 -1')).get(3) // lobby-slot-3's econ
 */
export function slotFailures(csv: string): Map<number, number> {
  const { rows, col } = parseStat(csv);
  return new Map(rows.filter(isSlot).map((row) => [Number((row[0] ?? '').slice(SLOT_PREFIX.length)), col(row, 'econ')]));
}

/**
 * Per frontend: requests, denials (429) and invalid requests (408); then the lobbies' side
 * (`listener: 'lobbies'`): requests and failed connections over every slot, which HAProxy does not
 * count per route.
 *
 * @example
 * listenerCounts(await runtimeCall(socket, 'show stat')).find((l) => l.listener === 'lobbies')?.connectErrors
 */
export function listenerCounts(csv: string): ListenerStats[] {
  const { rows, col } = parseStat(csv);
  const slots = rows.filter(isSlot);
  return [
    ...rows.filter((row) => row[1] === 'FRONTEND').map((row) => ({
      listener: row[0] ?? '', denied: col(row, 'dreq'), invalid: col(row, 'ereq'), requests: col(row, 'req_tot'), connectErrors: 0,
    })),
    { listener: 'lobbies', denied: 0, invalid: 0, requests: slots.reduce((n, row) => n + col(row, 'req_tot'), 0), connectErrors: slots.reduce((n, row) => n + col(row, 'econ'), 0) },
  ];
}

/**
 * A route's counters from its entry in the `routes` stick table, with the failed connections its
 * slot counted since the route was bound.
 *
 * @example
 * routeCounters(route, entry, 0).requests // entry.counters.http_req_cnt
 */
export function routeCounters(route: ProxyRoute, entry: TableEntry, connectErrors: number): RouteStats {
  const c = entry.counters;
  return {
    route, hostname: entry.key,
    requests: c['http_req_cnt'] ?? 0, bytesIn: c['bytes_in_cnt'] ?? 0, bytesOut: c['bytes_out_cnt'] ?? 0,
    clientErrors: c['http_err_cnt'] ?? 0, serverErrors: c['http_fail_cnt'] ?? 0, limited: c['gpc0'] ?? 0,
    connectErrors,
  };
}
