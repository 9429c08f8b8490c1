import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { endsInNumber, parseIpv4, parseIpv6 } from '../../../src/core/net/ip-literal.js';

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

/** The same question answered by ip-literal.ts. */
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
