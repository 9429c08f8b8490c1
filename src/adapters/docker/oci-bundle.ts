/**
 * `kind: oci_bundle` builds: a tar of `config.json` + `rootfs/` (what the Rivet CLI uploads by
 * default), imported into the engine as an image whose root filesystem is `rootfs/` and whose
 * entrypoint, env, working directory and user come from config.json.
 *
 * The archive is read as a stream, never whole: a first pass finds config.json (wherever it is:
 * `./config.json`, or under a prefix such as the Rivet CLI's `tmp/.tmpXXXX/`); when config.json
 * comes first, the same pass goes on to stream `rootfs/` to the engine, re-rooted on the fly;
 * otherwise the archive is opened a second time for that.
 */
import type Dockerode from 'dockerode';
import tar, { type Pack } from 'tar-stream';
import { ArchiveError } from './archive-error.js';
import { EngineError, upload } from './engine-upload.js';
import { imageChanges, parseBundleConfig, type BundleProcess } from './oci-config.js';
import { copyEntry, entryName, readSmall, tarEntries, type TarEntry } from './tar-entries.js';

const CONFIG = 'config.json';
const MAX_CONFIG = 1024 * 1024;
/** The most config.json bytes held while looking for the bundle's own (the shallowest). */
const MAX_CANDIDATE_BYTES = 4 * MAX_CONFIG;
/** First name segments remembered to tell whether rootfs/ went by before config.json. */
const MAX_TOP_NAMES = 1024;

const depth = (dir: string): number => (dir === '' ? 0 : dir.split('/').length);
const dirOf = (name: string): string => (name.includes('/') ? name.slice(0, name.lastIndexOf('/')) : '');
const isFile = (entry: TarEntry): boolean => entry.header.type === 'file' || entry.header.type === 'contiguous-file';

/** Where the bundle is in the archive: its directory, its process, and the rootfs directory's entry name. */
interface Bundle {
  readonly dir: string;
  readonly process: BundleProcess;
  readonly rootfs: string;
}

const bundleAt = (dir: string, json: string): Bundle => {
  const process = parseBundleConfig(json);
  return { dir, process, rootfs: dir === '' ? process.root : `${dir}/${process.root}` };
};

/** What the first pass found, and whether the rest of its stream can be imported as it is. */
type Scan = { readonly bundle: Bundle; readonly rest: AsyncGenerator<TarEntry> | undefined };

/**
 * Reads `entries` until the bundle's config.json is known: at the top level, at once (and the
 * stream carries on for the import unless rootfs/ already went by); under a prefix, after the
 * whole archive (the shallowest config.json wins, so one inside rootfs/ never does).
 */
const scan = async (entries: AsyncGenerator<TarEntry>): Promise<Scan> => {
  const top = new Set<string>();
  let candidates: { dir: string; json: string }[] = [];
  let held = 0;
  let manifest = false;
  for (let next = await entries.next(); next.done !== true; next = await entries.next()) {
    const entry = next.value;
    if (top.size < MAX_TOP_NAMES) top.add(entry.name.split('/')[0] ?? '');
    if (entry.name === 'manifest.json') manifest = true;
    if (!isFile(entry) || !(entry.name === CONFIG || entry.name.endsWith(`/${CONFIG}`))) continue;
    const dir = dirOf(entry.name);
    if (dir === '') {
      const bundle = bundleAt('', await readSmall(entry, MAX_CONFIG, CONFIG));
      const passed = top.size >= MAX_TOP_NAMES || top.has(bundle.rootfs.split('/')[0] ?? '');
      if (!passed) return { bundle, rest: entries };
      await entries.return(undefined);
      return { bundle, rest: undefined };
    }
    const shallowest = candidates[0] === undefined ? Infinity : depth(candidates[0].dir);
    if (depth(dir) > shallowest) continue;
    if (depth(dir) < shallowest) [candidates, held] = [[], 0];
    const json = await readSmall(entry, MAX_CONFIG, entry.name);
    held += json.length;
    if (held > MAX_CANDIDATE_BYTES) throw new ArchiveError('the bundle has too many config.json files at its top level to tell which is its own');
    candidates.push({ dir, json });
  }
  const [winner, other] = candidates;
  if (winner === undefined) {
    throw new ArchiveError(manifest
      ? 'the archive is a `docker save` archive (it has manifest.json), not an OCI bundle: upload it with kind docker_image'
      : 'the OCI bundle has no config.json (an OCI bundle is a tar of config.json and rootfs/)');
  }
  if (other !== undefined) throw new ArchiveError(`the archive holds more than one bundle: ${winner.dir}/${CONFIG} and ${other.dir}/${CONFIG}`);
  return { bundle: bundleAt(winner.dir, winner.json), rest: undefined };
};

/** Streams the entries under the bundle's rootfs into `pack` as the root of a new archive, then finalizes it. */
const reroot = async (entries: AsyncIterable<TarEntry>, bundle: Bundle, pack: Pack): Promise<void> => {
  const prefix = `${bundle.rootfs}/`;
  let found = false;
  for await (const entry of entries) {
    if (entry.name === bundle.rootfs) found = true;
    if (!entry.name.startsWith(prefix)) continue;
    found = true;
    let linkname: string | undefined;
    if (entry.header.type === 'link') {
      const target = entryName(entry.header.linkname ?? '');
      if (target === undefined || !target.startsWith(prefix)) throw new ArchiveError(`rootfs has a hard link to outside itself: '${entry.header.name}'`);
      linkname = target.slice(prefix.length);
    }
    await copyEntry(pack, entry, entry.name.slice(prefix.length), linkname);
  }
  if (!found) throw new ArchiveError(`the OCI bundle has no ${bundle.process.root}/ directory next to its config.json`);
  pack.finalize();
};

/**
 * Imports the OCI bundle that `open` reads (each call a fresh stream of its tar, already
 * decompressed) and returns the new image's id. Throws an {@link ArchiveError} for an unusable
 * bundle, an {@link EngineError} when the engine refuses it, and transport errors as they are.
 *
 * @example
 * const id = await importBundle(docker, async () => archiveBytes(await build.open(), 'lz4'), 'build 5f0c…');
 */
export const importBundle = async (docker: Dockerode, open: () => Promise<AsyncIterable<Uint8Array>>, message: string): Promise<string> => {
  const first = tarEntries(await open());
  let found: Scan;
  try {
    found = await scan(first);
  } catch (e) {
    await first.return(undefined);
    throw e;
  }
  const { bundle } = found;
  const entries = found.rest ?? tarEntries(await open());
  const pack = tar.pack();
  const reply = await upload(pack, () => reroot(entries, bundle, pack), (body, signal) =>
    docker.importImage(body, { changes: imageChanges(bundle.process), message, abortSignal: signal }));
  if (reply.error !== undefined) throw new EngineError(reply.error);
  const id = reply.messages.find((m) => /^sha256:[0-9a-f]{64}$/.test(m));
  if (id === undefined) throw new EngineError(`the engine imported no image (it said: ${reply.messages.join(' / ') || 'nothing'})`);
  return id;
};
