/**
 * Builds through the operator's registry (`TAVERN_REGISTRY`): a build, once loaded into this
 * engine (`BuildImages`), is tagged `<registry>/<prefix>/tavern-build:<build id>` and pushed; its
 * digest is recorded on the build (`recordBuildImage`), and lobbies run it as
 * `<registry>/<prefix>/tavern-build@sha256:…`, which any node pulls, so a Swarm (or any cluster)
 * runs exactly the bytes uploaded. A build whose image is recorded is never loaded or pushed again
 * (across restarts and instances); concurrent requests for one build share one push; a push that
 * fails marks the build broken with the registry's reason, as a broken archive does.
 */
import type Dockerode from 'dockerode';
import type { BuildImageResolver } from '../../io/build-images.js';
import type { CatalogStore } from '../../io/catalog.js';
import { readReply } from './engine-upload.js';
import { BuildImageError } from './images.js';
import { readPushReply } from './push-reply.js';
import { pushesInPlain } from './registry-transport.js';

/** Where builds are pushed (`TAVERN_REGISTRY`, `TAVERN_REGISTRY_INSECURE`, `TAVERN_REGISTRY_USERNAME`/`_PASSWORD`). */
export interface RegistryTarget {
  /** `host[:port]`, as the engines name it: `registry.example:5000`, `127.0.0.1:5000`. */
  readonly address: string;
  /** Repository path under it (`games/tavern`), or none. */
  readonly prefix?: string;
  /** Plain HTTP is allowed (the engines must list the registry as insecure); otherwise it must be HTTPS. */
  readonly insecure: boolean;
  readonly auth?: { readonly username: string; readonly password: string };
}

/** @example { docker, local: new BuildImages({ docker, source }), registry: { address: '127.0.0.1:5000', insecure: true }, builds: catalog } */
export interface RegistryImagesDeps {
  readonly docker: Dockerode;
  /** Loads a build into this engine (`BuildImages`): what is pushed. */
  readonly local: BuildImageResolver;
  readonly registry: RegistryTarget;
  readonly builds: Pick<CatalogStore, 'getBuild' | 'recordBuildImage'>;
  /** Pushing, pushed in N s, broken: why. */
  readonly log?: (buildId: string, line: string) => void;
  /** The images' repository under the prefix; `tavern-build` by default. */
  readonly repository?: string;
  /** A push that takes longer is abandoned (and the build marked broken); default 30 minutes. */
  readonly pushTimeoutMs?: number;
  /**
   * Whether lobbies run on this same engine (the Docker runtime): then a recorded image the engine
   * lacks (another instance pushed it, or it was pruned) is pulled before it is handed out, since
   * creating a container never pulls. A cluster's nodes pull for themselves: leave it false.
   */
  readonly runsHere?: boolean;
}

/** Error codes of an engine Tavern could not reach (not the registry's fault: tried again later). */
const ENGINE_UNREACHABLE = new Set(['ECONNREFUSED', 'ENOENT', 'EACCES', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * @example
 * const images = new RegistryImages({ docker, local: new BuildImages({ docker, source }), registry, builds: catalog });
 * await images.ensure(buildId); // '127.0.0.1:5000/tavern-build@sha256:…', pushed on first use
 */
export class RegistryImages implements BuildImageResolver {
  readonly #o: RegistryImagesDeps;
  readonly #log: (buildId: string, line: string) => void;
  readonly #repo: string;
  readonly #pending = new Map<string, Promise<string>>();
  readonly #broken = new Map<string, BuildImageError>();
  #transportChecked = false;

  constructor(deps: RegistryImagesDeps) {
    this.#o = deps;
    this.#log = deps.log ?? ((): void => undefined);
    const { address, prefix } = deps.registry;
    this.#repo = `${address}/${prefix === undefined || prefix === '' ? '' : `${prefix}/`}${deps.repository ?? 'tavern-build'}`;
  }

  /** The repository builds are pushed to: `127.0.0.1:5000/games/tavern-build`. */
  get repository(): string {
    return this.#repo;
  }

  /**
   * The build's image in the registry, by digest: the recorded one, else loaded (by `local`),
   * pushed and recorded now. Concurrent calls for one build share one push. Rejects with a
   * {@link BuildImageError}; a lasting one marks the build broken until {@link forget}.
   */
  ensure(buildId: string): Promise<string> {
    const broken = this.#broken.get(buildId);
    if (broken !== undefined) return Promise.reject(broken);
    const pending = this.#pending.get(buildId);
    if (pending !== undefined) return pending;
    const work = this.#ensure(buildId).finally(() => this.#pending.delete(buildId));
    this.#pending.set(buildId, work);
    return work;
  }

  /** Clears a build's broken mark (e.g. once the registry is back): the next `ensure` pushes again. */
  forget(buildId: string): void {
    this.#broken.delete(buildId);
  }

  /** The builds whose push failed, and why. */
  broken(): ReadonlyMap<string, BuildImageError> {
    return new Map(this.#broken);
  }

  async #ensure(buildId: string): Promise<string> {
    let recorded: string | undefined;
    try {
      recorded = (await this.#o.builds.getBuild(buildId))?.image;
    } catch (e) {
      throw new BuildImageError(`the build could not be looked up: ${messageOf(e)}`, buildId, 'unavailable');
    }
    if (recorded !== undefined) return this.#o.runsHere === true ? this.#present(buildId, recorded) : recorded;
    const local = await this.#o.local.ensure(buildId); // its failures are marked and logged there
    try {
      return await this.#publish(buildId, local);
    } catch (e) {
      const error = e instanceof BuildImageError ? e : this.#explain(buildId, e);
      if (error.lasting) this.#broken.set(buildId, error);
      this.#log(buildId, `${error.lasting ? 'build marked broken' : 'build not pushed (will retry)'}: ${error.message}`);
      throw error;
    }
  }

  /**
   * `image`, pulled into this engine first if it lacks it. A failed pull is not the build's fault
   * (it was pushed whole): the lobby fails with the reason, and the next one tries again.
   */
  async #present(buildId: string, image: string): Promise<string> {
    const { docker, registry } = this.#o;
    try {
      const has = await docker.getImage(image).inspect().then(() => true, (e: unknown) => {
        if ((e as { statusCode?: unknown }).statusCode === 404) return false;
        throw e;
      });
      if (has) return image;
      this.#log(buildId, `pulling the build's image ${image}`);
      const authconfig = registry.auth === undefined ? {} : { ...registry.auth, serveraddress: registry.address };
      const reply = await readReply(await docker.pull(image, { authconfig }) as AsyncIterable<Buffer>);
      if (reply.error !== undefined) throw new Error(reply.error);
    } catch (e) {
      throw new BuildImageError(`the build's image ${image} could not be pulled from the registry ${registry.address}: ${messageOf(e)}`, buildId, 'unavailable');
    }
    return image;
  }

  /** Tags `local` in the registry's repository, pushes it, records its digest; the reference lobbies use. */
  async #publish(buildId: string, local: string): Promise<string> {
    await this.#checkTransport(buildId);
    const { docker, registry } = this.#o;
    this.#log(buildId, `pushing the build's image to ${this.#repo}:${buildId}`);
    const started = performance.now();
    await docker.getImage(local).tag({ repo: this.#repo, tag: buildId });
    const authconfig = registry.auth === undefined ? {} : { ...registry.auth, serveraddress: registry.address };
    const signal = AbortSignal.timeout(this.#o.pushTimeoutMs ?? 30 * 60_000);
    const reply = await readPushReply(await docker.getImage(this.#repo).push({ tag: buildId, authconfig, abortSignal: signal }));
    if (reply.error !== undefined) throw new BuildImageError(`the build's image could not be pushed to the registry ${registry.address}: ${reply.error}`, buildId, 'registry');
    if (reply.digest === undefined) throw new BuildImageError(`the registry ${registry.address} took the build's image but the push reported no digest`, buildId, 'registry');
    const pinned = `${this.#repo}@${reply.digest}`;
    this.#log(buildId, `pushed the build's image as ${pinned} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    let stored;
    try {
      stored = await this.#o.builds.recordBuildImage(buildId, pinned);
    } catch (e) {
      throw new BuildImageError(`the build's image was pushed (${pinned}) but could not be recorded: ${messageOf(e)}`, buildId, 'unavailable');
    }
    return stored?.image ?? pinned;
  }

  /**
   * Refuses (until the settings change) a push the engine would make over plain HTTP unless
   * `TAVERN_REGISTRY_INSECURE` allows it, and a registry marked insecure the engine would insist on
   * HTTPS with. Checked once, when it first passes.
   */
  async #checkTransport(buildId: string): Promise<void> {
    if (this.#transportChecked) return;
    const { address, insecure } = this.#o.registry;
    let plain: boolean;
    try {
      plain = await pushesInPlain((await this.#o.docker.info() as { RegistryConfig?: Parameters<typeof pushesInPlain>[0] }).RegistryConfig, address);
    } catch (e) {
      throw new BuildImageError(`the Docker Engine could not be asked how it reaches the registry ${address}: ${messageOf(e)}`, buildId, 'unavailable');
    }
    if (plain && !insecure) {
      throw new BuildImageError(`the Docker Engine lists the registry ${address} as insecure, so builds could go to it over plain HTTP: set TAVERN_REGISTRY_INSECURE=true to allow that, or serve the registry over HTTPS and remove it from the engine's insecure registries`, buildId, 'unavailable');
    }
    if (!plain && insecure) {
      throw new BuildImageError(`TAVERN_REGISTRY_INSECURE=true, but the Docker Engine does not list the registry ${address} as insecure and would insist on HTTPS: add it to "insecure-registries" in the engine's daemon.json (every node's, on a Swarm), or serve it over HTTPS and unset TAVERN_REGISTRY_INSECURE`, buildId, 'unavailable');
    }
    this.#transportChecked = true;
  }

  /** An error of the engine's API while tagging or pushing, in the build's terms. */
  #explain(buildId: string, e: unknown): BuildImageError {
    const code = (e as { code?: unknown }).code;
    if (code === 'ABORT_ERR' || (e as { name?: unknown }).name === 'AbortError' || (e as { name?: unknown }).name === 'TimeoutError') {
      return new BuildImageError(`the push of the build's image to the registry ${this.#o.registry.address} took longer than ${Math.round((this.#o.pushTimeoutMs ?? 30 * 60_000) / 1000)} s and was abandoned`, buildId, 'registry');
    }
    if (typeof code === 'string' && ENGINE_UNREACHABLE.has(code)) return new BuildImageError(`the build's image could not be pushed, the Docker Engine is unreachable: ${messageOf(e)}`, buildId, 'unavailable');
    const said = (e as { json?: { message?: unknown } }).json?.message;
    return new BuildImageError(`the build's image could not be pushed to the registry ${this.#o.registry.address}: ${typeof said === 'string' ? said : messageOf(e)}`, buildId, 'registry');
  }
}
