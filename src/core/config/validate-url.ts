/**
 * A pure check of a verification URL (no request is ever made): scheme http/https, an authority
 * with a host, no userinfo, a host that is not a non-global IP literal (in any form the WHATWG
 * parser accepts), not `localhost` and not an internal name (`.local`, `.localhost`, `.internal`,
 * `.consul`). Anything an HTTP client could read differently (whitespace, control characters,
 * percent-encoded or non-ASCII hosts, extra slashes) is refused as `invalid`.
 */
import { LIMITS } from './defaults.js';
import { endsInNumber, isGlobalIpv4, isGlobalIpv6, parseIpv4, parseIpv6 } from './validate-ip.js';

export type UrlProblem = 'invalid' | 'invalid-scheme' | 'no-host' | 'invalid-ip';

function splitHostPort(authority: string): { readonly host: string; readonly port: string } | undefined {
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    const rest = authority.slice(close + 1);
    if (close === -1 || (rest !== '' && !rest.startsWith(':'))) return undefined;
    return { host: authority.slice(0, close + 1), port: rest.slice(1) };
  }
  const colon = authority.indexOf(':');
  return colon === -1 ? { host: authority, port: '' } : { host: authority.slice(0, colon), port: authority.slice(colon + 1) };
}

function checkName(host: string): UrlProblem | undefined {
  if (!/^[a-z0-9._-]+$/.test(host)) return 'invalid';
  if (endsInNumber(host)) {
    const ip = parseIpv4(host);
    return ip === undefined ? 'invalid' : isGlobalIpv4(ip) ? undefined : 'invalid-ip';
  }
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === '' || name.startsWith('.') || name.includes('..')) return 'invalid';
  const internal = name === 'localhost' || /\.(?:localhost|local|internal|consul)$/.test(name);
  return internal ? 'invalid' : undefined;
}

function checkAuthority(authority: string): UrlProblem | undefined {
  if (authority.includes('@')) return 'invalid';
  const split = splitHostPort(authority);
  if (split === undefined) return 'invalid';
  if (split.port !== '' && (!/^[0-9]+$/.test(split.port) || Number(split.port) > LIMITS.portNumber)) return 'invalid';
  const host = split.host.toLowerCase();
  if (host === '') return 'no-host';
  if (!host.startsWith('[')) return checkName(host);
  const ip = parseIpv6(host.slice(1, -1));
  return ip === undefined ? 'invalid' : isGlobalIpv6(ip) ? undefined : 'invalid-ip';
}

/**
 * The problem with a verification URL, or `undefined` when it is acceptable.
 *
 * @example
 * checkVerificationUrl('https://game.example.com/verify'); // undefined
 * checkVerificationUrl('http://127.0.0.1/'); // 'invalid-ip'
 * checkVerificationUrl('ftp://example.com/'); // 'invalid-scheme'
 */
export function checkVerificationUrl(url: string): UrlProblem | undefined {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused.
  if (url === '' || /[\s\u0000-\u001f\u007f]/u.test(url)) return 'invalid';
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url);
  const name = scheme?.[1]?.toLowerCase();
  if (scheme === null || (name !== 'http' && name !== 'https')) return 'invalid-scheme';
  const rest = url.slice(scheme[0].length);
  if (!rest.startsWith('//')) return 'no-host';
  const afterSlashes = rest.slice(2);
  const end = afterSlashes.search(/[/\\?#]/);
  return checkAuthority(end === -1 ? afterSlashes : afterSlashes.slice(0, end));
}
