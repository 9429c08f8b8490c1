/**
 * Every entry of the IANA special-purpose address registries: address block, name and the
 * "Globally Reachable" column, as published in the registries' CSV files
 * https://www.iana.org/assignments/iana-ipv4-special-registry/iana-ipv4-special-registry-1.csv and
 * https://www.iana.org/assignments/iana-ipv6-special-registry/iana-ipv6-special-registry-1.csv.
 *
 * Registry date: the IPv6 registry as last changed in 2025-04 (its newest row, the Dummy IPv6
 * Prefix of RFC 9780); the IPv4 registry with its 6a44-relay row (RFC 6751). Transcribed in 2026
 * from a verbatim copy of both CSV files fetched 2026-07-18 (no later change known).
 *
 * Transcription: footnote marks (`False [1]`, `2002::/16 [3]`) are dropped; the IPv4 row
 * "192.0.0.170/32, 192.0.0.171/32" is two rows here; a terminated allocation's blank column stays
 * blank (`''`).
 */

/** The "Globally Reachable" column. */
export type Reachable = 'True' | 'False' | 'N/A' | '';

export type RegistryRow = readonly [block: string, name: string, globallyReachable: Reachable];

export const IPV4_SPECIAL_REGISTRY: readonly RegistryRow[] = [
  ['0.0.0.0/8', '"This network"', 'False'],
  ['0.0.0.0/32', '"This host on this network"', 'False'],
  ['10.0.0.0/8', 'Private-Use', 'False'],
  ['100.64.0.0/10', 'Shared Address Space', 'False'],
  ['127.0.0.0/8', 'Loopback', 'False'],
  ['169.254.0.0/16', 'Link Local', 'False'],
  ['172.16.0.0/12', 'Private-Use', 'False'],
  ['192.0.0.0/24', 'IETF Protocol Assignments', 'False'],
  ['192.0.0.0/29', 'IPv4 Service Continuity Prefix', 'False'],
  ['192.0.0.8/32', 'IPv4 dummy address', 'False'],
  ['192.0.0.9/32', 'Port Control Protocol Anycast', 'True'],
  ['192.0.0.10/32', 'Traversal Using Relays around NAT Anycast', 'True'],
  ['192.0.0.170/32', 'NAT64/DNS64 Discovery', 'False'],
  ['192.0.0.171/32', 'NAT64/DNS64 Discovery', 'False'],
  ['192.0.2.0/24', 'Documentation (TEST-NET-1)', 'False'],
  ['192.31.196.0/24', 'AS112-v4', 'True'],
  ['192.52.193.0/24', 'AMT', 'True'],
  ['192.88.99.0/24', 'Deprecated (6to4 Relay Anycast)', ''],
  ['192.88.99.2/32', '6a44-relay anycast address', 'False'],
  ['192.168.0.0/16', 'Private-Use', 'False'],
  ['192.175.48.0/24', 'Direct Delegation AS112 Service', 'True'],
  ['198.18.0.0/15', 'Benchmarking', 'False'],
  ['198.51.100.0/24', 'Documentation (TEST-NET-2)', 'False'],
  ['203.0.113.0/24', 'Documentation (TEST-NET-3)', 'False'],
  ['240.0.0.0/4', 'Reserved', 'False'],
  ['255.255.255.255/32', 'Limited Broadcast', 'False'],
];

export const IPV6_SPECIAL_REGISTRY: readonly RegistryRow[] = [
  ['::1/128', 'Loopback Address', 'False'],
  ['::/128', 'Unspecified Address', 'False'],
  ['::ffff:0:0/96', 'IPv4-mapped Address', 'False'],
  ['64:ff9b::/96', 'IPv4-IPv6 Translat.', 'True'],
  ['64:ff9b:1::/48', 'IPv4-IPv6 Translat.', 'False'],
  ['100::/64', 'Discard-Only Address Block', 'False'],
  ['100:0:0:1::/64', 'Dummy IPv6 Prefix', 'False'],
  ['2001::/23', 'IETF Protocol Assignments', 'False'],
  ['2001::/32', 'TEREDO', 'N/A'],
  ['2001:1::1/128', 'Port Control Protocol Anycast', 'True'],
  ['2001:1::2/128', 'Traversal Using Relays around NAT Anycast', 'True'],
  ['2001:1::3/128', 'DNS-SD Service Registration Protocol Anycast', 'True'],
  ['2001:2::/48', 'Benchmarking', 'False'],
  ['2001:3::/32', 'AMT', 'True'],
  ['2001:4:112::/48', 'AS112-v6', 'True'],
  ['2001:10::/28', 'Deprecated (previously ORCHID)', ''],
  ['2001:20::/28', 'ORCHIDv2', 'True'],
  ['2001:30::/28', 'Drone Remote ID Protocol Entity Tags (DETs) Prefix', 'True'],
  ['2001:db8::/32', 'Documentation', 'False'],
  ['2002::/16', '6to4', 'N/A'],
  ['2620:4f:8000::/48', 'Direct Delegation AS112 Service', 'True'],
  ['3fff::/20', 'Documentation', 'False'],
  ['5f00::/16', 'Segment Routing (SRv6) SIDs', 'False'],
  ['fc00::/7', 'Unique-Local', 'False'],
  ['fe80::/10', 'Link-Local Unicast', 'False'],
];
