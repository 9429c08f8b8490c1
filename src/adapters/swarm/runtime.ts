/**
 * The container runtime on a Docker Swarm, through a manager's Engine API (dockerode): each lobby
 * a service of one task, never restarted, placed in its region (service-spec.ts), its ports
 * published in host mode on the node that runs it. `start` resolves once the task runs (rejects,
 * removing the service, when it cannot). One poll of the manager's nodes and tasks follows every
 * lobby: a task that ends, or whose node the manager no longer hears from (engine stopped, link
 * cut: Swarm keeps calling such a task "running"), is reported, its service removed and its host
 * record released, so its seats and ports are given back; when the node returns, its engine
 * removes the container of the removed service, so no lobby runs twice. Output comes from the
 * service's logs through the manager, with the same caps as the Docker runtime.
 */
import type Dockerode from 'dockerode';
import type { StartLobby, StopLobby } from '../../core/effects.js';
import type { ExitReason, RuntimeListener } from '../../io/index.js';
import type { HostedContainer, HostedRuntime, RuntimeHealth } from '../../io/runtime.js';
import { describeEngineError, isStatus } from '../docker/engine-errors.js';
import { containerName, DEFAULT_HARDENING, hostedOf, LABELS } from '../docker/lobby-spec.js';
import { DEFAULT_LOG_LIMITS, followLogs, LogPump } from '../docker/log-pump.js';
import { adoptHosted, type HostingOptions } from '../docker/runtime-options.js';
import { NodeList } from './node-list.js';
import { serviceSpec } from './service-spec.js';
import { acceptingRegions, latestTask, nodesByRegion, PLACED, type RawTask, regionsFn, type SwarmNodeFacts, taskOutcome, type TaskOutcome } from './swarm-state.js';
import { TaskWaiter } from './task-waiter.js';

/** A build's image as every node pulls it: a registry reference, pinned by digest where it can be. */
export interface SwarmImageResolver {
  ensure(imageId: string): Promise<string>;
}

export interface SwarmRuntimeOptions extends HostingOptions {
  /** A Swarm manager's engine. */
  readonly docker: Dockerode;
  readonly images: SwarmImageResolver;
  /** Where a lobby on any node reaches Tavern's API (`RIVET_API_ENDPOINT`). */
  readonly apiOrigin: string;
  /** How long a start may wait for its task to run (image pull, scheduling); default 120 s. */
  readonly startTimeoutMs?: number;
  /** How often lobbies' tasks and the nodes are looked at; default 1 s. */
  readonly pollMs?: number;
  /** Called when {@link SwarmRuntime.addressOf} may answer differently (a lobby placed or gone, a node's address changed). */
  readonly placementChanged?: () => void;
}

interface Watched {
  readonly info: HostedContainer;
  /** The node its task runs on, when known (its start returned, or a look at the swarm saw it). */
  nodeId?: string;
  readonly pump: LogPump;
  stopRequested: boolean;
  logs?: NodeJS.ReadableStream;
  logsEnded: Promise<void>;
  finishing: boolean;
}

/** The manager's task list, typed. */
const listTasks = async (docker: Dockerode, filters: Record<string, string[]>): Promise<RawTask[]> => (await docker.listTasks({ filters })) as RawTask[];

// Not unref'd: a start waiting for its task keeps the process alive (it is bounded).
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * @example
 * const runtime = new SwarmRuntime({ docker: connectDocker('tcp://manager:2375'), images, instanceId, hosts: catalog, logs: logBook, apiOrigin, stopGraceMs: 30_000, clock });
 * runtime.attach(matchmaker);
 */
export class SwarmRuntime implements HostedRuntime {
  readonly #o: SwarmRuntimeOptions;
  readonly #watched = new Map<string, Watched>();
  readonly #starting = new Set<string>();
  readonly #warnedNodes = new Set<string>();
  #listener: RuntimeListener | undefined;
  #health: RuntimeHealth = { runtime: 'swarm', reachable: false };
  #nodes: readonly SwarmNodeFacts[] = [];
  #startable: (region: string) => boolean = () => false;
  /** The node each Tavern lobby's task runs on (this instance's and others'), as last seen. */
  #placed = new Map<string, string>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #polling = false;
  /** Every known lobby's address, as last told to `placementChanged`. */
  #told = '';
  readonly #nodeList: NodeList;
  readonly #tasks: TaskWaiter;

  constructor(options: SwarmRuntimeOptions) {
    this.#o = options;
    this.#nodeList = new NodeList(options.docker, (message, error) => this.#warn(message, error));
    this.#tasks = new TaskWaiter({
      tasks: (ids) => listTasks(options.docker, { service: [...ids] }),
      nodes: () => (this.#nodes.length === 0 ? this.#nodeList.read() : Promise.resolve(this.#nodes)),
      now: () => options.clock.now(),
    });
  }

  attach(listener: RuntimeListener): void {
    this.#listener = listener;
  }

  available(): boolean {
    return this.#health.reachable;
  }

  /** Whether a lobby can start in a region now: one of its nodes is ready, active, not drained and hardened. */
  startableIn(): (region: string) => boolean {
    return this.#startable;
  }

  /** The nodes as last read. */
  nodes(): readonly SwarmNodeFacts[] {
    return this.#nodes;
  }

  /**
   * Where players reach a lobby's TCP and UDP ports: the public address of the node its task runs
   * on (known once its start returned here, or from the last look at the swarm for another
   * instance's lobby); undefined when not known.
   */
  addressOf(lobbyId: string): string | undefined {
    const nodeId = this.#watched.get(lobbyId)?.nodeId ?? this.#placed.get(lobbyId);
    return nodeId === undefined ? undefined : this.#nodes.find((n) => n.id === nodeId)?.address;
  }

  /** Asks the manager for its swarm and nodes (bounded by the client's timeout) and remembers the answer. */
  async health(): Promise<RuntimeHealth> {
    try {
      const info = (await this.#o.docker.info()) as { ServerVersion?: string; Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } };
      if (info.Swarm?.LocalNodeState !== 'active' || info.Swarm.ControlAvailable !== true) {
        throw new Error(`the engine is not a Swarm manager (swarm state ${info.Swarm?.LocalNodeState ?? 'unknown'}): point TAVERN_SWARM_HOST at a manager`);
      }
      await this.#nodeList.follow();
      const [nodes, tasks] = await Promise.all([this.#nodeList.read(), listTasks(this.#o.docker, { label: [LABELS.lobby], 'desired-state': ['running'] })]);
      this.#setNodes(nodes);
      this.#setPlaced(tasks);
      this.#tellPlacement();
      this.#health = { runtime: 'swarm', reachable: true, ...(info.ServerVersion === undefined ? {} : { version: info.ServerVersion }), regions: nodesByRegion(this.#nodes) };
    } catch (error) {
      this.#nodeList.close();
      this.#setNodes([]);
      this.#health = { runtime: 'swarm', reachable: false, error: describeEngineError(error) };
    }
    return this.#health;
  }

  #setNodes(nodes: readonly SwarmNodeFacts[]): void {
    this.#nodes = nodes;
    this.#startable = regionsFn(this.#startable, acceptingRegions(nodes));
    for (const n of nodes) {
      if (n.hardened || this.#warnedNodes.has(n.id)) continue;
      this.#warnedNodes.add(n.id);
      this.#o.log?.warn({ node: n.name }, `Swarm node ${n.name} does not say it runs containers with no-new-privileges (engine label tavern.no-new-privileges=true, set with dockerd --no-new-privileges --label tavern.no-new-privileges=true): no lobby is placed on it`);
    }
  }

  /** Which node each Tavern task placed on one (assigned up to running) is on (tasks carry their service's labels). */
  #setPlaced(tasks: readonly RawTask[]): void {
    this.#placed = new Map(tasks.flatMap((t) => {
      const lobbyId = t.Spec?.ContainerSpec?.Labels?.[LABELS.lobby];
      return lobbyId !== undefined && t.NodeID !== undefined && PLACED.has(t.Status?.State ?? '') ? [[lobbyId, t.NodeID] as const] : [];
    }));
  }

  /** Calls `placementChanged` when some lobby's address is not what it was when last called. */
  #tellPlacement(): void {
    if (this.#o.placementChanged === undefined) return;
    const ids = [...new Set([...this.#watched.keys(), ...this.#placed.keys()])].sort();
    const now = ids.map((id) => `${id}=${this.addressOf(id) ?? ''}`).join(' ');
    if (now === this.#told) return;
    this.#told = now;
    this.#o.placementChanged();
  }

  starting(lobbyId: string): boolean {
    return this.#starting.has(lobbyId);
  }

  watching(): readonly string[] {
    return [...this.#watched.keys()];
  }

  async start(lobby: StartLobby): Promise<void> {
    if (this.#watched.has(lobby.lobbyId) || this.#starting.has(lobby.lobbyId)) return;
    this.#starting.add(lobby.lobbyId);
    let claimed = false;
    let service: Dockerode.Service | undefined;
    try {
      // The nodes as they are now (a drain set a moment ago keeps this lobby off its node), read while the claim is made.
      const [claim, nodes] = await Promise.all([
        this.#o.hosts.claimLobbyHost({ lobbyId: lobby.lobbyId, namespaceId: lobby.namespaceId, instanceId: this.#o.instanceId, createdAt: this.#o.clock.now() }),
        this.#nodeList.current(),
      ]);
      if (!claim.ok) throw new Error('this lobby is already hosted (another Tavern instance, or an earlier start)');
      claimed = true;
      if (lobby.imageId === undefined) throw new Error("the version's container has no image_id (build)");
      const [image, lobbyEnv] = await Promise.all([this.#o.images.ensure(lobby.imageId), this.#o.lobbyEnv?.(lobby, this.#o.apiOrigin)]);
      const env = { ...lobby.env, ...lobbyEnv, RIVET_API_ENDPOINT: this.#o.apiOrigin };
      this.#setNodes(nodes);
      const drained = this.#nodes.filter((n) => n.drained).map((n) => n.id);
      const spec = serviceSpec({ ...lobby, env }, { image, instanceId: this.#o.instanceId, hardening: this.#o.hardening ?? DEFAULT_HARDENING, stopGraceMs: this.#o.stopGraceMs, drained });
      const created = (await this.#o.docker.createService(spec)) as { id?: string; ID?: string };
      service = this.#o.docker.getService(created.id ?? created.ID ?? containerName(lobby.lobbyId));
      const serviceId = service.id;
      // Placed: where the lobby answers is known before the manager calls its task running.
      const nodeId = await this.#tasks.until(serviceId, this.#o.startTimeoutMs ?? 120_000, (node) => {
        if (this.#placed.get(lobby.lobbyId) === node) return;
        this.#placed.set(lobby.lobbyId, node);
        this.#tellPlacement();
      });
      await this.#watch({ lobbyId: lobby.lobbyId, namespaceId: lobby.namespaceId, versionId: lobby.versionId, containerId: serviceId, running: true }, 0, nodeId);
    } catch (error) {
      this.#placed.delete(lobby.lobbyId);
      if (service !== undefined) await service.remove().catch((e: unknown) => this.#warn(`removing the failed service of lobby ${lobby.lobbyId}`, e));
      if (claimed) await this.#o.hosts.releaseLobbyHost(lobby.lobbyId).catch((e: unknown) => this.#warn(`releasing lobby ${lobby.lobbyId}`, e));
      throw new Error(describeEngineError(error), { cause: error });
    } finally {
      this.#starting.delete(lobby.lobbyId);
    }
  }

  /**
   * Asks the lobby to stop: its service is scaled to 0, so its task gets SIGTERM and, after the
   * stop grace, SIGKILL (`force` too: a node's container cannot be killed through the manager; the
   * service's stop grace is Tavern's own). Its exit is then reported by the poll.
   */
  async stop(stop: StopLobby): Promise<void> {
    const watched = this.#watched.get(stop.lobbyId);
    if (watched !== undefined) watched.stopRequested = true;
    const service = this.#o.docker.getService(containerName(stop.lobbyId));
    try {
      const info = (await service.inspect()) as { Version: { Index: number }; Spec: Dockerode.ServiceSpec };
      if (info.Spec.Mode?.Replicated?.Replicas === 0) return;
      await service.update({ _query: { version: info.Version.Index }, _body: { ...info.Spec, Mode: { Replicated: { Replicas: 0 } } } });
    } catch (error) {
      if (isStatus(error, 404)) return;
      throw new Error(describeEngineError(error), { cause: error });
    }
  }

  /** This instance's services (by label), running or not. */
  async inventory(): Promise<readonly HostedContainer[]> {
    const services = (await this.#o.docker.listServices({ filters: { label: [`${LABELS.instance}=${this.#o.instanceId}`] } })) as { ID: string; Spec?: { Labels?: Record<string, string> } }[];
    if (services.length === 0) return [];
    const [tasks, nodes] = await Promise.all([listTasks(this.#o.docker, { label: [`${LABELS.instance}=${this.#o.instanceId}`] }), this.#nodeList.read()]);
    return services.flatMap((s) => hostedOf(s.Spec?.Labels ?? {}, s.ID, taskOutcome(latestTask(tasks.filter((t) => t.ServiceID === s.ID)), nodes).kind === 'running'));
  }

  /** Follows a service of this instance again (after a restart): its logs from where they stopped, and its end. */
  async adopt(c: HostedContainer): Promise<void> {
    await adoptHosted(c, this.#o, this.#watched.has(c.lobbyId), (since) => this.#watch(c, since));
  }

  /** Removes a service no lobby needs (an orphan). */
  async discard(c: HostedContainer): Promise<void> {
    await this.#o.docker.getService(c.containerId).remove().catch((error: unknown) => {
      if (!isStatus(error, 404)) throw error;
    });
  }

  /** Stops polling (the services keep running; a restarted Tavern adopts them). */
  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#nodeList.close();
    for (const w of this.#watched.values()) (w.logs as { destroy?: () => void } | undefined)?.destroy?.();
    this.#watched.clear();
  }

  async #watch(info: HostedContainer, sinceSeconds: number, nodeId?: string): Promise<void> {
    const pump = new LogPump(info.lobbyId, this.#o.logs, this.#o.logLimits ?? DEFAULT_LOG_LIMITS, () => this.#o.clock.now());
    const logs = await this.#o.docker.getService(info.containerId).logs({ follow: true, stdout: true, stderr: true, timestamps: true, since: sinceSeconds });
    const logsEnded = followLogs(this.#o.docker.modem, logs, pump);
    this.#watched.set(info.lobbyId, { info, pump, stopRequested: false, logs, logsEnded, finishing: false, ...(nodeId === undefined ? {} : { nodeId }) });
    this.#timer ??= setInterval(() => void this.#poll(), this.#o.pollMs ?? 1_000);
    this.#timer.unref();
    this.#tellPlacement();
  }

  /** One look at the nodes and this instance's tasks: every lobby whose task ended or was lost is finished. */
  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const [nodes, tasks] = await Promise.all([this.#nodeList.read(), listTasks(this.#o.docker, { label: [LABELS.lobby] })]);
      this.#setNodes(nodes);
      this.#setPlaced(tasks);
      this.#tellPlacement();
      for (const w of [...this.#watched.values()]) {
        const outcome = taskOutcome(latestTask(tasks.filter((t) => t.ServiceID === w.info.containerId)), nodes);
        if (outcome.kind === 'ended' || outcome.kind === 'lost') void this.#finish(w, outcome);
        else if (outcome.kind === 'pending' && !tasks.some((t) => t.ServiceID === w.info.containerId) && w.stopRequested) {
          void this.#finish(w, { kind: 'ended', state: 'shutdown', why: 'stopped' });
        }
      }
    } catch (error) {
      // The manager did not answer: the next poll tries again (lobbies are not lost for that).
      this.#warn('looking at the swarm failed', error);
    } finally {
      this.#polling = false;
      if (this.#watched.size === 0 && this.#timer !== undefined) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    }
  }

  async #finish(w: Watched, outcome: Extract<TaskOutcome, { kind: 'ended' | 'lost' }>): Promise<void> {
    if (w.finishing) return;
    w.finishing = true;
    const { info, pump } = w;
    const code = outcome.kind === 'ended' ? outcome.exitCode : undefined;
    if (outcome.kind === 'lost') {
      pump.note(`the lobby was lost: ${outcome.why} (the Swarm manager no longer hears from it); it is reported lost and its service removed`);
    } else {
      await Promise.race([w.logsEnded, pause(2_000)]);
      pump.note(`the lobby's task ended (${outcome.state}${code === undefined ? '' : `, exit code ${code}`}${outcome.why === outcome.state ? '' : `: ${outcome.why}`})${w.stopRequested ? ' after Tavern asked it to stop' : ''}`);
    }
    const reason: ExitReason = outcome.kind === 'lost' ? 'lost' : w.stopRequested || (outcome.state === 'complete' && (code ?? 0) === 0) ? 'exited' : 'crashed';
    await pump.end().catch((e: unknown) => this.#warn(`writing lobby ${info.lobbyId}'s last log lines`, e));
    (w.logs as { destroy?: () => void } | undefined)?.destroy?.();
    await this.#o.docker.getService(info.containerId).remove().catch((e: unknown) => {
      if (!isStatus(e, 404)) this.#warn(`removing lobby ${info.lobbyId}'s service`, e);
    });
    await this.#o.hosts.releaseLobbyHost(info.lobbyId).catch((e: unknown) => this.#warn(`releasing lobby ${info.lobbyId}`, e));
    this.#watched.delete(info.lobbyId);
    this.#placed.delete(info.lobbyId);
    this.#listener?.exited(info.namespaceId, info.lobbyId, reason, code);
  }

  #warn(message: string, error?: unknown): void {
    this.#o.log?.warn({ err: error }, message);
  }
}
