/**
 * The container options a lobby never gets: Docker Engine host settings (`HostConfig`), the
 * container's own user, volumes and network, and their Compose spellings. A version config that
 * names one in a `docker`/`container` block is refused with the reason, not taken for a typo.
 * Keys are matched folded (`CapAdd`, `cap-add` and `cap_add` are one key); the Docker adapter
 * builds every container from Tavern's own settings, so these could never reach it anyway.
 */
import { foldKey } from './nearest-key.js';

/** Why a family of options is refused, said to the person who wrote one. */
const REASONS = Object.freeze({
  privilege: 'lobbies run unprivileged, with no added capabilities: Tavern sets their user, security profile and runtime',
  host: 'lobbies run unprivileged, with no host mounts or devices',
  namespaces: "lobbies never share the host's process, IPC, UTS or cgroup namespaces nor change kernel settings",
  network: "Tavern wires each lobby's network itself: use `network_mode` and `ports`",
  resources: "a lobby's CPU, memory and process limits come from its `tier`",
  lifecycle: 'Tavern starts, restarts, logs and removes lobby containers itself',
});

type Reason = keyof typeof REASONS;

const FAMILIES: Readonly<Record<Reason, readonly string[]>> = Object.freeze({
  privilege: [
    'privileged', 'cap_add', 'cap_drop', 'capabilities', 'security_opt', 'user', 'userns_mode', 'group_add', 'runtime',
    'isolation', 'masked_paths', 'readonly_paths', 'read_only', 'readonly_rootfs', 'no_new_privileges', 'host_config',
  ],
  host: [
    'volumes', 'volume', 'binds', 'mounts', 'volumes_from', 'volume_driver', 'tmpfs', 'devices', 'device_requests',
    'device_cgroup_rules', 'gpus', 'storage_opt',
  ],
  namespaces: [
    'pid_mode', 'pid', 'ipc_mode', 'ipc', 'uts_mode', 'uts', 'cgroup', 'cgroupns_mode', 'cgroup_parent', 'sysctls', 'ulimits',
  ],
  network: [
    'network', 'networks', 'networking_config', 'network_disabled', 'extra_hosts', 'dns', 'dns_search', 'dns_opt',
    'dns_options', 'hostname', 'domainname', 'mac_address', 'links', 'external_links', 'port_bindings',
    'publish_all_ports', 'exposed_ports', 'expose',
  ],
  resources: [
    'memory', 'mem_limit', 'memory_reservation', 'mem_reservation', 'memory_swap', 'memswap_limit', 'memory_swappiness',
    'mem_swappiness', 'kernel_memory', 'oom_kill_disable', 'oom_score_adj', 'shm_size', 'cpus', 'cpu_shares', 'cpu_period', 'cpu_quota',
    'cpu_count', 'cpu_percent', 'cpu_realtime_period', 'cpu_realtime_runtime', 'cpuset_cpus', 'cpuset_mems', 'nano_cpus',
    'pids_limit', 'blkio_weight', 'blkio_weight_device', 'blkio_device_read_bps', 'blkio_device_write_bps',
    'blkio_device_read_iops', 'blkio_device_write_iops', 'disk_quota',
  ],
  lifecycle: ['init', 'restart', 'restart_policy', 'auto_remove', 'log_config', 'logging', 'container_id_file', 'console_size'],
});

/** Folded key → its family. */
const BY_KEY: ReadonlyMap<string, Reason> = new Map(
  (Object.entries(FAMILIES) as [Reason, readonly string[]][]).flatMap(([reason, keys]) => keys.map((k) => [foldKey(k), reason] as const)),
);

/**
 * Why `key` may never be given in a container block, or `undefined` when it is not one of those.
 *
 * @example
 * forbiddenContainerKey('privileged'); // 'lobbies run unprivileged, with no added capabilities: …'
 * forbiddenContainerKey('CapAdd'); // same family as cap_add
 * forbiddenContainerKey('image_id'); // undefined
 */
export function forbiddenContainerKey(key: string): string | undefined {
  const reason = BY_KEY.get(foldKey(key));
  return reason === undefined ? undefined : REASONS[reason];
}
