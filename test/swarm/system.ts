/**
 * The host-side tools the Swarm harness drives (iproute2, iptables, runc, umount), each run with
 * a time bound, and the few facts it reads from /proc: which processes mention a folder, whether
 * a process is alive, which mounts lie under a folder. Root only. Test helpers.
 */
import { execFile } from 'node:child_process';
import { access, readdir, readFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * Runs `file` with `args` (no shell), killed after `timeoutMs`; its stdout. Rejects with the
 * command line and its stderr when it fails.
 *
 * @example
 * const namespaces = await sh('ip', ['netns', 'list']);
 */
export const sh = async (file: string, args: readonly string[], timeoutMs = 30_000): Promise<string> => {
  try {
    const { stdout } = await exec(file, [...args], { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 << 20 });
    return stdout;
  } catch (e) {
    const stderr = (e as { stderr?: string }).stderr?.trim();
    throw new Error(`${file} ${args.join(' ')} failed: ${stderr !== undefined && stderr !== '' ? stderr : (e as Error).message}`);
  }
};

/**
 * {@link sh}, reporting only whether it succeeded (for clean-up steps that may find nothing to do).
 *
 * @example
 * while (await succeeds('iptables', ['-D', 'FORWARD', ...rule])); // deletes every copy
 */
export const succeeds = (file: string, args: readonly string[], timeoutMs = 30_000): Promise<boolean> =>
  sh(file, args, timeoutMs).then(() => true, () => false);

/** The commands the harness runs, and the Debian package each comes from. */
const COMMANDS: Readonly<Record<string, string>> = {
  ip: 'iproute2', iptables: 'iptables', nsenter: 'util-linux', unshare: 'util-linux', umount: 'mount',
  dockerd: 'docker.io', runc: 'runc (with docker.io)', 'docker-registry': 'docker-registry',
};

const onPath = async (command: string): Promise<boolean> => {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/sbin', '/sbin', '/usr/bin', '/bin'];
  for (const dir of dirs.filter((d) => d !== '')) {
    if (await access(join(dir, command)).then(() => true, () => false)) return true;
  }
  return false;
};

/**
 * Why this machine cannot build a Swarm cluster (not root, commands missing), or undefined.
 *
 * @example
 * await swarmProblem(); // 'missing commands: docker-registry (Debian package docker-registry)'
 */
export const swarmProblem = async (): Promise<string | undefined> => {
  if (process.getuid?.() !== 0) return `it runs as uid ${process.getuid?.() ?? '?'}, and network namespaces, bridges and dockerd need root`;
  const missing: string[] = [];
  for (const [command, pkg] of Object.entries(COMMANDS)) {
    if (!(await onPath(command))) missing.push(`${command} (Debian package ${pkg})`);
  }
  return missing.length === 0 ? undefined : `missing commands: ${missing.join(', ')}`;
};

/**
 * Whether process `pid` is alive (a zombie counts as gone).
 *
 * @example
 * await alive(process.pid); // true
 */
export const alive = async (pid: number): Promise<boolean> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat !== undefined && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
};

/**
 * Every process (but this one) whose command line mentions `text`: a node's dockerd, its
 * containerd and shims, the registry, found by their folder.
 *
 * @example
 * await pidsMentioning('/tmp/tavern-swarm-0/'); // [4242, 4251]
 */
export const pidsMentioning = async (text: string): Promise<number[]> => {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.replaceAll('\0', ' ').includes(text)) pids.push(pid);
  }
  return pids;
};

/**
 * Sends `signal` to each of `pids` and waits (polling, at most `ms`) until all are gone; the ones
 * still alive then.
 *
 * @example
 * await signalAndWait([pid], 'SIGTERM', 30_000); // [] once dockerd has exited
 */
export const signalAndWait = async (pids: readonly number[], signal: NodeJS.Signals, ms: number): Promise<number[]> => {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + ms;
  for (;;) {
    const left: number[] = [];
    for (const pid of pids) if (await alive(pid)) left.push(pid);
    if (left.length === 0 || Date.now() > deadline) return left;
    await sleep(50);
  }
};

/** A mount point as /proc/self/mountinfo writes it (octal escapes for space, tab, newline, backslash). */
const unescapeMount = (path: string): string => path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

/**
 * The mount points at or under `dir`, deepest first.
 *
 * @example
 * await mountsUnder('/tmp/tavern-swarm-0'); // ['/tmp/tavern-swarm-0/n1/exec/netns/ingress_sbox', …]
 */
export const mountsUnder = async (dir: string): Promise<string[]> => {
  const lines = (await readFile('/proc/self/mountinfo', 'utf8')).split('\n');
  const points = lines.map((l) => unescapeMount(l.split(' ')[4] ?? '')).filter((p) => p === dir || p.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
};

/**
 * Detaches every mount at or under `dir` (dockerd's overlay and network-namespace mounts that a
 * killed daemon leaves), so that the folder can be removed.
 *
 * @example
 * await unmountUnder('/tmp/tavern-swarm-0');
 */
export const unmountUnder = async (dir: string): Promise<void> => {
  for (const point of await mountsUnder(dir)) await succeeds('umount', ['-l', point], 10_000);
};
