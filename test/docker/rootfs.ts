/**
 * Root filesystems described as lists of files, written as tar archives: a plain rootfs (to
 * import into the engine), or an OCI bundle (config.json + rootfs/, as the Rivet CLI uploads it),
 * in either order and under any prefix, plus LZ4 compression with Debian's `lz4`. Test helpers.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import tar, { type Pack } from 'tar-stream';

/**
 * One file of a root filesystem: a directory, a host file copied in, a text, a symlink, a hard
 * link (to another entry's path, as tar names it), a device node or a FIFO.
 */
export type RootfsFile =
  | { readonly path: string; readonly kind: 'dir'; readonly mode?: number }
  | { readonly path: string; readonly kind: 'file'; readonly from: string; readonly mode?: number }
  | { readonly path: string; readonly kind: 'text'; readonly text: string; readonly mode?: number }
  | { readonly path: string; readonly kind: 'symlink'; readonly target: string }
  | { readonly path: string; readonly kind: 'link'; readonly target: string }
  | { readonly path: string; readonly kind: 'character-device' | 'block-device'; readonly major: number; readonly minor: number; readonly mode?: number }
  | { readonly path: string; readonly kind: 'fifo'; readonly mode?: number };

/** The process of an image or bundle (OCI runtime spec `process`). */
export interface OciProcess {
  readonly args: readonly string[];
  readonly env: readonly string[];
  readonly cwd: string;
  readonly uid: number;
  readonly gid: number;
}

/**
 * Adds one file to `pack` as `name` (streaming host files), resolving once it is in.
 *
 * @example
 * await addFile(pack, { path: 'dev/disk', kind: 'block-device', major: 8, minor: 0 }, 'rootfs/dev/disk');
 */
export const addFile = async (pack: Pack, file: RootfsFile, name: string): Promise<void> => {
  const mtime = new Date(0);
  switch (file.kind) {
    case 'dir':
      await new Promise<void>((resolve, reject) => pack.entry({ name, type: 'directory', mode: file.mode ?? 0o755, mtime }, (e) => (e ? reject(e) : resolve())));
      return;
    case 'symlink':
    case 'link':
      await new Promise<void>((resolve, reject) => pack.entry({ name, type: file.kind, linkname: file.target, mtime }, (e) => (e ? reject(e) : resolve())));
      return;
    case 'character-device':
    case 'block-device':
      await new Promise<void>((resolve, reject) =>
        pack.entry({ name, type: file.kind, devmajor: file.major, devminor: file.minor, mode: file.mode ?? 0o666, mtime }, (e) => (e ? reject(e) : resolve())));
      return;
    case 'fifo':
      await new Promise<void>((resolve, reject) => pack.entry({ name, type: 'fifo', mode: file.mode ?? 0o666, mtime }, (e) => (e ? reject(e) : resolve())));
      return;
    case 'text':
      await new Promise<void>((resolve, reject) => pack.entry({ name, mode: file.mode ?? 0o644, mtime }, file.text, (e) => (e ? reject(e) : resolve())));
      return;
    case 'file': {
      const { size } = await stat(file.from);
      await new Promise<void>((resolve, reject) => {
        const sink = pack.entry({ name, size, mode: file.mode ?? 0o755, mtime }, (e) => (e ? reject(e) : resolve()));
        createReadStream(file.from).on('error', reject).pipe(sink);
      });
    }
  }
};

/**
 * A tar of `files` as a stream, each name under `prefix` (`''`: at the root).
 *
 * @example
 * await docker.importImage(tarOf(files), { repo: 'fixture', tag: 'x' });
 */
export const tarOf = (files: readonly RootfsFile[], prefix = ''): Pack => {
  const pack = tar.pack();
  void (async () => {
    for (const file of files) await addFile(pack, file, `${prefix}${file.path.replace(/^\/+/, '')}`);
    pack.finalize();
  })().catch((e: unknown) => pack.destroy(e as Error));
  return pack;
};

/** Writes a tar stream to a file. */
export const writeTar = (pack: Pack, out: string): Promise<void> => pipeline(pack as unknown as NodeJS.ReadableStream, createWriteStream(out));

/**
 * A config.json in the shape of the OCI runtime spec (what `runc spec` and the Rivet CLI write).
 *
 * @example
 * JSON.parse(ociConfig(process)).process.args
 */
export const ociConfig = (p: OciProcess): string => JSON.stringify({
  ociVersion: '1.0.2-dev',
  process: {
    terminal: false,
    user: { uid: p.uid, gid: p.gid },
    args: p.args,
    env: p.env,
    cwd: p.cwd,
    capabilities: { bounding: ['CAP_KILL', 'CAP_NET_BIND_SERVICE'], effective: ['CAP_KILL'], permitted: ['CAP_KILL'] },
    rlimits: [{ type: 'RLIMIT_NOFILE', hard: 1024, soft: 1024 }],
    noNewPrivileges: true,
  },
  root: { path: 'rootfs', readonly: true },
  hostname: 'game',
  mounts: [{ destination: '/proc', type: 'proc', source: 'proc' }, { destination: '/tmp', type: 'tmpfs', source: 'tmpfs' }],
  linux: { namespaces: [{ type: 'pid' }, { type: 'network' }, { type: 'ipc' }, { type: 'uts' }, { type: 'mount' }] },
});

/** How an OCI bundle archive is laid out: config.json first or last, and under which prefix. */
export interface BundleLayout {
  readonly configLast?: boolean;
  /** e.g. `tmp/.tmpXYZ/` (the Rivet CLI tars the bundle's absolute path). */
  readonly prefix?: string;
  /** config.json's text as it is (default: {@link ociConfig} of the process); undefined leaves it out. */
  readonly config?: string | undefined;
}

/**
 * Writes an OCI bundle archive: config.json and rootfs/ (holding `files`).
 *
 * @example
 * await writeOciBundle('bundle.tar', files, process, { configLast: true, prefix: 'tmp/.tmp1/' });
 */
export const writeOciBundle = async (out: string, files: readonly RootfsFile[], p: OciProcess, layout: BundleLayout = {}): Promise<void> => {
  const prefix = layout.prefix ?? '';
  const config: RootfsFile[] = 'config' in layout && layout.config === undefined ? [] : [{ path: 'config.json', kind: 'text', text: layout.config ?? ociConfig(p) }];
  const rootfs: RootfsFile[] = [{ path: 'rootfs', kind: 'dir' }, ...files.map((f) => ({ ...f, path: `rootfs/${f.path.replace(/^\/+/, '')}` }))];
  const parents: RootfsFile[] = prefix.split('/').filter(Boolean).map((_, i, parts) => ({ path: parts.slice(0, i + 1).join('/'), kind: 'dir' }));
  const bundle = layout.configLast === true ? [...rootfs, ...config] : [...config, ...rootfs];
  await writeTar(tarOf([...parents, ...bundle.map((f) => ({ ...f, path: `${prefix}${f.path}` }))]), out);
};

/**
 * Compresses `input` into `output` in the LZ4 frame format with Debian's `lz4` (`-1 -BD` by
 * default: level 1 and linked blocks, like the Rivet CLI).
 *
 * @example
 * await lz4('bundle.tar', 'bundle.tar.lz4', ['-9', '-BI', '--no-frame-crc']);
 */
export const lz4 = async (input: string, output: string, flags: readonly string[] = ['-1', '-BD']): Promise<void> => {
  await promisify(execFile)('lz4', ['-q', '-f', ...flags, input, output]);
};

/**
 * A hex digest of the files' paths, modes, link targets and contents (host files read in full),
 * and of `extra`: the cache key of an image made from them.
 *
 * @example
 * const key = await contentHash(files, JSON.stringify(process));
 */
export const contentHash = async (files: readonly RootfsFile[], extra: string): Promise<string> => {
  const hash = createHash('sha256').update(extra);
  for (const file of files) {
    hash.update(JSON.stringify({ ...file, from: undefined }));
    if (file.kind === 'file') hash.update(await readFile(file.from));
  }
  return hash.digest('hex');
};
