/**
 * Builds become local Docker images, the first time a lobby needs them: `tavern-build:<buildId>`,
 * loaded from the build's archive (`docker_image`: `docker save`, loaded; `oci_bundle`: config.json
 * + rootfs/, imported; either one LZ4-compressed or not) and then reused, across Tavern restarts
 * too, since the tag lives in the engine. Concurrent requests for one build share one load; a
 * build whose archive (or load) fails stays marked broken, so lobbies of it fail at once with the
 * same reason instead of reloading it again and again.
 */
import type Dockerode from 'dockerode';
import type { BuildArchive, BuildArchives } from '../../io/build-archives.js';
import { ArchiveError } from './archive-error.js';
import { archiveBytes, DEFAULT_MAX_EXPANDED_BYTES } from './archive-bytes.js';
import { loadDockerArchive } from './docker-archive.js';
import { EngineError } from './engine-upload.js';
import { importBundle } from './oci-bundle.js';

/** How the runtime reads a build's archive ({@link BuildArchives}; `StoredBuildArchives` reads Tavern's stores). */
export type BuildImageSource = BuildArchives;

/**
 * Why a build has no image: `missing` (no such build, or its upload never completed), `invalid`
 * (its archive is unusable), `engine` (the engine refused it, e.g. out of disk space), `registry`
 * (its push to `TAVERN_REGISTRY` failed, `registry-images.ts`) or `unavailable` (the engine or
 * the archive could not be reached, or the settings must change first: worth trying again later).
 */
export type BuildImageFailure = 'missing' | 'invalid' | 'engine' | 'registry' | 'unavailable';

/**
 * A build that cannot become an image; `message` is the reason, for the lobby's record and logs.
 *
 * @example
 * try { await images.ensure(buildId) } catch (e) { if (e instanceof BuildImageError) lobbyFailed(e.message) }
 */
export class BuildImageError extends Error {
  override readonly name = 'BuildImageError';

  constructor(message: string, readonly buildId: string, readonly failure: BuildImageFailure) {
    super(message);
  }

  /** Whether the build stays marked broken (every failure but `unavailable`). */
  get lasting(): boolean {
    return this.failure !== 'unavailable';
  }
}

/** Error codes of a machine or network that failed, rather than of a request it refused. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOENT', 'EACCES', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EIO', 'EMFILE', 'ABORT_ERR']);

/** Any error met while loading, as a {@link BuildImageError} that says what went wrong in the build's terms. */
const explain = (buildId: string, what: string, e: unknown): BuildImageError => {
  if (e instanceof BuildImageError) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof ArchiveError) return new BuildImageError(`the build's archive (${what}) cannot be used: ${message}`, buildId, 'invalid');
  const refusal = e instanceof EngineError ? message : (e as { json?: { message?: unknown } }).json?.message;
  const status = (e as { statusCode?: unknown }).statusCode;
  if (e instanceof EngineError || typeof status === 'number') {
    const said = typeof refusal === 'string' ? refusal : message;
    return /no space left on device/i.test(said)
      ? new BuildImageError(`the Docker Engine ran out of disk space while loading the build's image (${said})`, buildId, 'engine')
      : new BuildImageError(`the Docker Engine could not load the build's image (${what}): ${said}`, buildId, 'engine');
  }
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && UNREACHABLE.has(code)) return new BuildImageError(`the build's image could not be loaded, the Docker Engine or the archive is unreachable: ${message}`, buildId, 'unavailable');
  return new BuildImageError(`the build's image could not be loaded: ${message}`, buildId, 'engine');
};

/** Bytes read from a stream so far, for the log line. */
const counted = (source: AsyncIterable<Uint8Array>, count: { bytes: number }): AsyncIterable<Uint8Array> => ({
  async *[Symbol.asyncIterator]() {
    for await (const chunk of source) {
      count.bytes += chunk.byteLength;
      yield chunk;
    }
  },
});

/** Tags are `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`; build ids are UUIDs. */
const TAGGABLE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** @example { docker: new Dockerode(), source: new StoredBuildArchives({ catalog, uploads }), log: (id, line) => logger.info({ build: id }, line) } */
export interface BuildImagesDeps {
  readonly docker: Dockerode;
  readonly source: BuildImageSource;
  /** Progress and failures, one line at a time (loading, loaded in N s, broken: why). */
  readonly log?: (buildId: string, line: string) => void;
  /** The repository of the images' tags; `tavern-build` by default. */
  readonly repository?: string;
  /**
   * The most bytes an archive may expand to once decompressed (`TAVERN_BUILD_MAX_EXPANDED_BYTES`;
   * default {@link DEFAULT_MAX_EXPANDED_BYTES}): past it, the load stops and the build is broken.
   */
  readonly maxExpandedBytes?: number;
}

/**
 * @example
 * const images = new BuildImages({ docker, source: new StoredBuildArchives({ catalog, uploads }) });
 * const image = await images.ensure(buildId); // 'tavern-build:<buildId>', loaded on first use
 * await docker.createContainer({ Image: image, ... });
 */
export class BuildImages {
  readonly #docker: Dockerode;
  readonly #source: BuildImageSource;
  readonly #log: (buildId: string, line: string) => void;
  readonly #repository: string;
  readonly #maxExpandedBytes: number;
  readonly #loading = new Map<string, Promise<string>>();
  readonly #broken = new Map<string, BuildImageError>();

  constructor(deps: BuildImagesDeps) {
    this.#docker = deps.docker;
    this.#source = deps.source;
    this.#log = deps.log ?? ((): void => undefined);
    this.#repository = deps.repository ?? 'tavern-build';
    this.#maxExpandedBytes = deps.maxExpandedBytes ?? DEFAULT_MAX_EXPANDED_BYTES;
  }

  /** The image reference of a build (whether or not it is loaded). */
  reference(buildId: string): string {
    return `${this.#repository}:${buildId}`;
  }

  /**
   * The local image reference of a build, loading it on first use (an image already tagged in
   * the engine is used as it is). Concurrent calls for one build share one load. Rejects with a
   * {@link BuildImageError}; a lasting one marks the build broken until {@link forget}.
   */
  ensure(buildId: string): Promise<string> {
    const broken = this.#broken.get(buildId);
    if (broken !== undefined) return Promise.reject(broken);
    const pending = this.#loading.get(buildId);
    if (pending !== undefined) return pending;
    const load = this.#ensure(buildId).finally(() => this.#loading.delete(buildId));
    this.#loading.set(buildId, load);
    return load;
  }

  /** Clears a build's broken mark (e.g. once the operator freed disk space): the next `ensure` tries again. */
  forget(buildId: string): void {
    this.#broken.delete(buildId);
  }

  /** The builds marked broken, and why. */
  broken(): ReadonlyMap<string, BuildImageError> {
    return new Map(this.#broken);
  }

  async #ensure(buildId: string): Promise<string> {
    const ref = this.reference(buildId);
    let what = 'unknown kind';
    try {
      if (!TAGGABLE.test(buildId)) throw new BuildImageError(`'${buildId}' is not a build id`, buildId, 'missing');
      if (await this.#tagged(buildId, ref)) return ref;
      let archive: BuildArchive | undefined;
      try {
        archive = await this.#source.build(buildId);
      } catch (e) {
        throw new BuildImageError(`the build could not be looked up: ${e instanceof Error ? e.message : String(e)}`, buildId, 'unavailable');
      }
      if (archive === undefined) throw new BuildImageError('the build does not exist or its upload was never completed', buildId, 'missing');
      what = `${archive.kind}, compression ${archive.compression}`;
      await this.#load(buildId, ref, archive, what);
      return ref;
    } catch (e) {
      const error = explain(buildId, what, e);
      if (error.lasting) this.#broken.set(buildId, error);
      this.#log(buildId, `${error.lasting ? 'build marked broken' : 'build not loaded (will retry)'}: ${error.message}`);
      throw error;
    }
  }

  async #load(buildId: string, ref: string, archive: BuildArchive, what: string): Promise<void> {
    this.#log(buildId, `loading the build's image (${what}) as ${ref}`);
    const started = performance.now();
    const read = { bytes: 0 };
    const open = async (): Promise<AsyncIterable<Uint8Array>> => archiveBytes(counted(await archive.open(), read), archive.compression, this.#maxExpandedBytes);
    const id = archive.kind === 'docker_image'
      ? await loadDockerArchive(this.#docker, await open(), this.#maxExpandedBytes)
      : await importBundle(this.#docker, open, `Tavern build ${buildId}`);
    await this.#docker.getImage(id).tag({ repo: this.#repository, tag: buildId });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    this.#log(buildId, `loaded the build's image ${id.slice(0, 19)} as ${ref} in ${seconds} s (${(read.bytes / 1e6).toFixed(1)} MB read)`);
  }

  /** Whether the engine has the tag (a 404 is no; an engine that cannot say is `unavailable`, never the build's fault). */
  async #tagged(buildId: string, ref: string): Promise<boolean> {
    try {
      await this.#docker.getImage(ref).inspect();
      return true;
    } catch (e) {
      if ((e as { statusCode?: unknown }).statusCode === 404) return false;
      const message = e instanceof Error ? e.message : String(e);
      throw new BuildImageError(`the build's image could not be looked up, the Docker Engine is unreachable or failing: ${message}`, buildId, 'unavailable');
    }
  }
}
