/**
 * The images the server's lobbies run, composed once for any runtime that drives a Docker Engine
 * API (the Docker runtime; a cluster's, against its manager): each build loaded from Tavern's own
 * stores into that engine (`BuildImages`) and, with `TAVERN_REGISTRY`, pushed and run by its
 * digest there (`RegistryImages`), which is what lets other nodes pull it.
 */
import type Dockerode from 'dockerode';
import { BuildImages } from '../adapters/docker/images.js';
import { RegistryImages } from '../adapters/docker/registry-images.js';
import type { BuildImageResolver } from '../io/build-images.js';
import type { CatalogStore } from '../io/catalog.js';
import type { Logger } from '../io/log.js';
import { StoredBuildArchives } from '../services/build-archives.js';
import type { Uploads } from '../services/uploads.js';
import type { ServerEnv } from './env.js';

export interface ServerImagesDeps {
  readonly env: Pick<ServerEnv, 'buildMaxExpandedBytes' | 'registry'>;
  /** The engine builds are loaded into (and pushed from). */
  readonly docker: Dockerode;
  readonly catalog: CatalogStore;
  readonly uploads: Pick<Uploads, 'openFile'>;
  readonly logger: Pick<Logger, 'info'>;
  /**
   * Lobbies run on `docker` itself (the Docker runtime): a recorded image it lacks is pulled first.
   * False for a cluster, whose nodes pull.
   */
  readonly runsHere: boolean;
}

/**
 * @example
 * const images = serverImages({ env, docker, catalog, uploads, logger, runsHere: true });
 * await images.ensure(lobby.imageId); // 'tavern-build:<id>', or '<registry>/…/tavern-build@sha256:…' with TAVERN_REGISTRY
 */
export function serverImages(deps: ServerImagesDeps): BuildImageResolver {
  const { env, docker, logger } = deps;
  const log = (buildId: string, line: string): void => logger.info({ build: buildId }, line);
  const loaded = new BuildImages({
    docker,
    source: new StoredBuildArchives({ catalog: deps.catalog, uploads: deps.uploads }),
    log,
    maxExpandedBytes: env.buildMaxExpandedBytes,
  });
  if (env.registry === undefined) return loaded;
  return new RegistryImages({ docker, local: loaded, registry: env.registry, builds: deps.catalog, log, runsHere: deps.runsHere });
}
