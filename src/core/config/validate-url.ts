/**
 * A pure check of a verification URL (no request is ever made): scheme http/https, an authority
 * with a host, no userinfo, a host that is not a non-global IP literal (in any form the WHATWG
 * parser accepts; `net/special-addresses.ts` says which are not global, for the egress guard too),
 * not `localhost` and not an internal name (`.local`, `.localhost`, `.internal`, `.consul`).
 * Anything an HTTP client could read differently (whitespace, control characters, percent-encoded
 * or non-ASCII hosts, extra slashes) is refused as `invalid`.
 */
import { LIMITS } from './defaults.js';
import { endsInNumber, ipv6Value, parseIpv4, parseIpv6 } from '../net/ip-literal.js';
import { classifyIp } from '../net/special-addresses.js';

export type UrlProblem = 'invalid' | 'invalid-scheme' | 'no-host' | 'invalid-ip';

function splitHostPort(authority: string): { readonly host: string; readonly port: string } | undefined {
  if (authority.startsWith('[')) {
    const bracketed = /^(\[[^\]]*\])(?::(.*))?$/.exec(authority);
    return bracketed === null ? undefined : { host: bracketed[1] ?? '', port: bracketed[2] ?? '' };
  }
  const colon = authority.indexOf(':');
  return colon === -1 ? { host: authority, port: '' } : { host: authority.slice(0, colon), port: authority.slice(colon + 1) };
}

/** An IP host's address: 32 bits, or 128 bits from eight 16-bit pieces. */
type Address = { readonly width: 32; readonly value: bigint } | { readonly width: 128; readonly value: bigint };

/**
 * Whether `name` (lowercase, without brackets or a trailing dot) or its `address` is one of the
 * operator's allowed hosts: an exact name or IP literal, or an IP CIDR of the same family
 * (`10.0.0.0/8`, `fd00::/8`); a prefix length that is not a number of bits matches nothing.
 */
function isAllowed(name: string, address: Address | undefined, allowed: readonly string[]): boolean {
  return allowed.some((entry) => {
    const lower = entry.toLowerCase();
    const slash = lower.indexOf('/');
    const base = slash === -1 ? lower : lower.slice(0, slash);
    const bitsText = slash === -1 ? undefined : lower.slice(slash + 1);
    if (bitsText === undefined && base === name) return true;
    if (address === undefined || (bitsText !== undefined && !/^[0-9]+$/.test(bitsText))) return false;
    const ipv4 = endsInNumber(base) ? parseIpv4(base) : undefined;
    const ipv6 = parseIpv6(base);
    const entryValue = address.width === 32 ? (ipv4 === undefined ? undefined : BigInt(ipv4)) : ipv6 === undefined ? undefined : ipv6Value(ipv6);
    const n = bitsText === undefined ? address.width : Number(bitsText);
    return entryValue !== undefined && n <= address.width && (address.value ^ entryValue) >> BigInt(address.width - n) === 0n;
  });
}

function checkAuthority(authority: string, allowed: readonly string[]): UrlProblem | undefined {
  // Stryker disable next-line ConditionalExpression: a redundant guard kept to state the rule; `@` fails the host, IPv6 and port patterns below anyway
  if (authority.includes('@')) return 'invalid';
  const split = splitHostPort(authority);
  if (split === undefined) return 'invalid';
  if (split.port !== '' && (!/^[0-9]+$/.test(split.port) || Number(split.port) > LIMITS.portNumber)) return 'invalid';
  const host = split.host.toLowerCase();
  if (host === '') return 'no-host';
  if (host.startsWith('[')) {
    const bare = host.slice(1, -1);
    const ip = parseIpv6(bare);
    if (ip === undefined) return 'invalid';
    const value = ipv6Value(ip);
    return classifyIp({ family: 6, value }) === 'global' || isAllowed(bare, { width: 128, value }, allowed) ? undefined : 'invalid-ip';
  }
  if (!/^[a-z0-9._-]+$/.test(host)) return 'invalid';
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (endsInNumber(host)) {
    const ip = parseIpv4(host);
    if (ip === undefined) return 'invalid';
    const value = BigInt(ip);
    return classifyIp({ family: 4, value }) === 'global' || isAllowed(name, { width: 32, value }, allowed) ? undefined : 'invalid-ip';
  }
  if (name.split('.').includes('')) return 'invalid';
  const internal = name === 'localhost' || /\.(?:localhost|local|internal|consul)$/.test(name);
  return internal && !isAllowed(name, undefined, allowed) ? 'invalid' : undefined;
}

/**
 * The problem with a verification URL, or `undefined` when it is acceptable. Hosts in `allowed`
 * (exact names or IP literals, or IP CIDRs) pass although they are not public.
 *
 * @example
 * checkVerificationUrl('https://game.example.com/verify'); // undefined
 * checkVerificationUrl('http://127.0.0.1/'); // 'invalid-ip'
 * checkVerificationUrl('http://127.0.0.1:9000/', ['127.0.0.0/8']); // undefined
 * checkVerificationUrl('ftp://example.com/'); // 'invalid-scheme'
 */
// Stryker disable next-line ArrayDeclaration: no host can equal the mutant's entry ("Stryker was here" has spaces, which are refused first) or parse as an IP
export function checkVerificationUrl(url: string, allowed: readonly string[] = []): UrlProblem | undefined {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused.
  if (url === '' || /[\s\u0000-\u001f\u007f]/u.test(url)) return 'invalid';
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url);
  const name = scheme?.[1]?.toLowerCase();
  if (scheme === null || (name !== 'http' && name !== 'https')) return 'invalid-scheme';
  const rest = url.slice(scheme[0].length);
  if (!rest.startsWith('//')) return 'no-host';
  const afterSlashes = rest.slice(2);
  const end = afterSlashes.search(/[/\\?#]/);
  return checkAuthority(end === -1 ? afterSlashes : afterSlashes.slice(0, end), allowed);
}
