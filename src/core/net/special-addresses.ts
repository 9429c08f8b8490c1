/**
 * The one table of addresses that are not global destinations, used by configuration validation
 * (`config/validate-url.ts`: verification URLs) and by the egress guard (`adapters/http/egress.ts`:
 * every outbound call). Its entries are the IANA special-purpose registries' rows that are not
 * globally reachable, and a few named extras.
 *
 * How it reads an address, the choices stated once:
 * - The most specific block holding the address decides (longest prefix); no block: global.
 * - A registry row whose "Globally Reachable" is False, N/A or blank (a terminated allocation) is
 *   refused outright, whatever IPv4 address it may carry: IPv4-mapped `::ffff:0:0/96` (False),
 *   local-use NAT64 `64:ff9b:1::/48` (False), 6to4 `2002::/16` (N/A; its relays are deprecated,
 *   RFC 7526) and Teredo `2001::/32` (N/A, and inside `2001::/23`).
 * - The deprecated IPv4-compatible form `::/96` (RFC 4291 §2.5.5.1) is refused outright too.
 * - The well-known NAT64 prefix `64:ff9b::/96` (True) is judged by the IPv4 address in its last
 *   32 bits: `64:ff9b::808:808` is 8.8.8.8, global; `64:ff9b::7f00:1` is loopback.
 * - A True row inside a refused row stays refused: PCP and TURN anycast (`192.0.0.9`, `192.0.0.10`,
 *   `2001:1::1`-`2001:1::3`), AMT `2001:3::/32`, AS112-v6, ORCHIDv2 and DETs all sit inside an
 *   "IETF Protocol Assignments" block, and none is where an HTTP service lives. A True row standing
 *   alone (AS112 `192.31.196.0/24`, `192.175.48.0/24`, `2620:4f:8000::/48`; AMT `192.52.193.0/24`)
 *   is global, as the registry says.
 * - IPv6 outside `2000::/3`, the only range IANA allocates as global unicast (IPv6 Address Space
 *   registry), is refused, except `64:ff9b::/96` above.
 * - Extras: multicast (`224.0.0.0/4`, IPv4 Multicast Address Space registry; `ff00::/8`),
 *   site-local `fec0::/10` (deprecated, RFC 3879) and the cloud metadata services' addresses.
 */
import { parseIpv4, parseIpv6, ipv6Value } from './ip-literal.js';

/** Why an address is not a global destination. */
export type AddressReason =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link-local'
  | 'metadata'
  | 'benchmark'
  | 'documentation'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'unique-local'
  | 'site-local'
  | 'teredo'
  | '6to4'
  | 'ipv4-mapped'
  | 'ipv4-compatible';

/** What a block says: why it is refused, or (`64:ff9b::/96`) that the IPv4 address it carries decides. */
export type BlockVerdict = AddressReason | 'embedded-ipv4';

/** Where an entry comes from. */
export type BlockSource =
  | 'iana-ipv4-special-registry'
  | 'iana-ipv6-special-registry'
  | 'iana-ipv4-multicast-registry'
  | 'iana-ipv6-address-space'
  | 'rfc4291'
  | 'rfc3879'
  | 'cloud-metadata';

/** One row of the table. */
export interface SpecialBlock {
  /** CIDR: `10.0.0.0/8`, `fc00::/7`. */
  readonly block: string;
  /** The registry's name for it (or ours, for an extra). */
  readonly name: string;
  readonly source: BlockSource;
  readonly verdict: BlockVerdict;
}

const v4 = 'iana-ipv4-special-registry';
const v6 = 'iana-ipv6-special-registry';

const row = (block: string, name: string, source: BlockSource, verdict: BlockVerdict): SpecialBlock => ({ block, name, source, verdict });

/** The table: every non-global row of both registries, in the registries' order, then the extras. */
export const SPECIAL_BLOCKS: readonly SpecialBlock[] = Object.freeze([
  row('0.0.0.0/8', '"This network"', v4, 'unspecified'),
  row('0.0.0.0/32', '"This host on this network"', v4, 'unspecified'),
  row('10.0.0.0/8', 'Private-Use', v4, 'private'),
  row('100.64.0.0/10', 'Shared Address Space', v4, 'cgnat'),
  row('127.0.0.0/8', 'Loopback', v4, 'loopback'),
  row('169.254.0.0/16', 'Link Local', v4, 'link-local'),
  row('172.16.0.0/12', 'Private-Use', v4, 'private'),
  row('192.0.0.0/24', 'IETF Protocol Assignments', v4, 'reserved'),
  row('192.0.0.0/29', 'IPv4 Service Continuity Prefix', v4, 'reserved'),
  row('192.0.0.8/32', 'IPv4 dummy address', v4, 'reserved'),
  row('192.0.0.170/32', 'NAT64/DNS64 Discovery', v4, 'reserved'),
  row('192.0.0.171/32', 'NAT64/DNS64 Discovery', v4, 'reserved'),
  row('192.0.2.0/24', 'Documentation (TEST-NET-1)', v4, 'documentation'),
  row('192.88.99.0/24', 'Deprecated (6to4 Relay Anycast)', v4, 'reserved'),
  row('192.88.99.2/32', '6a44-relay anycast address', v4, 'reserved'),
  row('192.168.0.0/16', 'Private-Use', v4, 'private'),
  row('198.18.0.0/15', 'Benchmarking', v4, 'benchmark'),
  row('198.51.100.0/24', 'Documentation (TEST-NET-2)', v4, 'documentation'),
  row('203.0.113.0/24', 'Documentation (TEST-NET-3)', v4, 'documentation'),
  row('240.0.0.0/4', 'Reserved', v4, 'reserved'),
  row('255.255.255.255/32', 'Limited Broadcast', v4, 'broadcast'),
  row('::1/128', 'Loopback Address', v6, 'loopback'),
  row('::/128', 'Unspecified Address', v6, 'unspecified'),
  row('::ffff:0:0/96', 'IPv4-mapped Address', v6, 'ipv4-mapped'),
  row('64:ff9b::/96', 'IPv4-IPv6 Translat.', v6, 'embedded-ipv4'),
  row('64:ff9b:1::/48', 'IPv4-IPv6 Translat.', v6, 'private'),
  row('100::/64', 'Discard-Only Address Block', v6, 'reserved'),
  row('100:0:0:1::/64', 'Dummy IPv6 Prefix', v6, 'reserved'),
  row('2001::/23', 'IETF Protocol Assignments', v6, 'reserved'),
  row('2001::/32', 'TEREDO', v6, 'teredo'),
  row('2001:2::/48', 'Benchmarking', v6, 'benchmark'),
  row('2001:10::/28', 'Deprecated (previously ORCHID)', v6, 'reserved'),
  row('2001:db8::/32', 'Documentation', v6, 'documentation'),
  row('2002::/16', '6to4', v6, '6to4'),
  row('3fff::/20', 'Documentation', v6, 'documentation'),
  row('5f00::/16', 'Segment Routing (SRv6) SIDs', v6, 'reserved'),
  row('fc00::/7', 'Unique-Local', v6, 'unique-local'),
  row('fe80::/10', 'Link-Local Unicast', v6, 'link-local'),
  row('224.0.0.0/4', 'Multicast', 'iana-ipv4-multicast-registry', 'multicast'),
  row('::/3', 'not Global Unicast', 'iana-ipv6-address-space', 'reserved'),
  row('4000::/2', 'not Global Unicast', 'iana-ipv6-address-space', 'reserved'),
  row('8000::/1', 'not Global Unicast', 'iana-ipv6-address-space', 'reserved'),
  row('ff00::/8', 'Multicast', 'rfc4291', 'multicast'),
  row('::/96', 'IPv4-compatible Address (deprecated)', 'rfc4291', 'ipv4-compatible'),
  row('fec0::/10', 'Site-Local (deprecated)', 'rfc3879', 'site-local'),
  row('169.254.169.254/32', 'AWS, GCP, Azure and OpenStack instance metadata', 'cloud-metadata', 'metadata'),
  row('100.100.100.200/32', 'Alibaba Cloud instance metadata', 'cloud-metadata', 'metadata'),
  row('168.63.129.16/32', 'Azure wire server', 'cloud-metadata', 'metadata'),
  row('fd00:ec2::254/128', 'AWS instance metadata over IPv6', 'cloud-metadata', 'metadata'),
]);

/** An IP address: its family and its value (32 or 128 bits). */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly value: bigint;
}

/** A block, compiled: the address bits above its prefix length, longest prefix first. */
interface Compiled {
  readonly family: 4 | 6;
  readonly bits: number;
  readonly prefix: bigint;
  readonly verdict: BlockVerdict;
}

const widthOf = (family: 4 | 6): bigint => (family === 4 ? 32n : 128n);

/** An address's bits above `bits`. */
const top = (ip: IpAddress, bits: number): bigint => ip.value >> (widthOf(ip.family) - BigInt(bits));

/**
 * A CIDR's base address and prefix length; throws on a malformed one (the table is ours: a bug).
 *
 * @example
 * parseBlock('10.0.0.0/8'); // { address: { family: 4, value: 167772160n }, bits: 8 }
 */
export function parseBlock(block: string): { readonly address: IpAddress; readonly bits: number } {
  const [base = '', length = ''] = block.split('/');
  const pieces = base.includes(':') ? parseIpv6(base) : undefined;
  const quad = /^\d+\.\d+\.\d+\.\d+$/.test(base) ? parseIpv4(base) : undefined;
  const address: IpAddress | undefined = pieces !== undefined ? { family: 6, value: ipv6Value(pieces) } : quad !== undefined ? { family: 4, value: BigInt(quad) } : undefined;
  const bits = Number(length);
  if (address === undefined || !/^\d+$/.test(length) || bits > Number(widthOf(address.family))) throw new Error(`not a CIDR: ${block}`);
  return { address, bits };
}

const COMPILED: readonly Compiled[] = SPECIAL_BLOCKS.map(({ block, verdict }) => {
  const { address, bits } = parseBlock(block);
  return { family: address.family, bits, prefix: top(address, bits), verdict };
}).sort((a, b) => b.bits - a.bits);

/**
 * Whether `ip` is a global destination, or why not (the module's TSDoc states every choice).
 *
 * @example
 * classifyIp({ family: 4, value: 0x08080808n }); // 'global'
 * classifyIp({ family: 4, value: 0xa83f8110n }); // 'metadata' (168.63.129.16)
 * classifyIp({ family: 6, value: 0x0064ff9b000000000000000008080808n }); // 'global' (64:ff9b::8.8.8.8)
 */
export function classifyIp(ip: IpAddress): 'global' | AddressReason {
  const hit = COMPILED.find((b) => b.family === ip.family && top(ip, b.bits) === b.prefix);
  if (hit === undefined) return 'global';
  return hit.verdict === 'embedded-ipv4' ? classifyIp({ family: 4, value: ip.value & 0xffffffffn }) : hit.verdict;
}
