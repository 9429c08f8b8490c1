/**
 * A container runtime whose containers outlive Tavern's process (the Docker runtime): what the
 * reconciler needs to find them again after a restart, and what `/health` reports.
 */
import type { Runtime } from './index.js';

/** A container of this Tavern instance, as the runtime sees it. */
export interface HostedContainer {
  readonly lobbyId: string;
  readonly namespaceId: string;
  readonly versionId: string;
  readonly containerId: string;
  readonly running: boolean;
}

/** A node of a runtime of several hosts (Swarm), as `/health` lists it under its region. */
export interface RuntimeNode {
  readonly name: string;
  /** Where players reach its ports (`tavern.public-address`). */
  readonly address?: string;
  /** The manager's view of it (`ready`, `down`, …). */
  readonly state: string;
  /** The engine's own availability (`active`, `pause`, `drain`). */
  readonly availability: string;
  /** Drained for Tavern (`tavern.drain=true`): running lobbies finish there, no new one is placed. */
  readonly drained: boolean;
  /** Its engine vouches for the hardening the runtime cannot set itself (`tavern.no-new-privileges=true`). */
  readonly hardened: boolean;
  /** Whether a new lobby may be placed on it now. */
  readonly accepting: boolean;
}

/** A node as the operator's list shows it (`tavern nodes list`): its id and region, and the Tavern lobbies on it. */
export interface ClusterNode extends RuntimeNode {
  readonly id: string;
  /** Its `tavern.region` label (none: it serves no region). */
  readonly region?: string;
  /** Tavern lobbies whose tasks run there now (every instance's). */
  readonly lobbies: number;
}

/**
 * The nodes of a runtime of several hosts (Swarm), for the operator: listed, drained, undrained.
 * Both reject, saying why, when the cluster's manager does not answer.
 */
export interface ClusterNodes {
  list(): Promise<readonly ClusterNode[]>;
  /**
   * Drains a node for Tavern (`tavern.drain=true`: no new lobby is placed there, running ones
   * finish) or lifts the drain; the node as it is then, or undefined when no node has that name or id.
   */
  setDrain(node: string, drained: boolean): Promise<ClusterNode | undefined>;
}

export interface RuntimeHealth {
  /** `docker`, `swarm`, `fake`, or `none`. */
  readonly runtime: string;
  readonly reachable: boolean;
  /** The engine's version, when it answered. */
  readonly version?: string;
  /** Why it is unreachable. */
  readonly error?: string;
  /** The nodes of each region (a runtime of several hosts). */
  readonly regions?: Readonly<Record<string, readonly RuntimeNode[]>>;
}

/**
 * @example
 * for (const c of await runtime.inventory()) if (!runtime.starting(c.lobbyId)) await runtime.adopt(c);
 */
export interface HostedRuntime extends Runtime {
  /** This instance's containers, running or not. */
  inventory(): Promise<readonly HostedContainer[]>;
  /** Watch a container again (its logs and its exit); an exited one is reported at once. */
  adopt(container: HostedContainer): Promise<void>;
  /** Remove a container no lobby needs. */
  discard(container: HostedContainer): Promise<void>;
  /** Whether a start of this lobby is under way (its container may not exist yet). */
  starting(lobbyId: string): boolean;
  /** Lobby ids whose containers are being watched now. */
  watching(): readonly string[];
  health(): Promise<RuntimeHealth>;
}
