/**
 * Facts about the Docker Engine Tavern talks to: where it is, a bridge network's gateway (the
 * address a container on it reaches the host at), and whether published ports go through the
 * userland proxy (`docker-proxy`, a copy per packet in user space) or the kernel (DNAT).
 */
import { readdir, readFile } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import Dockerode from 'dockerode';

/**
 * The engine's client: `DOCKER_HOST` (`unix:///path` or `tcp://host:port`) or the default socket.
 *
 * @example
 * const docker = connectDocker(process.env['DOCKER_HOST']);
 */
export const connectDocker = (dockerHost: string | undefined): Dockerode => {
  if (dockerHost === undefined || dockerHost === '') return new Dockerode({ socketPath: '/var/run/docker.sock' });
  if (dockerHost.startsWith('unix://')) return new Dockerode({ socketPath: dockerHost.slice('unix://'.length) });
  const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
  return new Dockerode({ host: url.hostname, port: Number(url.port || 2375), protocol: 'http' });
};

/** Where the engine is, for messages. */
export const engineAddress = (dockerHost: string | undefined): string => (dockerHost === undefined || dockerHost === '' ? 'unix:///var/run/docker.sock' : dockerHost);

/** The first host address of an IPv4 subnet (`172.17.0.0/16` → `172.17.0.1`): where Docker puts a bridge's gateway. */
export const firstHost = (subnet: string): string | undefined => {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(subnet);
  if (m === null) return undefined;
  const [a, b, c, d] = [m[1], m[2], m[3], m[4]].map(Number) as [number, number, number, number];
  const bits = Number(m[5]);
  if (bits > 30) return undefined;
  const base = (((a << 24) | (b << 16) | (c << 8) | d) >>> 0) & (bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0);
  const host = (base + 1) >>> 0;
  return [host >>> 24, (host >>> 16) & 255, (host >>> 8) & 255, host & 255].join('.');
};

/** What the engine says of a network (`GET /networks/{id}`), as far as Tavern reads it. */
export interface NetworkInfo {
  readonly Name?: string;
  readonly Id?: string;
  readonly Driver?: string;
  readonly IPAM?: { readonly Config?: readonly { readonly Gateway?: string; readonly Subnet?: string }[] };
  readonly Options?: Readonly<Record<string, string>>;
}

/**
 * A bridge network's IPv4 gateway (the host's address on it): as the engine states it, else the
 * address of the bridge's interface on this host (`br-<id>` for a user-defined bridge), else the
 * first address of its subnet (where Docker puts it); undefined without an IPv4 subnet.
 *
 * @example
 * gatewayOf({ IPAM: { Config: [{ Subnet: '172.18.0.0/16' }] } }); // '172.18.0.1'
 */
export const gatewayOf = (info: NetworkInfo): string | undefined => {
  const configs = (info.IPAM?.Config ?? []).filter((c) => c.Subnet === undefined || !c.Subnet.includes(':'));
  const stated = configs.find((c) => c.Gateway !== undefined)?.Gateway;
  if (stated !== undefined) return stated;
  const name = info.Options?.['com.docker.network.bridge.name'] ?? (info.Id === undefined ? undefined : `br-${info.Id.slice(0, 12)}`);
  const local = name === undefined ? undefined : networkInterfaces()[name]?.find((a) => a.family === 'IPv4')?.address;
  if (local !== undefined) return local;
  for (const c of configs) {
    const host = c.Subnet === undefined ? undefined : firstHost(c.Subnet);
    if (host !== undefined) return host;
  }
  return undefined;
};

/**
 * The gateway of a bridge network (default: the engine's own `bridge`, e.g. 172.17.0.1), see
 * {@link gatewayOf}.
 *
 * @example
 * await bridgeGateway(docker); // '172.17.0.1'
 * await bridgeGateway(docker, 'tavern-lobbies'); // '172.18.0.1'
 */
export const bridgeGateway = async (docker: Dockerode, network = 'bridge'): Promise<string | undefined> =>
  gatewayOf((await docker.getNetwork(network).inspect()) as NetworkInfo);

export type UserlandProxy = 'on' | 'off' | 'unknown';

/** `--userland-proxy=false`, `--userland-proxy false` in dockerd's arguments. */
const flagOf = (args: readonly string[]): boolean | undefined => {
  for (const [i, arg] of args.entries()) {
    const m = /^--userland-proxy(?:=(.*))?$/.exec(arg);
    if (m === null) continue;
    const value = m[1] ?? args[i + 1] ?? 'true';
    return value !== 'false';
  }
  return undefined;
};

/**
 * Whether a local dockerd publishes ports through its userland proxy: from its command line, else
 * its daemon.json, else the engine's default (on). `unknown` when no dockerd runs on this host
 * (a remote engine). Pure over its inputs.
 *
 * @example
 * userlandProxyOf(['dockerd', '--userland-proxy=false'], undefined); // 'off'
 */
export const userlandProxyOf = (args: readonly string[] | undefined, daemonJson: string | undefined): UserlandProxy => {
  if (args === undefined) return 'unknown';
  const flag = flagOf(args);
  if (flag !== undefined) return flag ? 'on' : 'off';
  if (daemonJson !== undefined) {
    try {
      const value = (JSON.parse(daemonJson) as Record<string, unknown>)['userland-proxy'];
      if (typeof value === 'boolean') return value ? 'on' : 'off';
    } catch {
      // A daemon.json dockerd could not read either: its default applies.
    }
  }
  return 'on';
};

const DEFAULT_SOCKET = 'unix:///var/run/docker.sock';

/** Where a client or dockerd address points, comparable: `unix:///path` or `tcp://host:port`; fd:// (socket activation) is the default socket. */
const normalHost = (address: string): string => {
  if (address === '' || address.startsWith('fd://')) return DEFAULT_SOCKET;
  if (address.startsWith('/')) return `unix://${address}`;
  if (address.startsWith('unix://')) return address;
  const m = /^(?:tcp:\/\/)?([^:/]*)(?::(\d+))?\/?$/.exec(address);
  return m === null ? address : `tcp://${m[1] || '0.0.0.0'}:${m[2] ?? '2375'}`;
};

/** The addresses a dockerd listens on (`-H`, `--host`, repeatable); the default socket without any. */
const listensOn = (args: readonly string[]): string[] => {
  const hosts: string[] = [];
  for (const [i, arg] of args.entries()) {
    const m = /^(?:-H|--host)(?:=(.*))?$/.exec(arg);
    if (m === null) continue;
    const value = m[1] ?? args[i + 1];
    if (value !== undefined) hosts.push(normalHost(value));
  }
  return hosts.length === 0 ? [DEFAULT_SOCKET] : hosts;
};

const sameHost = (listen: string, client: string): boolean => {
  if (listen === client) return true;
  const l = /^tcp:\/\/(.*):(\d+)$/.exec(listen);
  const c = /^tcp:\/\/(.*):(\d+)$/.exec(client);
  return l !== null && c !== null && l[2] === c[2] && (l[1] === '0.0.0.0' || l[1] === '::');
};

/**
 * Of the dockerd command lines running on this host, the one serving `dockerHost` (`DOCKER_HOST`;
 * undefined: the default socket): the one listening there, else the only one; undefined when none
 * is (a remote engine) or several run and none listens there. Pure.
 *
 * @example
 * dockerdServing([['dockerd'], ['dockerd', '-H', 'unix:///tmp/d.sock']], 'unix:///tmp/d.sock'); // ['dockerd', '-H', 'unix:///tmp/d.sock']
 */
export const dockerdServing = (commandLines: readonly (readonly string[])[], dockerHost: string | undefined): readonly string[] | undefined => {
  const client = normalHost(dockerHost ?? '');
  const serving = commandLines.find((args) => listensOn(args).some((listen) => sameHost(listen, client)));
  return serving ?? (commandLines.length === 1 ? commandLines[0] : undefined);
};

/** The command lines of the dockerd processes running on this host (read from /proc). */
const dockerdCommandLines = async (): Promise<string[][]> => {
  const pids = await readdir('/proc').catch(() => [] as string[]);
  const found: string[][] = [];
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    const args = raw.split('\0').filter((a) => a !== '');
    if (args[0] !== undefined && /(^|\/)dockerd$/.test(args[0])) found.push(args);
  }
  return found;
};

/**
 * How the dockerd serving `dockerHost` on this host publishes ports (see {@link userlandProxyOf}
 * and {@link dockerdServing}).
 *
 * @example
 * if ((await detectUserlandProxy(process.env['DOCKER_HOST'])) === 'on') log.warn('published ports go through docker-proxy: start dockerd with --userland-proxy=false');
 */
export const detectUserlandProxy = async (dockerHost?: string): Promise<UserlandProxy> => {
  const args = dockerdServing(await dockerdCommandLines(), dockerHost);
  if (args === undefined) return 'unknown';
  const configAt = args.findIndex((a) => a === '--config-file' || a.startsWith('--config-file='));
  const configFile = configAt < 0 ? '/etc/docker/daemon.json' : (args[configAt]?.split('=')[1] ?? args[configAt + 1] ?? '/etc/docker/daemon.json');
  return userlandProxyOf(args, await readFile(configFile, 'utf8').catch(() => undefined));
};
