import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { endsInNumber, isGlobalIpv4, isGlobalIpv6, parseIpv4, parseIpv6 } from '../../../src/core/config/validate-ip.js';

// The verification-URL guard (validate-url.ts) must read a host exactly as the HTTP client that
// later connects will: the WHATWG URL parser, which Node's `URL` implements, is the oracle here.

/** What WHATWG makes of `host`: an IPv4 address (its 32-bit value), a domain name, or a failure. */
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

/** The same question answered by validate-ip.ts. */
const ourHost = (host: string): number | 'name' | 'invalid' => (endsInNumber(host) ? (parseIpv4(host) ?? 'invalid') : 'name');

/** The eight pieces of WHATWG's serialisation of an IPv6 literal (lowercase hex, `::` compression, no IPv4 tail). */
const whatwgIpv6 = (text: string): readonly number[] | undefined => {
  let hostname: string;
  try {
    hostname = new URL(`http://[${text}]/`).hostname;
  } catch {
    return undefined;
  }
  const [head = '', tail] = hostname.slice(1, -1).split('::');
  const hex = (side: string): number[] => (side === '' ? [] : side.split(':').map((p) => parseInt(p, 16)));
  const left = hex(head);
  const right = tail === undefined ? [] : hex(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
};

const hexDigits = fc.stringMatching(/^[0-9a-fA-F]{0,9}$/);
const ipv4Part = fc.oneof(
  fc.nat(300).map(String),
  fc.nat(2 ** 32 + 5).map(String),
  hexDigits.map((digits) => `0x${digits}`),
  hexDigits.map((digits) => `0X${digits}`),
  fc.stringMatching(/^[0-7]{1,12}$/).map((digits) => `0${digits}`),
  fc.constantFrom('', '0', '00', '08', '09', '0x0x', '1a', 'a', 'x', '0xg', '1e3', '-1', '+1'),
);
const ipv4Host = fc
  .tuple(fc.array(ipv4Part, { minLength: 1, maxLength: 6 }), fc.boolean())
  .map(([parts, trailingDot]) => `${parts.join('.')}${trailingDot ? '.' : ''}`)
  .filter((host) => host !== '' && host !== '.');

describe('IPv4 hosts are read as the WHATWG URL parser reads them', () => {
  it('agrees with Node URL on generated hosts: decimal, octal, hex and mixed parts, 1 to 6 of them, a trailing dot', () => {
    fc.assert(fc.property(ipv4Host, (host) => {
      expect(ourHost(host)).toBe(whatwgHost(host));
    }));
  });

  it.each([
    ['0x', 0],
    ['0X1F', 31],
    ['0x.1', 1],
    ['00', 0],
    ['0177.1', 0x7f000001],
    ['1.0x', 0x01000000],
    ['1.2.0xffff', 0x0102ffff],
    ['1.2.3.4.', 0x01020304],
    ['4294967295', 0xffffffff],
    ['1.2.3.4.5', 'invalid'],
    ['1..2', 'invalid'],
    ['08', 'invalid'],
    ['09.1', 'invalid'],
    ['1.2.65536', 'invalid'],
    ['256.1.1.1', 'invalid'],
    ['a.1', 'invalid'],
    ['0x0x', 'name'],
    ['1.0x0x', 'name'],
    ['example.com', 'name'],
    ['..', 'name'],
    // Edges random generation rarely builds: a zero fifth part, bad hex and octal digits.
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
  ] as const)('%s → %s (and Node URL agrees)', (host, expected) => {
    expect(ourHost(host)).toBe(expected);
    expect(whatwgHost(host)).toBe(expected);
  });
});

const piece = fc.integer({ min: 0, max: 0xffff });
const ipv6Text = fc
  .record({
    pieces: fc.array(piece, { minLength: 8, maxLength: 8 }),
    zeroRun: fc.option(fc.tuple(fc.nat(7), fc.integer({ min: 1, max: 8 }))),
    compress: fc.boolean(),
    ipv4Tail: fc.boolean(),
    leadingZeros: fc.array(fc.nat(2), { minLength: 8, maxLength: 8 }),
    upper: fc.boolean(),
    damage: fc.constantFrom('none', 'none', 'none', 'drop', 'extra', 'second-compression', 'five-digits', 'bad-char', 'zone', 'octet-zero', 'short-ipv4'),
  })
  .map(({ pieces, zeroRun, compress, ipv4Tail, leadingZeros, upper, damage }) => {
    const p = [...pieces];
    if (zeroRun !== null) p.fill(0, zeroRun[0], Math.min(8, zeroRun[0] + zeroRun[1]));
    const hex = p.map((n, i) => `${'0'.repeat(leadingZeros[i] ?? 0)}${n.toString(16)}`.slice(-4));
    const words: string[] = ipv4Tail ? [...hex.slice(0, 6), [p[6] ?? 0, p[7] ?? 0].flatMap((n) => [n >> 8, n & 0xff]).join('.')] : hex;
    let text = words.join(':');
    if (compress) {
      const match = /(^|:)0(:0)+(:|$)/.exec(text);
      if (match !== null) text = `${text.slice(0, match.index)}::${text.slice(match.index + match[0].length)}`;
    }
    const damaged: Record<string, string> = {
      none: text,
      drop: text.replace(/^[^:]*:/, ''),
      extra: `1:${text}`,
      'second-compression': `${text}::1`.replace(/^::(.*)::1$/, '::$1:1::'),
      'five-digits': text.replace(/^[0-9a-f]+/i, '12345'),
      'bad-char': text.replace(/^[0-9a-f]/i, 'g'),
      zone: `${text}%eth0`,
      'octet-zero': text.replace(/\.(\d)$/, '.0$1'),
      'short-ipv4': text.replace(/\.\d+$/, ''),
    };
    const result = damaged[damage] ?? text;
    return upper ? result.toUpperCase() : result;
  });

describe('IPv6 literals are read as the WHATWG URL parser reads them', () => {
  it('agrees with Node URL on generated literals: compression, leading zeros, case, an IPv4 tail, and damaged forms', () => {
    fc.assert(fc.property(ipv6Text, (text) => {
      expect(parseIpv6(text)).toEqual(whatwgIpv6(text));
    }));
  });

  it.each([
    ['1:2:3:4:5:6:7::', [1, 2, 3, 4, 5, 6, 7, 0]],
    ['::1:2:3:4:5:6:7', [0, 1, 2, 3, 4, 5, 6, 7]],
    ['1:2:3:4:5:6:1.2.3.4', [1, 2, 3, 4, 5, 6, 0x0102, 0x0304]],
    ['::', [0, 0, 0, 0, 0, 0, 0, 0]],
    ['1::2:3:4:5:6:7:8', undefined],
    ['::ffff:1.2.3.04', undefined],
    ['::1.2.3', undefined],
    ['::1.2.3.4.', undefined],
    [':1', undefined],
    ['1:', undefined],
    ['00000::1', undefined],
  ] as const)('%s → %j (and Node URL agrees)', (text, expected) => {
    expect(parseIpv6(text)).toEqual(expected);
    expect(whatwgIpv6(text)).toEqual(expected);
  });
});

/** Dotted quad to its 32-bit value. */
const v4 = (dotted: string): number => dotted.split('.').reduce((value, part) => value * 256 + Number(part), 0);

describe('isGlobalIpv4: every special-purpose block (IANA, RFC 6890) is refused from its first to its last address', () => {
  // [first, last] of each non-global block, and the addresses just outside it, which are global.
  it.each([
    ['0.0.0.0', '0.255.255.255', undefined, '1.0.0.0'],
    ['10.0.0.0', '10.255.255.255', '9.255.255.255', '11.0.0.0'],
    ['100.64.0.0', '100.127.255.255', '100.63.255.255', '100.128.0.0'],
    ['127.0.0.0', '127.255.255.255', '126.255.255.255', '128.0.0.0'],
    ['169.254.0.0', '169.254.255.255', '169.253.255.255', '169.255.0.0'],
    ['172.16.0.0', '172.31.255.255', '172.15.255.255', '172.32.0.0'],
    ['192.0.0.0', '192.0.0.255', '191.255.255.255', '192.0.1.0'],
    ['192.0.2.0', '192.0.2.255', '192.0.1.255', '192.0.3.0'],
    ['192.168.0.0', '192.168.255.255', '192.167.255.255', '192.169.0.0'],
    ['198.18.0.0', '198.19.255.255', '198.17.255.255', '198.20.0.0'],
    ['198.51.100.0', '198.51.100.255', '198.51.99.255', '198.51.101.0'],
    ['203.0.113.0', '203.0.113.255', '203.0.112.255', '203.0.114.0'],
    ['224.0.0.0', '255.255.255.255', '223.255.255.255', undefined],
  ] as const)('%s–%s', (first, last, before, after) => {
    expect(isGlobalIpv4(v4(first))).toBe(false);
    expect(isGlobalIpv4(v4(last))).toBe(false);
    if (before !== undefined) expect(isGlobalIpv4(v4(before))).toBe(true);
    if (after !== undefined) expect(isGlobalIpv4(v4(after))).toBe(true);
  });
});

describe('isGlobalIpv6: the special-purpose blocks are refused, their neighbours are global', () => {
  it('refuses only 2001:db8::/32 as documentation, not db8 under another prefix', () => {
    expect(isGlobalIpv6(parseIpv6('2001:db8::1') ?? [])).toBe(false);
    expect(isGlobalIpv6(parseIpv6('2606:db8::1') ?? [])).toBe(true);
    expect(isGlobalIpv6(parseIpv6('2001:db9::1') ?? [])).toBe(true);
  });

  const global = (text: string): boolean => {
    const pieces = parseIpv6(text);
    if (pieces === undefined) throw new Error(`not IPv6: ${text}`);
    return isGlobalIpv6(pieces);
  };

  it.each([
    // unspecified, loopback, IPv4-compatible (::/96) and IPv4-mapped (::ffff:0:0/96)
    '::', '::1', '::2', '::ffff:0:0', '::ffff:8.8.8.8', '::ffff:ffff:ffff',
    // NAT64, discard-only, IETF protocol assignments, documentation
    '64:ff9b::', '64:ff9b:1::1', '64:ff9b:ffff:ffff:ffff:ffff:ffff:ffff', '100::', '100::ffff:ffff:ffff:ffff',
    '2001::', '2001:1ff:ffff::', '2001:db8::', '2001:db8:ffff::1',
    // unique local, link local, site local, multicast
    'fc00::', 'fdff:ffff::1', 'fe80::', 'febf:ffff::1', 'fec0::', 'feff::1', 'ff00::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  ])('%s is not global', (text) => {
    expect(global(text)).toBe(false);
  });

  it.each([
    // one piece away from each block above
    '::1:0:0', '::fffe:0:0', '::1:0:0:0', '0:0:0:1::', '0:0:1::', '0:1::', '1::',
    '64:ff9a::', '65:ff9b::', '64:ff9c::', '100:0:0:1::', '100:0:1::', '100:1::', '101::', 'ff::',
    '2001:200::', '2000::1', '2002::', '2001:db7::', '2001:db9::', '2001:4860::8888',
    'fbff:ffff::1', 'fe00::', 'fe7f::1',
  ])('%s is global', (text) => {
    expect(global(text)).toBe(true);
  });
});
