/**
 * The requesting client as the matchmaker sees it (wire.md §1.2): its address (`cf-connecting-ip`,
 * else the first `x-forwarded-for` entry, else the TCP peer the bridge reports — Rivet failed with
 * `API_MISSING_HEADER` there), its location (`x-coords: <lat>,<long>`) and user agent.
 */
import { isIP } from 'node:net';
import type { Client } from '../core/matchmaker/request.js';
import type { Ctx } from './context.js';
import { fail } from './errors.js';

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

/**
 * The client's address: proxy headers when trusted, else the socket address.
 *
 * @example
 * clientIp(ctx) // '203.0.113.7'
 */
export function clientIp(ctx: Ctx): string {
  const { request } = ctx;
  let raw: string | undefined;
  if (ctx.services.settings.trustProxyHeaders) {
    raw = request.header('cf-connecting-ip') ?? request.header('x-forwarded-for')?.split(',')[0] ?? undefined;
  }
  raw ??= ctx.remoteAddress;
  if (raw === undefined || raw.trim() === '') fail('API_MISSING_HEADER', { header: 'x-forwarded-for' });
  const ip = stripPort(raw);
  if (isIP(ip) === 0) fail('API_INVALID_IP', { ip: ip.slice(0, 64) });
  return unmap(ip);
}

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
