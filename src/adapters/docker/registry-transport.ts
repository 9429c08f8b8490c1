/**
 * Whether a Docker Engine talks to a registry over plain HTTP: the engine's own rule
 * (`registry.isSecureIndex` in moby): a registry it has an index config for is as that config
 * says; otherwise it is insecure when one of the host's addresses lies in the engine's insecure
 * CIDRs (`127.0.0.0/8` by default), secure when none does or the name cannot be resolved.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** What `GET /info` says of registries (`RegistryConfig`). */
export interface EngineRegistryConfig {
  readonly IndexConfigs?: Readonly<Record<string, { readonly Secure?: boolean } | undefined>>;
  readonly InsecureRegistryCIDRs?: readonly string[];
}

/**
 * The host of `host[:port]` (`[::1]:5000` → `::1`).
 *
 * @example
 * registryHost('registry.example:5000'); // 'registry.example'
 */
export const registryHost = (address: string): string => {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed !== null) return bracketed[1] ?? '';
  return address.replace(/:\d+$/, '');
};

/**
 * Whether the engine deems the registry insecure, given the host's addresses (pure).
 *
 * @example
 * insecureIn({ InsecureRegistryCIDRs: ['127.0.0.0/8'] }, '127.0.0.1:5000', ['127.0.0.1']); // true
 */
export const insecureIn = (config: EngineRegistryConfig, address: string, addresses: readonly string[]): boolean => {
  const index = config.IndexConfigs?.[address];
  if (index !== undefined) return index.Secure === false;
  const cidrs = new BlockList();
  for (const cidr of config.InsecureRegistryCIDRs ?? []) {
    const [net = '', bits = ''] = cidr.split('/');
    const family = isIP(net);
    if (family !== 0 && /^\d+$/.test(bits)) cidrs.addSubnet(net, Number(bits), family === 6 ? 'ipv6' : 'ipv4');
  }
  return addresses.some((a) => isIP(a) !== 0 && cidrs.check(a, isIP(a) === 6 ? 'ipv6' : 'ipv4'));
};

/**
 * Whether the engine would push to `address` over plain HTTP (it resolves the name as the engine
 * does; a name that does not resolve counts as secure, as there).
 *
 * @example
 * await pushesInPlain((await docker.info()).RegistryConfig, '127.0.0.1:5000'); // true with the engine's defaults
 */
export const pushesInPlain = async (config: EngineRegistryConfig | undefined, address: string): Promise<boolean> => {
  const host = registryHost(address);
  const addresses = isIP(host) !== 0 ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  return insecureIn(config ?? {}, address, addresses);
};
