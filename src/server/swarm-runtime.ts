/**
 * The server's Swarm runtime, composed (`TAVERN_RUNTIME=swarm`): lobbies run as services on the
 * swarm a manager (`TAVERN_SWARM_HOST`) manages, reach Tavern's API at `TAVERN_LOBBY_API_ORIGIN`
 * (default the public origin: lobbies run on other machines), and their builds are pulled by the
 * nodes from the image registry the build images resolver gives. The manager's health and nodes
 * are checked every few seconds (`/health` lists the nodes per region; finds in a region without
 * a ready node are refused) and the reconciler runs on start and then periodically.
 */
import { connectDocker, engineAddress } from '../adapters/docker/engine.js';
import { SwarmNodes } from '../adapters/swarm/nodes.js';
import { SwarmRuntime, type SwarmImageResolver } from '../adapters/swarm/runtime.js';
import { STOP_GRACE_MS } from '../core/lobby/timers.js';
import { tailLogs } from '../services/cloud-lobbies.js';
import { lobbyEnv } from '../services/lobby-env.js';
import { createUpkeep, reconciler } from './upkeep.js';
import type { RuntimeDeps, RuntimeStatus, ServerRuntime } from './runtime.js';

const HEALTH_MS = 5_000;

/** Without an image registry (`TAVERN_REGISTRY`) no node can pull a build: a start says so. */
const NO_REGISTRY: SwarmImageResolver = {
  ensure: (imageId) => Promise.reject(new Error(`build ${imageId} is not in an image registry the swarm's nodes pull from: the Swarm runtime runs only builds pushed to one: set TAVERN_REGISTRY (docs/configuration.md, Image registry)`)),
};

/**
 * @example
 * const rt = swarmServerRuntime(deps, instanceId, registryImages);
 */
export function swarmServerRuntime(deps: RuntimeDeps, instanceId: string, images: SwarmImageResolver = NO_REGISTRY): ServerRuntime {
  const { env, logger } = deps;
  const where = engineAddress(env.swarmHost ?? env.dockerHost);
  const apiOrigin = env.lobbyApiOrigin ?? deps.publicOrigin;
  const placedListeners: (() => void)[] = [];
  const docker = connectDocker(env.swarmHost ?? env.dockerHost);
  const nodes = new SwarmNodes(docker);
  const runtime = new SwarmRuntime({
    docker, images, instanceId, hosts: deps.catalog, logs: deps.logBook,
    lastLogAt: async (lobbyId, stream) => (await tailLogs({ catalog: deps.catalog }, lobbyId, stream)).lines.at(-1)?.at,
    lobbyEnv: (lobby, origin) => lobbyEnv(lobby, { tokens: deps.tokens, catalog: deps.catalog, publicOrigin: origin }),
    apiOrigin,
    hardening: env.hardening,
    logLimits: { maxLineBytes: 4096, maxBytes: env.lobbyLogMaxBytes },
    stopGraceMs: STOP_GRACE_MS,
    clock: deps.clock,
    log: logger,
    placementChanged: () => {
      for (const listener of placedListeners) listener();
    },
  });
  let status: RuntimeStatus = { runtime: 'swarm', reachable: false, instance: instanceId };
  let matchmaker: Parameters<ServerRuntime['attach']>[0] | undefined;
  const upkeep = createUpkeep(logger);

  const reconcile = reconciler(runtime, deps.catalog, () => matchmaker, instanceId, logger);

  const check = async (): Promise<void> => {
    const was = status.reachable;
    const health = await runtime.health();
    status = { ...health, instance: instanceId };
    if (health.reachable && !was) {
      logger.info({ manager: where, version: health.version, lobbyApi: apiOrigin, instance: instanceId, regions: Object.keys(health.regions ?? {}) }, 'Swarm manager reachable: lobbies run as Swarm services');
      await reconcile();
    } else if (!health.reachable && (was || !upkeep.started)) {
      logger.warn({ manager: where, error: health.error }, 'the Swarm manager is not reachable: no lobby can start until it is; Tavern keeps checking');
    }
  };

  return {
    runtime,
    attach: (listener) => {
      runtime.attach(listener);
      matchmaker = listener;
    },
    status: () => status,
    lobbyAddress: (lobbyId) => runtime.addressOf(lobbyId),
    nodes: {
      list: () => nodes.list(),
      // A drain counts at once: the regions that accept lobbies are read again before the answer.
      setDrain: async (node, drained) => {
        const changed = await nodes.setDrain(node, drained);
        if (changed !== undefined) await check();
        return changed;
      },
    },
    placed: (listener) => {
      placedListeners.push(listener);
    },
    async run() {
      await check();
      upkeep.every(HEALTH_MS, check);
      upkeep.every(env.reconcileMs, reconcile);
    },
    close: () => {
      upkeep.stop();
      runtime.close();
    },
  };
}
