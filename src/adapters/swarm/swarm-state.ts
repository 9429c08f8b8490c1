/**
 * What the Swarm manager says of its nodes and of a lobby's task, read into the facts the Swarm
 * runtime acts on: which nodes accept lobbies in which region, and whether a lobby's task is
 * still coming, running, over, or lost with its node. Pure.
 */
import type { RuntimeNode } from '../../io/runtime.js';
import { ADDRESS_LABEL, DRAIN_LABEL, NO_NEW_PRIVILEGES_LABEL, REGION_LABEL } from './service-spec.js';

/** A node as `GET /nodes` gives it, as far as Tavern reads it. */
export interface RawNode {
  readonly ID: string;
  readonly Spec?: { readonly Labels?: Readonly<Record<string, string>>; readonly Availability?: string };
  readonly Description?: { readonly Hostname?: string; readonly Engine?: { readonly EngineVersion?: string; readonly Labels?: Readonly<Record<string, string>> } };
  readonly Status?: { readonly State?: string; readonly Addr?: string };
}

/** A node of the swarm, for placement and `/health` (`name` is its hostname). */
export interface SwarmNodeFacts extends RuntimeNode {
  readonly id: string;
  /** Its `tavern.region` label (a node without one serves no region). */
  readonly region?: string;
}

/**
 * The nodes as Tavern reads them.
 *
 * @example
 * nodeFacts(await manager.listNodes()).filter((n) => n.accepting).map((n) => n.region); // ['lnd', 'lnd', 'fra']
 */
export const nodeFacts = (nodes: readonly RawNode[]): SwarmNodeFacts[] =>
  nodes.map((n) => {
    const labels = n.Spec?.Labels ?? {};
    const region = labels[REGION_LABEL];
    const address = labels[ADDRESS_LABEL];
    const state = n.Status?.State ?? 'unknown';
    const availability = n.Spec?.Availability ?? 'active';
    const drained = labels[DRAIN_LABEL] === 'true';
    const hardened = n.Description?.Engine?.Labels?.[NO_NEW_PRIVILEGES_LABEL] === 'true';
    return {
      id: n.ID, name: n.Description?.Hostname ?? n.ID,
      ...(region === undefined ? {} : { region }), ...(address === undefined ? {} : { address }),
      state, availability, drained, hardened,
      accepting: region !== undefined && state === 'ready' && availability === 'active' && !drained && hardened,
    };
  });

/**
 * The regions with at least one node accepting lobbies.
 *
 * @example
 * acceptingRegions(nodes); // Set { 'lnd', 'fra' }
 */
export const acceptingRegions = (nodes: readonly SwarmNodeFacts[]): ReadonlySet<string> =>
  new Set(nodes.flatMap((n) => (n.accepting && n.region !== undefined ? [n.region] : [])));

/** A task as `GET /tasks` gives it, as far as Tavern reads it. */
export interface RawTask {
  readonly ID: string;
  readonly ServiceID: string;
  readonly NodeID?: string;
  readonly CreatedAt?: string;
  readonly Spec?: { readonly ContainerSpec?: { readonly Labels?: Readonly<Record<string, string>> } };
  readonly Status?: {
    readonly State?: string;
    readonly Err?: string;
    readonly Message?: string;
    readonly ContainerStatus?: { readonly ContainerID?: string; readonly ExitCode?: number };
  };
}

/** Where a lobby's task is. */
export type TaskOutcome =
  | { readonly kind: 'pending'; readonly why?: string }
  | { readonly kind: 'running'; readonly nodeId: string }
  | { readonly kind: 'ended'; readonly state: string; readonly exitCode?: number; readonly why: string }
  | { readonly kind: 'lost'; readonly nodeId: string; readonly why: string };

/** Task states after which it never runs again (restart policy none). */
const OVER = new Set(['complete', 'failed', 'shutdown', 'rejected', 'orphaned', 'remove']);
/** Node states in which the manager no longer hears from the node. */
const GONE = new Set(['down', 'unknown', 'disconnected']);

/**
 * Task states from the scheduler's choice of a node until the task ends: its container may run,
 * and call ready, before the manager says "running", so its node's address is known from then on.
 */
export const PLACED: ReadonlySet<string> = new Set(['assigned', 'accepted', 'preparing', 'ready', 'starting', 'running']);

/**
 * The latest task of a service (it has one: restart policy none), or undefined.
 *
 * @example
 * latestTask(tasks.filter((t) => t.ServiceID === id))?.Status?.State; // 'running'
 */
export const latestTask = (tasks: readonly RawTask[]): RawTask | undefined =>
  tasks.reduce<RawTask | undefined>((a, t) => (a === undefined || (t.CreatedAt ?? '') > (a.CreatedAt ?? '') ? t : a), undefined);

/**
 * Where a task is. A task on a node the manager no longer hears from is lost, whatever state it
 * was last reported in (Swarm keeps saying "running" until the node comes back).
 *
 * @example
 * taskOutcome({ ID: 't', ServiceID: 's', NodeID: 'n2', Status: { State: 'running' } }, nodes); // { kind: 'lost', nodeId: 'n2', why: 'node n2 (10.0.0.12) is down' } when n2 is down
 */
export const taskOutcome = (task: RawTask | undefined, nodes: readonly SwarmNodeFacts[]): TaskOutcome => {
  if (task === undefined) return { kind: 'pending' };
  const state = task.Status?.State ?? 'new';
  const exitCode = task.Status?.ContainerStatus?.ExitCode;
  if (OVER.has(state)) {
    const why = task.Status?.Err ?? task.Status?.Message ?? state;
    return { kind: 'ended', state, ...(exitCode === undefined ? {} : { exitCode }), why };
  }
  const node = task.NodeID === undefined ? undefined : nodes.find((n) => n.id === task.NodeID);
  if (node !== undefined && GONE.has(node.state)) {
    return { kind: 'lost', nodeId: node.id, why: `node ${node.name}${node.address === undefined ? '' : ` (${node.address})`} is ${node.state}` };
  }
  if (state === 'running' && task.NodeID !== undefined) return { kind: 'running', nodeId: task.NodeID };
  const why = task.Status?.Err;
  return why === undefined ? { kind: 'pending' } : { kind: 'pending', why };
};

/**
 * The nodes of each region, as `/health` lists them (nodes without a region under `(none)`).
 *
 * @example
 * nodesByRegion(nodes).lnd?.map((n) => n.name); // ['tvswarm0-n1', 'tvswarm0-n2']
 */
export const nodesByRegion = (nodes: readonly SwarmNodeFacts[]): Record<string, RuntimeNode[]> => {
  const regions: Record<string, RuntimeNode[]> = {};
  for (const n of nodes) {
    const { id: _, region: __, ...node } = n;
    (regions[n.region ?? '(none)'] ??= []).push(node);
  }
  return regions;
};

/**
 * Whether a region accepts lobbies, as a function that stays the same (`previous`) while the
 * accepting regions do: the matchmaker hands the core new hosting facts only when they changed.
 *
 * @example
 * const fn = regionsFn(() => false, new Set(['lnd'])); fn('lnd'); // true
 */
export const regionsFn = (previous: ((region: string) => boolean) & { regions?: string }, accepting: ReadonlySet<string>): (region: string) => boolean => {
  const key = [...accepting].sort().join('\n');
  if (previous.regions === key) return previous;
  return Object.assign((region: string) => accepting.has(region), { regions: key });
};
