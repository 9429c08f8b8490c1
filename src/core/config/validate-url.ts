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

/** Whether `host` (as written in the URL, lowercase) is one of the operator's allowed hosts. */
function isAllowed(host: string, allowed: readonly string[]): boolean {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host.endsWith('.') ? host.slice(0, -1) : host;
  const v4 = endsInNumber(bare) ? parseIpv4(bare) : undefined;
  const v6 = host.startsWith('[') ? parseIpv6(bare) : undefined;
  return allowed.some((entry) => {
    const [base = '', bitsText] = entry.toLowerCase().split('/');
    if (bitsText === undefined && base === bare) return true;
    const bits = bitsText === undefined ? undefined : Number(bitsText);
    if (v4 !== undefined) {
      const b = endsInNumber(base) ? parseIpv4(base) : undefined;
      const n = bits ?? 32;
      return b !== undefined && n >= 0 && n <= 32 && (n === 0 || (v4 ^ b) >>> (32 - n) === 0);
    }
    if (v6 !== undefined) {
      const b = parseIpv6(base);
      const n = bits ?? 128;
      if (b === undefined || !(n >= 0 && n <= 128)) return false;
      for (let i = 0; i < 8; i++) {
        const take = Math.min(16, Math.max(0, n - i * 16));
        if (take > 0 && ((v6[i] ?? 0) ^ (b[i] ?? 0)) >>> (16 - take) !== 0) return false;
      }
      return true;
    }
    return false;
  });
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

function checkAuthority(authority: string, allowed: readonly string[]): UrlProblem | undefined {
  if (authority.includes('@')) return 'invalid';
  const split = splitHostPort(authority);
  if (split === undefined) return 'invalid';
  if (split.port !== '' && (!/^[0-9]+$/.test(split.port) || Number(split.port) > LIMITS.portNumber)) return 'invalid';
  const host = split.host.toLowerCase();
  if (host === '') return 'no-host';
  if (!host.startsWith('[')) {
    const problem = checkName(host);
    return problem === 'invalid-ip' || (problem === 'invalid' && /^[a-z0-9._-]+$/.test(host)) ? (isAllowed(host, allowed) ? undefined : problem) : problem;
  }
  const ip = parseIpv6(host.slice(1, -1));
  return ip === undefined ? 'invalid' : isGlobalIpv6(ip) || isAllowed(host, allowed) ? undefined : 'invalid-ip';
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
