/**
 * `tavern nodes list|drain|undrain` (the admin token): the cluster's nodes with their region,
 * state, drain and Tavern lobbies; a node drained for Tavern takes no new lobby and lets its
 * running lobbies finish (the label `tavern.drain`, set through the Swarm manager; never Swarm's
 * own drain, which would stop them); undrain lifts that.
 */
import type { Command } from 'commander';
import { apiFor, type CommandIo } from './commands.js';
import { table } from './table.js';

/** A node as `GET /admin/nodes` gives it. */
export interface NodeRow {
  node_id: string; name: string; region: string | null; address: string | null; state: string; availability: string;
  drained: boolean; hardened: boolean; accepting: boolean; lobbies: number;
}

/**
 * The node table `tavern nodes list` prints (a header, then one line per node).
 *
 * @example
 * nodeTable([{ name: 'n1', region: 'lnd', address: '10.0.0.11', state: 'ready', drained: false, accepting: true, lobbies: 3, … }]);
 * // ['NAME  REGION  ADDRESS    STATE  DRAIN  ACCEPTS  LOBBIES', 'n1    lnd     10.0.0.11  ready  -      yes      3']
 */
export const nodeTable = (nodes: readonly NodeRow[]): string[] =>
  table([
    ['NAME', 'REGION', 'ADDRESS', 'STATE', 'DRAIN', 'ACCEPTS', 'LOBBIES'],
    ...nodes.map((n) => [n.name, n.region ?? '-', n.address ?? '-', n.availability === 'active' ? n.state : `${n.state} (${n.availability})`, n.drained ? 'drained' : '-', n.accepting ? 'yes' : 'no', String(n.lobbies)]),
  ]);

/** What `tavern nodes drain|undrain` prints once the server answered. */
const drainLine = (n: NodeRow): string =>
  n.drained
    ? `node ${n.name} drained: no new lobby is placed there; its ${n.lobbies} running ${n.lobbies === 1 ? 'lobby finishes' : 'lobbies finish'} (\`tavern nodes undrain ${n.name}\` lifts it)`
    : `node ${n.name} undrained: ${n.accepting ? 'new lobbies are placed there again' : `it takes no lobby yet (state ${n.state}${n.region === null ? ', no tavern.region label' : ''}${n.hardened ? '' : ', not hardened'})`}`;

/**
 * @example
 * registerNodes(program, io); // tavern nodes list, tavern nodes drain <node>, tavern nodes undrain <node>
 */
export function registerNodes(program: Command, io: CommandIo): void {
  const nodes = program.command('nodes').description("the cluster's nodes, with TAVERN_RUNTIME=swarm (the admin token)");
  nodes.command('list').description('each node: its region, address, state, Tavern drain, whether it accepts lobbies, and the Tavern lobbies it runs')
    .action(async (_o: unknown, cmd: Command) => {
      const { api } = await apiFor(cmd, io);
      const { nodes: rows } = await api.call<{ nodes: NodeRow[] }>('GET', '/admin/nodes');
      for (const line of nodeTable(rows)) io.out(line);
    });
  for (const [verb, what] of [['drain', 'no new lobby is placed on <node> (its name or id); its running lobbies finish there'], ['undrain', 'lift the drain: lobbies are placed on <node> again']] as const) {
    nodes.command(`${verb} <node>`).description(what).action(async (node: string, _o: unknown, cmd: Command) => {
      const { api } = await apiFor(cmd, io);
      const { node: row } = await api.call<{ node: NodeRow }>('POST', `/admin/nodes/${encodeURIComponent(node)}/${verb}`);
      io.out(drainLine(row));
    });
  }
}
