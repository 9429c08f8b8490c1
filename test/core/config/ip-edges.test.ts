import { describe, expect, it } from 'vitest';
import { endsInNumber, isGlobalIpv6, parseIpv4, parseIpv6 } from '../../../src/core/config/validate-ip.js';

// Hosts at the edges of the WHATWG IPv4 rules that random generation rarely builds (Node's URL is
// the oracle, as in ip.test.ts): a fifth part that is zero, hex and octal parts with a bad digit
// in the middle or at the end.

const whatwgHost = (host: string): number | 'name' | 'invalid' => {
  let hostname: string;
  try {
    hostname = new URL(`http://${host}/`).hostname;
  } catch {
    return 'invalid';
  }
  const dotted = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(hostname);
  return dotted === null ? 'name' : dotted.slice(1).reduce((value, part) => value * 256 + Number(part), 0);
};

const ourHost = (host: string): number | 'name' | 'invalid' => (endsInNumber(host) ? (parseIpv4(host) ?? 'invalid') : 'name');

describe('IPv4 edges, as Node URL reads them', () => {
  it.each([
    ['1.2.3.4.0', 'invalid'],
    ['0.0.0.0.0', 'invalid'],
    ['0xg1', 'name'],
    ['1.0xg1', 'name'],
    ['0x1g', 'name'],
    ['0718', 'invalid'],
    ['0817', 'invalid'],
    ['1.0718', 'invalid'],
    ['017', 15],
    ['0x1.017', 0x0100000f],
  ] as const)('%s → %s', (host, expected) => {
    expect(whatwgHost(host)).toBe(expected);
    expect(ourHost(host)).toBe(expected);
  });
});

describe('IPv6 edges', () => {
  it('refuses only 2001:db8::/32 as documentation, not db8 under another prefix', () => {
    expect(isGlobalIpv6(parseIpv6('2001:db8::1') ?? [])).toBe(false);
    expect(isGlobalIpv6(parseIpv6('2606:db8::1') ?? [])).toBe(true);
    expect(isGlobalIpv6(parseIpv6('2001:db9::1') ?? [])).toBe(true);
  });
});
