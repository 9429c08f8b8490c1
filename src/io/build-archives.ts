/**
 * A build's uploaded archive, as the container runtime reads it to make the build's image: what
 * it is (`kind`, `compression`, as `createGameBuild` recorded them) and a way to read its bytes.
 */

/**
 * One build's archive. `open` may be called more than once (an OCI bundle whose config.json comes
 * after its rootfs is read twice); each call streams the file from its start.
 *
 * @example
 * const archive = await archives.build(buildId);
 * if (archive) for await (const chunk of await archive.open()) hash.update(chunk);
 */
export interface BuildArchive {
  /** A `docker save` archive, or an OCI bundle (a tar of config.json and rootfs/). */
  readonly kind: 'docker_image' | 'oci_bundle';
  /** `lz4`: LZ4 frame format. */
  readonly compression: 'none' | 'lz4';
  open(): Promise<AsyncIterable<Uint8Array>>;
}

/**
 * Where builds' archives are read from.
 *
 * @example
 * const archive = await archives.build(buildId); // undefined: no such build, or its upload never completed
 */
export interface BuildArchives {
  build(buildId: string): Promise<BuildArchive | undefined>;
}
