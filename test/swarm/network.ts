/**
 * The private network a test Swarm lives on: a Linux bridge on the host with an address of its
 * own (where the registry listens), and per node a network namespace joined to the bridge by a
 * veth pair. No default route in the namespaces: a node can reach the bridge's subnet and
 * nothing else. One FORWARD rule lets traffic cross the bridge (the host's Docker sets the FORWARD
 * policy to DROP, and br_netfilter sends bridged frames through it). Everything is named from the
 * cluster's slot, so leftovers of a killed run are found by name. Test helpers; root only.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sh, succeeds } from './system.js';

/** The names and addresses of one slot's cluster (slot 0: bridge tvswarm0 on 10.77.0.1/24). */
export interface Layout {
  readonly slot: number;
  /** The bridge, also the prefix of every namespace and link (`tvswarm0`, `tvswarm0-n1`). */
  readonly bridge: string;
  /** The host's address on the bridge. */
  readonly hostAddress: string;
  /** The registry's `host:port`, on the host's bridge address. */
  readonly registry: string;
  /** The folder holding every file of the cluster (daemons' roots, sockets, logs, registry). */
  readonly dir: string;
  /** The comment that marks the FORWARD rule. */
  readonly comment: string;
  /** Node `n`'s name (1-based): its network namespace, hostname and host-side veth (`tvswarm0-n1`). */
  node(n: number): string;
  /** Node `n`'s address on the bridge (`10.77.0.11`). */
  address(n: number): string;
}

/** The largest cluster the layout gives addresses to. */
export const MAX_NODES = 9;

/**
 * The names and addresses of slot `slot`.
 *
 * @example
 * layout(0).address(2); // '10.77.0.12'
 */
export const layout = (slot: number): Layout => ({
  slot,
  bridge: `tvswarm${slot}`,
  hostAddress: `10.77.${slot}.1`,
  registry: `10.77.${slot}.1:5000`,
  dir: join(tmpdir(), `tavern-swarm-${slot}`),
  comment: `tavern-swarm-${slot}`,
  node: (n) => `tvswarm${slot}-n${n}`,
  address: (n) => `10.77.${slot}.${10 + n}`,
});

const forwardRule = (l: Layout): string[] => ['FORWARD', '-i', l.bridge, '-o', l.bridge, '-m', 'comment', '--comment', l.comment, '-j', 'ACCEPT'];

/**
 * Creates the bridge, the FORWARD rule and `nodes` namespaces with their veths and addresses;
 * refuses when the slot's subnet is already routed on this machine (a real network of the host).
 *
 * @example
 * await createNetwork(layout(0), 3); // ip netns: tvswarm0-n1, tvswarm0-n2, tvswarm0-n3
 */
export const createNetwork = async (l: Layout, nodes: number): Promise<void> => {
  const routed = (await sh('ip', ['-o', 'route', 'show', 'to', 'match', l.hostAddress])).split('\n').filter((r) => r !== '' && !r.startsWith('default'));
  if (routed.length > 0) throw new Error(`${l.hostAddress}/24 is already routed on this machine (${routed.join('; ')}): the Swarm test network would clash with it`);
  await sh('ip', ['link', 'add', l.bridge, 'type', 'bridge']);
  await sh('ip', ['addr', 'add', `${l.hostAddress}/24`, 'dev', l.bridge]);
  await sh('ip', ['link', 'set', l.bridge, 'up']);
  const [chain, ...rule] = forwardRule(l);
  await sh('iptables', ['-I', chain as string, '1', ...rule]);
  for (let n = 1; n <= nodes; n += 1) {
    const name = l.node(n);
    await sh('ip', ['netns', 'add', name]);
    await sh('ip', ['link', 'add', name, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name]);
    await sh('ip', ['link', 'set', name, 'master', l.bridge, 'up']);
    await sh('ip', ['-n', name, 'addr', 'add', `${l.address(n)}/24`, 'dev', 'eth0']);
    await sh('ip', ['-n', name, 'link', 'set', 'eth0', 'up']);
    await sh('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
  }
};

/**
 * Sets node `n`'s link up or down (its host-side veth: the node loses its only network, as
 * when a cable is pulled).
 *
 * @example
 * await setLink(layout(0), 3, 'down');
 */
export const setLink = async (l: Layout, n: number, state: 'up' | 'down'): Promise<void> => {
  await sh('ip', ['link', 'set', l.node(n), state]);
};

const ours = (l: Layout, name: string): boolean => name === l.bridge || name.startsWith(`${l.bridge}-`);

/** The slot's network namespaces that exist now. */
const namespaces = async (l: Layout): Promise<string[]> =>
  (await sh('ip', ['netns', 'list'])).split('\n').map((line) => line.split(' ')[0] ?? '').filter((name) => ours(l, name));

/** The slot's links (bridge, host-side veths) that exist now. */
const links = async (l: Layout): Promise<string[]> =>
  (await sh('ip', ['-o', 'link', 'show'])).split('\n').map((line) => (line.split(': ')[1] ?? '').split('@')[0] ?? '').filter((name) => ours(l, name));

/**
 * The slot's namespaces, links and FORWARD rules that exist now, described.
 *
 * @example
 * await networkLeftovers(layout(0)); // [] after a clean teardown
 */
export const networkLeftovers = async (l: Layout): Promise<string[]> => {
  const rules = (await sh('iptables', ['-S', 'FORWARD'])).split('\n').filter((rule) => rule.includes(l.comment));
  return [
    ...(await namespaces(l)).map((n) => `network namespace ${n}`),
    ...(await links(l)).map((n) => `link ${n}`),
    ...rules.map((r) => `iptables rule ${r}`),
  ];
};

/**
 * Deletes the slot's namespaces, links and FORWARD rules, whatever exists of them (a cluster
 * half built, or left by a killed run). Idempotent.
 *
 * @example
 * await removeNetwork(layout(0));
 */
export const removeNetwork = async (l: Layout): Promise<void> => {
  for (const name of await namespaces(l)) await succeeds('ip', ['netns', 'delete', name]);
  for (const name of (await links(l)).sort((a, b) => b.length - a.length)) await succeeds('ip', ['link', 'delete', name]);
  const [chain, ...rule] = forwardRule(l);
  for (let copies = 0; copies < 16 && (await succeeds('iptables', ['-D', chain as string, ...rule])); copies += 1);
};
