/**
 * Facts about the Docker Engine Tavern talks to: where it is, the bridge network's gateway (the
 * address a bridge container reaches the host at), and whether published ports go through the
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

/**
 * The gateway of the engine's default bridge network (e.g. 172.17.0.1): as the engine states it,
 * else the address of the bridge's interface on this host, else the first address of its subnet
 * (where Docker puts it); undefined without an IPv4 bridge.
 *
 * @example
 * await bridgeGateway(docker); // '172.17.0.1'
 */
export const bridgeGateway = async (docker: Dockerode): Promise<string | undefined> => {
  const info = (await docker.getNetwork('bridge').inspect()) as {
    IPAM?: { Config?: { Gateway?: string; Subnet?: string }[] };
    Options?: Record<string, string>;
  };
  const configs = info.IPAM?.Config ?? [];
  const stated = configs.find((c) => c.Gateway !== undefined)?.Gateway;
  if (stated !== undefined) return stated;
  const name = info.Options?.['com.docker.network.bridge.name'];
  const local = name === undefined ? undefined : networkInterfaces()[name]?.find((a) => a.family === 'IPv4')?.address;
  if (local !== undefined) return local;
  for (const c of configs) {
    const host = c.Subnet === undefined ? undefined : firstHost(c.Subnet);
    if (host !== undefined) return host;
  }
  return undefined;
};

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

/** The arguments of the dockerd running on this host, if one does (read from /proc). */
const dockerdArgs = async (): Promise<string[] | undefined> => {
  const pids = await readdir('/proc').catch(() => [] as string[]);
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    const args = raw.split('\0').filter((a) => a !== '');
    if (args[0] !== undefined && /(^|\/)dockerd$/.test(args[0])) return args;
  }
  return undefined;
};

/**
 * How this host's dockerd publishes ports (see {@link userlandProxyOf}).
 *
 * @example
 * if ((await detectUserlandProxy()) === 'on') log.warn('published ports go through docker-proxy: start dockerd with --userland-proxy=false');
 */
export const detectUserlandProxy = async (): Promise<UserlandProxy> => {
  const args = await dockerdArgs();
  if (args === undefined) return 'unknown';
  const configAt = args.findIndex((a) => a === '--config-file' || a.startsWith('--config-file='));
  const configFile = configAt < 0 ? '/etc/docker/daemon.json' : (args[configAt]?.split('=')[1] ?? args[configAt + 1] ?? '/etc/docker/daemon.json');
  return userlandProxyOf(args, await readFile(configFile, 'utf8').catch(() => undefined));
};
