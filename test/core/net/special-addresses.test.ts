/**
 * The table of non-global addresses against the IANA special-purpose registries, through both of
 * its consumers: configuration validation (a verification URL's IP literal) and the egress guard
 * (an address a call would reach).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkUrl, classifyAddress } from '../../../src/adapters/http/egress.js';
import { checkVerificationUrl } from '../../../src/core/config/validate-url.js';
import { classifyIp, parseBlock, SPECIAL_BLOCKS, type IpAddress } from '../../../src/core/net/special-addresses.js';
import { IPV4_SPECIAL_REGISTRY, IPV6_SPECIAL_REGISTRY, type RegistryRow } from './iana-special-registries.js';

/** An address as text: a dotted quad, or eight uncompressed IPv6 groups. */
const text = ({ family, value }: IpAddress): string =>
  family === 4
    ? [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.')
    : [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => ((value >> shift) & 0xffffn).toString(16)).join(':');

const urlOf = (address: string): string => (address.includes(':') ? `http://[${address}]/` : `http://${address}/`);

/** What each consumer says of an address written as `address`: global (true) or not. */
const verdicts = (address: string): { validation: boolean; egress: boolean; egressUrl: boolean } => ({
  validation: checkVerificationUrl(urlOf(address)) === undefined,
  egress: classifyAddress(address) === 'public',
  egressUrl: checkUrl(urlOf(address)).ok,
});

const both = (global: boolean) => ({ validation: global, egress: global, egressUrl: global });

/** A block's range. */
const rangeOf = (block: string): { readonly family: 4 | 6; readonly first: bigint; readonly last: bigint } => {
  const { address, bits } = parseBlock(block);
  const size = 1n << BigInt((address.family === 4 ? 32 : 128) - bits);
  return { family: address.family, first: address.value, last: address.value + size - 1n };
};

/** The first, a middle and the last address of a block. */
const samples = (block: string): IpAddress[] => {
  const { family, first, last } = rangeOf(block);
  return [first, first + (last - first + 1n) / 2n, last].map((value) => ({ family, value }));
};

const contains = (outer: string, inner: string): boolean => {
  const a = rangeOf(outer);
  const b = rangeOf(inner);
  return a.family === b.family && a.first <= b.first && b.last <= a.last && outer !== inner;
};

const REGISTRY: readonly RegistryRow[] = [...IPV4_SPECIAL_REGISTRY, ...IPV6_SPECIAL_REGISTRY];
const refusedRows = REGISTRY.filter(([, , reachable]) => reachable !== 'True');
const reachableRows = REGISTRY.filter(([, , reachable]) => reachable === 'True');
const NAT64 = '64:ff9b::/96';

describe('every registry block that is not globally reachable (False, N/A, or blank) is non-global for both consumers', () => {
  it.each(refusedRows)('%s %s (%s): first, middle and last address', (block) => {
    for (const address of samples(block).map(text)) expect({ address, ...verdicts(address) }).toEqual({ address, ...both(false) });
  });
});

describe('the globally reachable blocks, as the table chooses', () => {
  it.each(reachableRows.filter(([block]) => block !== NAT64))('%s %s: global unless a refused registry block holds it', (block) => {
    const global = !refusedRows.some(([outer]) => contains(outer, block));
    for (const address of samples(block).map(text)) expect({ address, ...verdicts(address) }).toEqual({ address, ...both(global) });
  });

  it('64:ff9b::/96 (well-known NAT64) is judged by the IPv4 address it carries', () => {
    for (const { value } of samples(NAT64)) {
      const embedded = text({ family: 4, value: value & 0xffffffffn });
      const global = classifyAddress(embedded) === 'public';
      expect({ embedded, ...verdicts(text({ family: 6, value })) }).toEqual({ embedded, ...both(global) });
    }
    expect(verdicts('64:ff9b::808:808')).toEqual(both(true));
    expect(verdicts('64:ff9b::7f00:1')).toEqual(both(false));
    expect(classifyAddress('64:ff9b::a9fe:a9fe')).toBe('metadata');
  });
});

describe('the table is the registries plus named extras', () => {
  it('lists every refused registry row under its registry name, and no IANA row the registry does not refuse but NAT64', () => {
    const ianaRows = SPECIAL_BLOCKS.filter((b) => b.source === 'iana-ipv4-special-registry' || b.source === 'iana-ipv6-special-registry');
    expect(ianaRows.map((b) => [b.block, b.name]).sort()).toEqual([...refusedRows, ...reachableRows.filter(([block]) => block === NAT64)].map(([block, name]) => [block, name]).sort());
    for (const { block, source } of ianaRows) expect(source).toBe(block.includes(':') ? 'iana-ipv6-special-registry' : 'iana-ipv4-special-registry');
  });

  it.each([
    ['168.63.129.16', 'metadata'],
    ['169.254.169.254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['ff02::1', 'multicast'],
    ['fec0::1', 'site-local'],
    ['::8.8.8.8', 'ipv4-compatible'],
    ['1::', 'reserved'],
    ['4000::1', 'reserved'],
    ['fe00::', 'reserved'],
  ])('%s is refused by both, as %s', (address, reason) => {
    expect(classifyAddress(address)).toBe(reason);
    expect(verdicts(address)).toEqual(both(false));
  });

  it('refuses the embedded-IPv4 forms the registry does not call reachable, whatever they carry', () => {
    for (const address of ['::ffff:8.8.8.8', '2002:808:808::1', '2002:7f00:1::', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '64:ff9b:1::808:808']) {
      expect({ address, ...verdicts(address) }).toEqual({ address, ...both(false) });
    }
    expect(classifyAddress('::ffff:127.0.0.1')).toBe('ipv4-mapped');
    expect(classifyAddress('2002:7f00:1::')).toBe('6to4');
  });

  it.each([
    // [first, last] of a refused IPv4 block, and the addresses just outside it, which are global.
    ['10.0.0.0', '10.255.255.255', '9.255.255.255', '11.0.0.0'],
    ['100.64.0.0', '100.127.255.255', '100.63.255.255', '100.128.0.0'],
    ['172.16.0.0', '172.31.255.255', '172.15.255.255', '172.32.0.0'],
    ['192.0.0.0', '192.0.0.255', '191.255.255.255', '192.0.1.0'],
    ['198.18.0.0', '198.19.255.255', '198.17.255.255', '198.20.0.0'],
    ['224.0.0.0', '255.255.255.255', '223.255.255.255', undefined],
    ['168.63.129.16', '168.63.129.16', '168.63.129.15', '168.63.129.17'],
    ['2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db9::'],
    ['2002::', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '2003::'],
    ['3fff::', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', '3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '3fff:1000::'],
  ] as const)('%s–%s is refused, its neighbours are global', (first, last, before, after) => {
    expect(verdicts(first)).toEqual(both(false));
    expect(verdicts(last)).toEqual(both(false));
    if (before !== undefined) expect(verdicts(before)).toEqual(both(true));
    if (after !== undefined) expect(verdicts(after)).toEqual(both(true));
  });
});

/** Addresses in and around the table's blocks, in the IPv6 forms that carry IPv4, and anywhere at all. */
const nearBlock = fc.tuple(fc.constantFrom(...SPECIAL_BLOCKS.map((b) => b.block), ...REGISTRY.map(([block]) => block)), fc.bigInt({ min: -2n, max: 2n ** 128n }), fc.boolean())
  .map(([block, offset, inside]) => {
    const { family, first, last } = rangeOf(block);
    const max = family === 4 ? 2n ** 32n - 1n : 2n ** 128n - 1n;
    const value = inside ? first + (offset < 0n ? 0n : offset % (last - first + 1n)) : offset < 0n ? first + offset : last + 1n + (offset % 3n);
    return text({ family, value: value < 0n ? 0n : value > max ? max : value });
  });
const embedding = fc.tuple(fc.ipV4(), fc.constantFrom('::ffff:', '::', '64:ff9b::', '64:ff9b:1::', '2002:', '2001:0:')).map(([v4, prefix]) => {
  const [a = 0, b = 0, c = 0, d = 0] = v4.split('.').map(Number);
  const hi = ((a << 8) | b).toString(16);
  const lo = ((c << 8) | d).toString(16);
  return prefix === '2002:' ? `2002:${hi}:${lo}::1` : prefix === '2001:0:' ? `2001:0:${hi}:${lo}::1` : `${prefix}${v4}`;
});
const anyAddress = fc.oneof(fc.ipV4(), fc.ipV6(), nearBlock, embedding);

describe('validation and egress agree', () => {
  it('on random addresses: in and around every block, in every IPv4-carrying form, and anywhere', () => {
    fc.assert(
      fc.property(anyAddress, (address) => {
        const { validation, egress, egressUrl } = verdicts(address);
        expect({ address, egress, egressUrl }).toEqual({ address, egress: validation, egressUrl: validation });
      }),
      { numRuns: 2_000 },
    );
  });

  it('and the egress guard reports the table\'s reason', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), nearBlock), (address) => {
        const value = address.includes(':')
          ? parseBlock(`${address}/128`).address
          : parseBlock(`${address}/32`).address;
        const kind = classifyIp(value);
        expect(classifyAddress(address)).toBe(kind === 'global' ? 'public' : kind);
      }),
    );
  });
});
