/**
 * The server's container runtime, composed: Docker (chosen, or found at its socket), Swarm
 * (swarm-runtime.ts), the fake, or none. For Docker it keeps the engine's health fresh (lobbies start only while it answers), makes
 * the lobbies' network ready (Tavern's `tavern-lobbies`, inter-container communication off, or the
 * operator's `TAVERN_DOCKER_NETWORK`), gives bridge containers an API address they can reach (a
 * listener of the lobby endpoints only at that network's gateway), and runs the reconciler on
 * start and then periodically.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { connectDocker, detectUserlandProxy, engineAddress, type UserlandProxy } from '../adapters/docker/engine.js';
import { DEFAULT_LOBBY_NETWORK, type LobbyNetwork, type LobbyNetworkChoice } from '../adapters/docker/lobby-network.js';
import { DockerRuntime } from '../adapters/docker/runtime.js';
import type { SwarmImageResolver } from '../adapters/swarm/runtime.js';
import { FakeRuntime } from '../adapters/fake/runtime.js';
import { STOP_GRACE_MS } from '../core/lobby/timers.js';
import type { CatalogStore } from '../io/catalog.js';
import type { Clock, Runtime, RuntimeListener, Timers } from '../io/index.js';
import type { Logger } from '../io/log.js';
import type { ClusterNodes, RuntimeHealth } from '../io/runtime.js';
import { createStream, sample } from '../core/distribution.js';
import { tailLogs } from '../services/cloud-lobbies.js';
import type { LogBook } from '../services/lobby-logs.js';
import type { Matchmaker } from '../services/matchmaker.js';
import type { Uploads } from '../services/uploads.js';
import { serverImages } from './build-images.js';
import type { ServerEnv } from './env.js';
import { lobbyEnv, withLobbyEnv } from '../services/lobby-env.js';
import type { TokenIssuer } from '../services/tokens.js';
import { swarmServerRuntime } from './swarm-runtime.js';
import { createUpkeep, reconciler } from './upkeep.js';

export interface RuntimeDeps {
  readonly env: ServerEnv;
  readonly catalog: CatalogStore;
  readonly tokens: TokenIssuer;
  readonly logBook: LogBook;
  readonly uploads: Pick<Uploads, 'openFile'>;
  readonly clock: Clock;
  /** Timers of the fake runtime's ready delays. */
  readonly timers: Timers;
  readonly logger: Logger;
  /** The port the API listens on. */
  readonly port: number;
  readonly publicOrigin: string;
  /**
   * Opens the lobbies' listener of the API on `host` (the lobby network's gateway): the lobby
   * endpoints only, on `port` (0: any free port); resolves with the port it listens on.
   */
  readonly listenAlso: (host: string, port: number) => Promise<number>;
  /** Makes the API's public listener refuse connections from this subnet (the lobbies', when it listens on every address). */
  readonly refuseFrom: (subnet: string) => void;
  /** Where the Swarm runtime's nodes pull builds from; absent: `TAVERN_REGISTRY`'s pushed builds, or, without it, a start says no build is in a registry. */
  readonly swarmImages?: SwarmImageResolver;
}

/** What `/health` says of the runtime. */
export interface RuntimeStatus extends RuntimeHealth {
  readonly userland_proxy?: UserlandProxy;
  readonly instance?: string;
}

export interface ServerRuntime {
  /** What the matchmaker starts lobbies with (undefined: none). */
  readonly runtime?: Runtime;
  attach(listener: RuntimeListener & Pick<Matchmaker, 'lobbyReady' | 'snapshot' | 'lobbyExited'>): void;
  status(): RuntimeStatus;
  /** Where a lobby's TCP and UDP ports answer, when the runtime places lobbies on several hosts (Swarm). */
  lobbyAddress?(lobbyId: string): string | undefined;
  /** The runtime's nodes for the operator (Swarm): listed, drained, undrained. */
  readonly nodes?: ClusterNodes;
  /** Calls `listener` whenever {@link lobbyAddress} may answer differently (a lobby placed, adopted or gone; a node's address changed). */
  placed?(listener: () => void): void;
  /** Starts the health checks and the reconciler (after the matchmaker is attached). */
  run(): Promise<void>;
  close(): void;
}

const HEALTH_MS = 5_000;

const isLoopback = (host: string): boolean => host === 'localhost' || host.startsWith('127.') || host === '::1';
const isWildcard = (host: string): boolean => host === '0.0.0.0' || host === '::';
const hostPart = (host: string): string => (isIP(host) === 6 ? `[${host}]` : host);

/** `TAVERN_INSTANCE_ID`, or an id kept in the data dir (made once). */
const instanceIdOf = async (env: ServerEnv): Promise<string> => {
  if (env.instanceId !== undefined) return env.instanceId;
  const file = join(env.dataDir, 'instance-id');
  const kept = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (kept !== '') return kept;
  const id = randomUUID();
  await mkdir(env.dataDir, { recursive: true });
  await writeFile(file, `${id}\n`, { flag: 'wx' }).catch(() => undefined);
  return (await readFile(file, 'utf8')).trim();
};

/**
 * @example
 * const rt = await createServerRuntime({ env, catalog, tokens, logBook, uploads, clock, logger, port, publicOrigin, listenAlso });
 * const matchmaker = new Matchmaker({ ..., ...(rt.runtime ? { runtime: rt.runtime } : {}) });
 * rt.attach(matchmaker); await rt.run();
 */
export async function createServerRuntime(deps: RuntimeDeps): Promise<ServerRuntime> {
  const { env } = deps;
  if (env.runtime === 'none') return { attach: () => undefined, status: () => ({ runtime: 'none', reachable: false }), run: () => Promise.resolve(), close: () => undefined };
  if (env.runtime === 'fake') {
    const { readyDelayMs, seed, lobbyDir } = env.fake;
    const stream = createStream(seed);
    const readyAfterMs = readyDelayMs === undefined ? 0 : () => Math.max(0, Math.round(sample(readyDelayMs, stream)));
    // Nothing runs: a stopped lobby's container is gone at once (the lobby is stopped, not left stopping).
    const fake = new FakeRuntime({ readyAfterMs, timers: deps.timers, logs: deps.logBook, clock: deps.clock, exitAfterStopMs: 0 });
    if (lobbyDir !== undefined) await mkdir(lobbyDir, { recursive: true });
    // What a container would be given, where a test standing in for the game server reads it.
    const inner: Runtime = lobbyDir === undefined ? fake : {
      start: async (lobby) => {
        await writeFile(join(lobbyDir, `${lobby.lobbyId}.json`), JSON.stringify(lobby.env), { mode: 0o600 });
        return fake.start(lobby);
      },
      stop: (stop) => fake.stop(stop),
    };
    return {
      runtime: withLobbyEnv(inner, { tokens: deps.tokens, catalog: deps.catalog, publicOrigin: deps.publicOrigin }),
      attach: (listener) => fake.attach(listener),
      status: () => ({ runtime: 'fake', reachable: true }),
      run: () => Promise.resolve(),
      close: () => undefined,
    };
  }
  if (env.runtime === 'swarm') {
    // With TAVERN_REGISTRY, each build is loaded into the manager's engine, pushed, and run by its digest, which every node pulls.
    const pushed = env.registry === undefined ? undefined : serverImages({ env, docker: connectDocker(env.swarmHost ?? env.dockerHost), catalog: deps.catalog, uploads: deps.uploads, logger: deps.logger, runsHere: false });
    return swarmServerRuntime(deps, await instanceIdOf(env), deps.swarmImages ?? pushed);
  }
  return dockerRuntime(deps, await instanceIdOf(env));
}

function dockerRuntime(deps: RuntimeDeps, instanceId: string): ServerRuntime {
  const { env, logger, port } = deps;
  const docker = connectDocker(env.dockerHost);
  const where = engineAddress(env.dockerHost);
  // With TAVERN_REGISTRY, lobbies run each build by its digest there (pushed once loaded here).
  const images = serverImages({ env, docker, catalog: deps.catalog, uploads: deps.uploads, logger, runsHere: true });
  // Host-network containers share the host's loopback; bridge ones reach the host at the lobby
  // network's gateway, where Tavern opens a listener of the lobby endpoints: on the API's port when
  // the API listens on loopback, on a port of its own when the API listens on every address (whose
  // listener then refuses connections from the lobbies' subnet, so the whole API never answers them).
  const own = isWildcard(env.host) || isLoopback(env.host) ? '127.0.0.1' : env.host;
  const apiOrigin = { bridge: `http://${hostPart(own)}:${port}`, host: `http://${hostPart(own)}:${port}` };
  if (env.lobbyApiOrigin !== undefined) Object.assign(apiOrigin, { bridge: env.lobbyApiOrigin, host: env.lobbyApiOrigin });
  const network: LobbyNetworkChoice = env.dockerNetwork === undefined ? DEFAULT_LOBBY_NETWORK : { name: env.dockerNetwork, create: false };
  const atGateway = env.lobbyApiOrigin === undefined && (isLoopback(env.host) || isWildcard(env.host));
  let listening: string | undefined;
  /** The lobbies' network made ready (again): the lobby listener at its gateway, and what the log says of it. */
  const networkReady = async (ready: LobbyNetwork): Promise<void> => {
    if (atGateway && ready.gateway !== listening) {
      const lobbyPort = await deps.listenAlso(ready.gateway, isLoopback(env.host) ? port : 0);
      if (isWildcard(env.host)) {
        if (ready.subnet === undefined) throw new Error(`the Docker network ${ready.name} names no IPv4 subnet: with TAVERN_HOST=${env.host} its lobbies could reach the whole API`);
        deps.refuseFrom(ready.subnet);
      }
      listening = ready.gateway;
      apiOrigin.bridge = `http://${hostPart(ready.gateway)}:${lobbyPort}`;
    }
    logger.info({ network: ready.name, id: ready.id.slice(0, 12), gateway: ready.gateway, created: ready.created, interContainer: ready.interContainer, lobbyApi: apiOrigin.bridge }, 'lobbies join this Docker network');
    if (ready.interContainer) logger.warn({ network: ready.name }, `lobbies on ${ready.name} can reach each other's containers directly (inter-container communication is on): create the network with -o com.docker.network.bridge.enable_icc=false, or unset TAVERN_DOCKER_NETWORK to use Tavern's own`);
  };
  const runtime = new DockerRuntime({
    docker, images, instanceId, hosts: deps.catalog, logs: deps.logBook,
    lastLogAt: async (lobbyId, stream) => (await tailLogs({ catalog: deps.catalog }, lobbyId, stream)).lines.at(-1)?.at,
    lobbyEnv: (lobby, origin) => lobbyEnv(lobby, { tokens: deps.tokens, catalog: deps.catalog, publicOrigin: origin }),
    apiOrigin,
    publishHost: env.publishHost,
    hardening: env.hardening,
    network,
    allowHostNetwork: env.allowHostNetwork,
    networkReady,
    logLimits: { maxLineBytes: 4096, maxBytes: env.lobbyLogMaxBytes },
    stopGraceMs: STOP_GRACE_MS,
    clock: deps.clock,
    log: logger,
  });
  let status: RuntimeStatus = { runtime: 'docker', reachable: false, instance: instanceId };
  let networkDone = false;
  let matchmaker: Pick<Matchmaker, 'snapshot' | 'lobbyExited'> | undefined;
  const upkeep = createUpkeep(logger);

  const reconcile = reconciler(runtime, deps.catalog, () => matchmaker, instanceId, logger);

  /** The lobbies' network, made ready on the first checks (lobbies made it ready again when it went away); tried on each check until it is. */
  const prepareNetwork = async (): Promise<void> => {
    networkDone = await runtime.lobbyNetwork().then(
      () => true,
      (error: unknown) => {
        logger.error({ err: error, network: network.name }, "the lobbies' Docker network is not ready: no bridge lobby can start until it is; Tavern keeps trying");
        return false;
      },
    );
  };

  const check = async (): Promise<void> => {
    const was = status.reachable;
    const health = await runtime.health();
    if (health.reachable && !was) {
      const userland = await detectUserlandProxy(env.dockerHost);
      status = { ...health, instance: instanceId, userland_proxy: userland };
      if (!networkDone) await prepareNetwork();
      logger.info({ engine: where, version: health.version, userlandProxy: userland, lobbyApi: apiOrigin, instance: instanceId }, 'Docker engine reachable: lobbies run as containers');
      if (userland === 'on') logger.warn({}, 'dockerd publishes ports through its userland proxy (docker-proxy), which halves UDP and TCP round trips: start dockerd with --userland-proxy=false');
      if (env.allowHostNetwork) logger.warn({}, "host networking is allowed (TAVERN_DOCKER_ALLOW_HOST_NETWORK=true): a host-network lobby shares the host's network, and every service on its loopback answers it");
      await reconcile();
    } else if (!health.reachable) {
      status = { ...health, instance: instanceId };
      if (was || !upkeep.started) {
        logger.warn({ engine: where, error: health.error }, 'Docker is not reachable: no lobby can start until it is (finds that need a new lobby answer 503 MATCHMAKER_RUNTIME_UNAVAILABLE); Tavern keeps checking');
      }
    } else {
      status = { ...status, ...health };
      if (!networkDone) await prepareNetwork();
    }
  };

  return {
    runtime,
    attach: (listener) => {
      runtime.attach(listener);
      matchmaker = listener;
    },
    status: () => status,
    async run() {
      await check();
      upkeep.every(HEALTH_MS, check);
      upkeep.every(env.reconcileMs, reconcile);
    },
    close: () => {
      upkeep.stop();
    },
  };
}
