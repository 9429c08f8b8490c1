/**
 * `kind: docker_image` builds: a `docker save` archive, loaded through the engine
 * (`POST /images/load`). On its way to the engine the archive is re-packed as a stream with its
 * tags removed (`RepoTags` in manifest.json, the legacy `repositories` file, the image-name
 * annotations of an OCI layout's index.json): an upload must never move a tag it does not own
 * (another build's `tavern-build:<id>`, or any image of the host). Tavern tags the loaded image
 * itself, by the id the engine reports.
 */
import type Dockerode from 'dockerode';
import tar, { type Pack } from 'tar-stream';
import { pipeline } from 'node:stream';
import { DEFAULT_MAX_EXPANDED_BYTES } from './archive-bytes.js';
import { ArchiveError } from './archive-error.js';
import { LayerMeter } from './layer-meter.js';
import { EngineError, upload } from './engine-upload.js';
import { SavedEntries } from './saved-entries.js';
import { addFile, copyEntry, entryName, readSmall, tarEntries, type TarEntry } from './tar-entries.js';

const MAX_JSON = 1024 * 1024;
const IMAGE_ID = /^sha256:[0-9a-f]{64}$/;
const NAME_ANNOTATIONS = ['io.containerd.image.name', 'org.opencontainers.image.ref.name'];

const parse = (json: string, what: string): unknown => {
  try {
    return JSON.parse(json);
  } catch (e) {
    throw new ArchiveError(`${what} is not valid JSON (${(e as Error).message})`);
  }
};

/**
 * manifest.json without its tags, and the id of the one image it describes (from its config's
 * file name: `<hex>.json`, or `blobs/sha256/<hex>` in an OCI layout).
 *
 * @example
 * untagManifest('[{"Config":"ab…01.json","RepoTags":["game:v1"],"Layers":["…/layer.tar"]}]')
 * // { content: '[{"Config":"ab…01.json","RepoTags":[],"Layers":["…/layer.tar"]}]', id: 'sha256:ab…01' }
 */
export const untagManifest = (json: string): { readonly content: string; readonly id: string } => {
  const manifest = parse(json, 'manifest.json');
  if (!Array.isArray(manifest) || manifest.length === 0) throw new ArchiveError('manifest.json lists no image');
  if (manifest.length > 1) throw new ArchiveError(`the archive holds ${manifest.length} images: a build is one image (docker save one tag)`);
  const [image] = manifest as unknown[];
  const config = (image as { Config?: unknown } | null)?.Config;
  const hex = typeof config === 'string' ? /^(?:blobs\/sha256\/)?([0-9a-f]{64})(?:\.json)?$/.exec(config)?.[1] : undefined;
  if (hex === undefined) throw new ArchiveError('manifest.json does not name the image config (Config) as docker save does');
  const layers = (image as { Layers?: unknown }).Layers;
  const outside = Array.isArray(layers) ? (layers as unknown[]).find((l) => typeof l !== 'string' || l.startsWith('/') || entryName(l) === undefined) : undefined;
  if (outside !== undefined) throw new ArchiveError(`manifest.json names a layer outside the archive: ${JSON.stringify(outside)}`);
  return { content: JSON.stringify([{ ...(image as object), RepoTags: [] }]), id: `sha256:${hex}` };
};

/**
 * An OCI layout's index.json (what newer `docker save` writes too) without image-name annotations
 * (newer engines tag from them).
 *
 * @example
 * untagIndex('{"manifests":[{"annotations":{"io.containerd.image.name":"game:v1","x":"y"}}]}')
 * // '{"manifests":[{"annotations":{"x":"y"}}]}'
 */
export const untagIndex = (json: string): string => {
  const index = parse(json, 'index.json') as { manifests?: unknown };
  if (!Array.isArray(index.manifests)) return json;
  const manifests = index.manifests.map((m: unknown) => {
    const annotations = (m as { annotations?: unknown } | null)?.annotations;
    if (typeof annotations !== 'object' || annotations === null) return m;
    const kept = Object.fromEntries(Object.entries(annotations).filter(([k]) => !NAME_ANNOTATIONS.includes(k)));
    return { ...(m as object), annotations: kept };
  });
  return JSON.stringify({ ...index, manifests });
};

/** manifest.json and index.json, read by Tavern: files of the archive, never links to elsewhere. */
const READ = new Set(['manifest.json', 'index.json']);

/**
 * Copies a `docker save` archive into `pack` without its tags, refusing special files and links
 * that do not stay inside it ({@link SavedEntries}); returns the image id its manifest names.
 */
const copyUntagged = async (entries: AsyncIterable<TarEntry>, pack: Pack, meter: LayerMeter): Promise<string> => {
  let id: string | undefined;
  let bundle = { config: false, rootfs: false };
  const saved = new SavedEntries();
  for await (const entry of entries) {
    saved.see(entry);
    if (READ.has(entry.name) && entry.header.type !== 'file' && entry.header.type !== 'contiguous-file') throw new ArchiveError(`${entry.name} must be a file, not a ${entry.header.type ?? 'special'} entry`);
    if (entry.name === 'manifest.json') {
      const untagged = untagManifest(await readSmall(entry, MAX_JSON, 'manifest.json'));
      id = untagged.id;
      await addFile(pack, entry, entry.name, Buffer.from(untagged.content));
    } else if (entry.name === 'index.json') {
      await addFile(pack, entry, entry.name, Buffer.from(untagIndex(await readSmall(entry, MAX_JSON, 'index.json'))));
    } else if (entry.name !== 'repositories') {
      if (entry.name === 'config.json') bundle = { ...bundle, config: true };
      if (entry.name === 'rootfs' || entry.name.startsWith('rootfs/')) bundle = { ...bundle, rootfs: true };
      // A layer the engine expands itself is counted on its way (its errors end the copy).
      await copyEntry(pack, entry, entry.name, undefined, (body) => pipeline(body, meter.layer(entry.name), () => undefined));
    }
  }
  if (id === undefined) {
    throw new ArchiveError(bundle.config && bundle.rootfs
      ? 'the archive is an OCI bundle (config.json and rootfs/), not a `docker save` archive: upload it with kind oci_bundle'
      : 'the archive has no manifest.json: it is not a `docker save` archive');
  }
  saved.finish();
  pack.finalize();
  return id;
};

/**
 * Loads the `docker save` archive in `bytes` (a tar stream, already decompressed) and returns the
 * loaded image's id; the layers it holds gzip-compressed may expand to `maxBytes` in all. Throws an {@link ArchiveError} for an unusable archive, an
 * {@link EngineError} when the engine refuses it, and transport errors as they are.
 *
 * @example
 * const id = await loadDockerArchive(docker, archiveBytes(await build.open(), 'none'));
 * await docker.getImage(id).tag({ repo: 'tavern-build', tag: buildId });
 */
export const loadDockerArchive = async (docker: Dockerode, bytes: AsyncIterable<Uint8Array>, maxBytes = DEFAULT_MAX_EXPANDED_BYTES): Promise<string> => {
  const pack = tar.pack();
  let named: string | undefined;
  const reply = await upload(pack, async () => {
    named = await copyUntagged(tarEntries(bytes), pack, new LayerMeter(maxBytes));
  }, (body, signal) => docker.loadImage(body, { quiet: true, abortSignal: signal }));
  if (reply.error !== undefined) throw new EngineError(reply.error);
  const loaded = reply.messages.map((m) => /^Loaded image ID: (\S+)/.exec(m)?.[1]).find((m) => m !== undefined);
  if (loaded === undefined || !IMAGE_ID.test(loaded)) {
    throw new EngineError(`the engine did not report the image it loaded (it said: ${reply.messages.join(' / ') || 'nothing'})`);
  }
  if (named !== undefined && loaded !== named) throw new EngineError(`the engine loaded ${loaded}, not the image the manifest names (${named})`);
  return loaded;
};
