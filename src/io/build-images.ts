/**
 * The image a lobby of a build runs, as a container runtime asks for it. On one Docker Engine it
 * is the build loaded into that engine (`tavern-build:<build id>`, `adapters/docker/images.ts`);
 * with a registry (`TAVERN_REGISTRY`) it is the build pushed there, by digest
 * (`registry.example:5000/games/tavern-build@sha256:…`, `adapters/docker/registry-images.ts`),
 * which any node of a cluster pulls. A runtime takes one of these and never needs to know which;
 * the server composes it once (`serverImages` in `server/build-images.ts`) and hands it down.
 */

/**
 * @example
 * const image = await images.ensure(lobby.imageId); // then create the container or service from `image`
 */
export interface BuildImageResolver {
  /**
   * The image reference lobbies of the build start from, made ready on first use (loaded, pushed);
   * rejects with the reason in words when the build cannot become one (a `BuildImageError`).
   */
  ensure(buildId: string): Promise<string>;
}
