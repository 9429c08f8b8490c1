/**
 * The container runtime on the Docker Engine API (through dockerode; never the `docker` CLI).
 * A lobby's container is created from its build's image with the lobby's environment, Tavern's
 * labels, its tier's limits and the hardening defaults, its ports published where clients reach
 * them, and its output streamed into the lobby's log. When it goes away (exit, crash, stop) it is
 * removed first and reported after, so its ports are given back only once they are free. A bridge
 * lobby joins the lobby network (Tavern's own, inter-container communication off); a host-network
 * lobby is never started unless the operator allowed host networking.
 */
import type Dockerode from 'dockerode';
import { HOST_NETWORK_REFUSED } from '../../core/config/host-network.js';
import type { NetworkMode } from '../../core/config/types.js';
import type { StartLobby, StopLobby } from '../../core/effects.js';
import type { ExitReason, RuntimeListener } from '../../io/index.js';
import type { BuildImageResolver } from '../../io/build-images.js';
import type { HostedContainer, HostedRuntime, RuntimeHealth } from '../../io/runtime.js';
import { containerSpec } from './container-spec.js';
import { containerName, DEFAULT_HARDENING, hostedOf, LABELS } from './lobby-spec.js';
import { describeEngineError, isStatus } from './engine-errors.js';
import { DEFAULT_LOBBY_NETWORK, ensureLobbyNetwork, type LobbyNetwork, type LobbyNetworkChoice } from './lobby-network.js';
import { DEFAULT_LOG_LIMITS, followLogs, LogPump } from './log-pump.js';
import { adoptHosted, type HostingOptions } from './runtime-options.js';

/** A build's image: `BuildImages` (this engine's) or `RegistryImages` (pushed, by digest). Its home is `io/build-images.ts`. */
export type { BuildImageResolver } from '../../io/build-images.js';

export interface DockerRuntimeOptions extends HostingOptions {
  readonly docker: Dockerode;
  readonly images: BuildImageResolver;
  /** The API origin a container reaches Tavern at, per network mode (`RIVET_API_ENDPOINT`). */
  readonly apiOrigin: Readonly<Record<NetworkMode, string>>;
  /** Where ports are published (default 127.0.0.1: nothing is exposed by accident). */
  readonly publishHost?: string;
  /** The network bridge lobbies join (default Tavern's own, `tavern-lobbies`, made when missing). */
  readonly network?: LobbyNetworkChoice;
  /**
   * Whether a host-network lobby may start (`TAVERN_DOCKER_ALLOW_HOST_NETWORK`; default false:
   * its start fails, saying why, whatever version asked for it).
   */
  readonly allowHostNetwork?: boolean;
  /**
   * Called each time the lobby network is made ready (first use, and again after it went away),
   * before any lobby joins it: the server opens its lobby listener at the gateway then.
   */
  readonly networkReady?: (network: LobbyNetwork) => Promise<void>;
  /** Extra /etc/hosts entries for bridge containers. */
  readonly extraHosts?: readonly string[];
}

interface Watched {
  readonly info: HostedContainer;
  readonly pump: LogPump;
  /** Set when Tavern asked it to stop: its exit is then an exit, whatever its code. */
  stopRequested: boolean;
  killTimer?: ReturnType<typeof setTimeout>;
}

const isTrue = (v: unknown): boolean => v === true;

/**
 * @example
 * const runtime = new DockerRuntime({ docker, images, instanceId, hosts: catalog, logs: logBook, apiOrigin, stopGraceMs: 30_000, clock });
 * runtime.attach(matchmaker);
 */
export class DockerRuntime implements HostedRuntime {
  readonly #o: DockerRuntimeOptions;
  readonly #watched = new Map<string, Watched>();
  readonly #starting = new Set<string>();
  #listener: RuntimeListener | undefined;
  #network: Promise<LobbyNetwork> | undefined;
  #health: RuntimeHealth = { runtime: 'docker', reachable: false };

  constructor(options: DockerRuntimeOptions) {
    this.#o = options;
  }

  attach(listener: RuntimeListener): void {
    this.#listener = listener;
  }

  /** Whether the engine answered the last health check. */
  available(): boolean {
    return this.#health.reachable;
  }

  /** Pings the engine (bounded) and remembers the answer for {@link available}. */
  async health(): Promise<RuntimeHealth> {
    try {
      const version = (await this.#o.docker.version()) as { Version?: string; ApiVersion?: string };
      this.#health = { runtime: 'docker', reachable: true, ...(version.Version === undefined ? {} : { version: version.Version }) };
    } catch (error) {
      this.#health = { runtime: 'docker', reachable: false, error: describeEngineError(error) };
    }
    return this.#health;
  }

  /**
   * The network bridge lobbies join, made ready once (created when it is Tavern's own and missing);
   * a failure is tried again on the next call.
   */
  lobbyNetwork(): Promise<LobbyNetwork> {
    this.#network ??= (async () => {
      const network = await ensureLobbyNetwork(this.#o.docker, this.#o.network ?? DEFAULT_LOBBY_NETWORK);
      await this.#o.networkReady?.(network);
      return network;
    })().catch((error: unknown) => {
      this.#network = undefined;
      throw error;
    });
    return this.#network;
  }

  starting(lobbyId: string): boolean {
    return this.#starting.has(lobbyId);
  }

  /** Lobby ids whose containers this runtime is watching now. */
  watching(): readonly string[] {
    return [...this.#watched.keys()];
  }

  async start(lobby: StartLobby): Promise<void> {
    if (this.#watched.has(lobby.lobbyId) || this.#starting.has(lobby.lobbyId)) return;
    // Whatever let it through (a version published before, a record written to the store).
    if (lobby.networkMode === 'host' && this.#o.allowHostNetwork !== true) throw new Error(HOST_NETWORK_REFUSED);
    this.#starting.add(lobby.lobbyId);
    let claimed = false;
    let container: Dockerode.Container | undefined;
    try {
      const claim = await this.#o.hosts.claimLobbyHost({ lobbyId: lobby.lobbyId, namespaceId: lobby.namespaceId, instanceId: this.#o.instanceId, createdAt: this.#o.clock.now() });
      if (!claim.ok) throw new Error('this lobby is already hosted (another Tavern instance, or an earlier start)');
      claimed = true;
      if (lobby.imageId === undefined) throw new Error("the version's container has no image_id (build)");
      container = await this.#launch(lobby, await this.#o.images.ensure(lobby.imageId));
      await this.#watch({ lobbyId: lobby.lobbyId, namespaceId: lobby.namespaceId, versionId: lobby.versionId, containerId: container.id, running: true }, 0);
    } catch (error) {
      if (container !== undefined) await container.remove({ force: true, v: true }).catch((e: unknown) => this.#warn(`removing the failed container of lobby ${lobby.lobbyId}`, e));
      if (claimed) await this.#o.hosts.releaseLobbyHost(lobby.lobbyId).catch((e: unknown) => this.#warn(`releasing lobby ${lobby.lobbyId}`, e));
      throw new Error(describeEngineError(error), { cause: error });
    } finally {
      this.#starting.delete(lobby.lobbyId);
    }
  }

  /**
   * Creates and starts the lobby's container on its network, with the API origin it reaches Tavern
   * at (a container that fails to start is removed). A network that went away since it was made
   * ready (`docker network prune` removes Tavern's while no lobby runs) is made ready again, once.
   */
  async #launch(lobby: StartLobby, image: string): Promise<Dockerode.Container> {
    const once = async (): Promise<Dockerode.Container> => {
      const network = lobby.networkMode === 'host' ? 'host' : (await this.lobbyNetwork()).id;
      const origin = this.#o.apiOrigin[lobby.networkMode];
      const env = { ...lobby.env, ...(await this.#o.lobbyEnv?.(lobby, origin)), RIVET_API_ENDPOINT: origin };
      const container = await this.#o.docker.createContainer(containerSpec({ ...lobby, env }, {
        image,
        instanceId: this.#o.instanceId,
        publishHost: this.#o.publishHost ?? '127.0.0.1',
        network,
        hardening: this.#o.hardening ?? DEFAULT_HARDENING,
        ...(this.#o.extraHosts === undefined ? {} : { extraHosts: this.#o.extraHosts }),
      }));
      try {
        await container.start();
        return container;
      } catch (error) {
        await container.remove({ force: true, v: true }).catch((e: unknown) => this.#warn(`removing the failed container of lobby ${lobby.lobbyId}`, e));
        throw error;
      }
    };
    try {
      return await once();
    } catch (error) {
      if (lobby.networkMode === 'host' || !isStatus(error, 404) || !/network/i.test(describeEngineError(error))) throw error;
      this.#network = undefined;
      return once();
    }
  }

  async stop(stop: StopLobby): Promise<void> {
    const watched = this.#watched.get(stop.lobbyId);
    if (watched !== undefined) watched.stopRequested = true;
    const container = this.#o.docker.getContainer(containerName(stop.lobbyId));
    try {
      if (stop.force) {
        await container.kill({ signal: 'SIGKILL' });
        return;
      }
      await container.kill({ signal: 'SIGTERM' });
      if (watched !== undefined && watched.killTimer === undefined) {
        watched.killTimer = setTimeout(() => void container.kill({ signal: 'SIGKILL' }).catch(() => undefined), this.#o.stopGraceMs);
        watched.killTimer.unref();
      }
    } catch (error) {
      // Already gone or not running: its exit is (or was) reported by its watcher or the reconciler.
      if (isStatus(error, 404) || isStatus(error, 409)) return;
      throw new Error(describeEngineError(error), { cause: error });
    }
  }

  /** This instance's containers (by label), running or not. */
  async inventory(): Promise<readonly HostedContainer[]> {
    const list = await this.#o.docker.listContainers({ all: true, filters: { label: [`${LABELS.instance}=${this.#o.instanceId}`] } });
    return list.flatMap((c) => hostedOf(c.Labels, c.Id, c.State === 'running'));
  }

  /** Watches a container of this instance again (after a restart): its logs from where they stopped, and its exit. */
  async adopt(c: HostedContainer): Promise<void> {
    await adoptHosted(c, this.#o, this.#watched.has(c.lobbyId), (since) => this.#watch(c, since));
  }

  /** Removes a container no lobby needs (an orphan). */
  async discard(c: HostedContainer): Promise<void> {
    await this.#o.docker.getContainer(c.containerId).remove({ force: true, v: true }).catch((error: unknown) => {
      if (!isStatus(error, 404)) throw error;
    });
  }

  async #watch(info: HostedContainer, sinceSeconds: number): Promise<void> {
    const container = this.#o.docker.getContainer(info.containerId);
    const pump = new LogPump(info.lobbyId, this.#o.logs, this.#o.logLimits ?? DEFAULT_LOG_LIMITS, () => this.#o.clock.now());
    const watched: Watched = { info, pump, stopRequested: false };
    this.#watched.set(info.lobbyId, watched);
    const logs = await container.logs({ follow: true, stdout: true, stderr: true, timestamps: true, since: sinceSeconds }).catch((error: unknown) => {
      this.#watched.delete(info.lobbyId);
      throw error;
    });
    const ended = followLogs(this.#o.docker.modem, logs, pump);
    container.wait().then(
      (result: { StatusCode?: number }) => this.#exited(watched, container, result.StatusCode ?? -1, ended),
      (error: unknown) => {
        // The engine went away (restart, socket lost): the reconciler adopts the container again.
        this.#watched.delete(info.lobbyId);
        if (watched.killTimer !== undefined) clearTimeout(watched.killTimer);
        this.#warn(`lost the watch on lobby ${info.lobbyId}'s container`, error);
        (logs as { destroy?: () => void }).destroy?.();
      },
    );
  }

  async #exited(watched: Watched, container: Dockerode.Container, code: number, logsEnded: Promise<void>): Promise<void> {
    const { info, pump } = watched;
    if (watched.killTimer !== undefined) clearTimeout(watched.killTimer);
    // The log stream ends once the container has; bounded, so a stuck stream never holds the exit.
    await Promise.race([logsEnded, new Promise((r) => setTimeout(r, 2_000).unref())]);
    const state = await container.inspect().then((i) => i.State, () => undefined);
    const oom = isTrue(state?.OOMKilled);
    const reason: ExitReason = watched.stopRequested || (code === 0 && !oom) ? 'exited' : 'crashed';
    pump.note(oom
      ? `the container was killed for using more memory than its tier allows (exit code ${code})`
      : `the container exited with code ${code}${watched.stopRequested ? ' after Tavern asked it to stop' : ''}`);
    await pump.end().catch((e: unknown) => this.#warn(`writing lobby ${info.lobbyId}'s last log lines`, e));
    await container.remove({ force: true, v: true }).catch((e: unknown) => {
      if (!isStatus(e, 404)) this.#warn(`removing lobby ${info.lobbyId}'s container`, e);
    });
    await this.#o.hosts.releaseLobbyHost(info.lobbyId).catch((e: unknown) => this.#warn(`releasing lobby ${info.lobbyId}`, e));
    this.#watched.delete(info.lobbyId);
    // The engine gives no code (-1 here) when it lost track of the container.
    this.#listener?.exited(info.namespaceId, info.lobbyId, reason, code >= 0 ? code : undefined);
  }

  #warn(message: string, error?: unknown): void {
    this.#o.log?.warn({ err: error }, message);
  }
}
