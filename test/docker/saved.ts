/**
 * `docker save` archives made by hand, in memory: manifest.json, the image config named by its
 * digest, one `layer<i>/layer.tar` per layer (a layer identical to an earlier one is a symlink to
 * it, as docker save writes it), and any extra entries a test wants in the archive itself
 * (links, devices…). Nothing here needs an engine. Test helpers.
 */
import { createHash } from 'node:crypto';
import tar, { type Pack } from 'tar-stream';
import { addFile, tarOf, type RootfsFile } from './rootfs.js';

/** What goes into a handmade `docker save` archive. */
export interface SavedImage {
  /** Each layer's files (a tar each, applied in order by the engine). */
  readonly layers: readonly (readonly RootfsFile[])[];
  readonly entrypoint: readonly string[];
  /** `uid:gid` (default 0:0). */
  readonly user?: string;
  /** Entries of the archive itself, after the image's. */
  readonly extra?: readonly RootfsFile[];
}

/**
 * A tar stream's bytes.
 *
 * @example
 * const layer = await bytesOf(tarOf(files));
 */
export const bytesOf = async (pack: Pack): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of pack as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
};

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

const put = (pack: Pack, name: string, body: Buffer): Promise<void> =>
  new Promise((resolve, reject) => pack.entry({ name, mode: 0o644, mtime: new Date(0) }, body, (e) => (e ? reject(e) : resolve())));

/**
 * A `docker save` archive of `image`, and the image id the engine gives it (its config's digest).
 *
 * @example
 * const { archive, id } = await savedImage({ layers: [files], entrypoint: ['/bin/busybox', 'sh', '-c'] });
 */
export const savedImage = async (image: SavedImage): Promise<{ archive: Buffer; id: string }> => {
  const layers = await Promise.all(image.layers.map((files) => bytesOf(tarOf(files))));
  const diffIds = layers.map((l) => `sha256:${sha256(l)}`);
  const config = JSON.stringify({
    architecture: 'amd64', os: 'linux',
    config: { Entrypoint: image.entrypoint, User: image.user ?? '0:0', Env: ['PATH=/bin'] },
    rootfs: { type: 'layers', diff_ids: diffIds },
  });
  const hex = sha256(config);
  const paths = layers.map((_, i) => `layer${i}/layer.tar`);
  const pack = tar.pack();
  const bytes = bytesOf(pack);
  await put(pack, 'manifest.json', Buffer.from(JSON.stringify([{ Config: `${hex}.json`, RepoTags: ['saved:by-hand'], Layers: paths }])));
  await put(pack, `${hex}.json`, Buffer.from(config));
  for (const [i, layer] of layers.entries()) {
    await addFile(pack, { path: `layer${i}`, kind: 'dir' }, `layer${i}`);
    const first = diffIds.indexOf(diffIds[i] ?? '');
    if (first < i) await addFile(pack, { path: paths[i] ?? '', kind: 'symlink', target: `../layer${first}/layer.tar` }, paths[i] ?? '');
    else await put(pack, paths[i] ?? '', layer);
  }
  for (const file of image.extra ?? []) await addFile(pack, file, file.path);
  pack.finalize();
  return { archive: await bytes, id: `sha256:${hex}` };
};
