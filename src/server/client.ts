/**
 * The requesting client as the matchmaker sees it (wire.md §1.2): its address (`cf-connecting-ip`,
 * else the first `x-forwarded-for` entry, else the TCP peer the bridge reports — Rivet failed with
 * `API_MISSING_HEADER` there), its location (`x-coords: <lat>,<long>`) and user agent.
 */
import { isIP } from 'node:net';
import type { Client } from '../core/matchmaker/request.js';
import { matchError, type MatchError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import type { Ctx } from './context.js';
import { unwrap } from './errors.js';
import type { Incoming } from './incoming.js';

const stripPort = (raw: string): string => {
  const s = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracketed !== null) return bracketed[1] as string;
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(s);
  return v4 !== null ? (v4[1] as string) : s;
};

/** IPv4-mapped IPv6 (`::ffff:1.2.3.4`, what Node reports for IPv4 peers on a dual-stack socket) → IPv4. */
const unmap = (ip: string): string => {
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return m !== null ? (m[1] as string) : ip.toLowerCase();
};

/** A dotted IPv4 address, each byte in decimal without leading zeros (what `isIP` accepts as 4). */
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** The first entry of a comma-separated header (`x-forwarded-for`: the client, then each proxy). */
const firstEntry = (header: string | null): string | undefined => {
  if (header === null) return undefined;
  const comma = header.indexOf(',');
  return comma < 0 ? header : header.slice(0, comma);
};

/**
 * A request's client address: proxy headers when trusted, else the socket address; or why there
 * is none (`API_MISSING_HEADER`, `API_INVALID_IP`).
 *
 * @example
 * addressOf(request, true) // { ok: true, value: '203.0.113.7' }
 */
export function addressOf(request: Pick<Incoming, 'header' | 'remoteAddress'>, trustProxyHeaders: boolean): Result<string, MatchError> {
  let raw: string | undefined;
  if (trustProxyHeaders) raw = request.header('cf-connecting-ip') ?? firstEntry(request.header('x-forwarded-for'));
  raw ??= request.remoteAddress;
  // The common case, a bare IPv4 address, is the address as it is (what the steps below make of it).
  if (raw !== undefined && IPV4.test(raw)) return ok(raw);
  if (raw === undefined || raw.trim() === '') return err(matchError('API_MISSING_HEADER', { header: 'x-forwarded-for' }));
  const ip = stripPort(raw);
  if (isIP(ip) === 0) return err(matchError('API_INVALID_IP', { ip: ip.slice(0, 64) }));
  return ok(unmap(ip));
}

/**
 * The client's address (see {@link addressOf}), or the request fails.
 *
 * @example
 * clientIp(ctx) // '203.0.113.7'
 */
export const clientIp = (ctx: Ctx): string => unwrap(addressOf(ctx.request, ctx.services.settings.trustProxyHeaders));

const coordsOf = (header: string | null): Client['coords'] => {
  if (header === null) return undefined;
  const [lat, long] = header.split(',').map((p) => Number(p.trim()));
  if (lat === undefined || long === undefined || !Number.isFinite(lat) || !Number.isFinite(long)) return undefined;
  if (Math.abs(lat) > 90 || Math.abs(long) > 180) return undefined;
  return { latitude: lat, longitude: long };
};

/** The core's {@link Client} for this request. */
export function clientOf(ctx: Ctx): Client {
  const coords = coordsOf(ctx.request.header('x-coords'));
  const userAgent = ctx.request.header('user-agent');
  return {
    ip: clientIp(ctx),
    ...(coords === undefined ? {} : { coords }),
    ...(userAgent === null ? {} : { userAgent: userAgent.slice(0, 512) }),
  };
}

/** The client's location, for region distances. */
export const clientCoords = (ctx: Ctx): Client['coords'] => coordsOf(ctx.request.header('x-coords'));
