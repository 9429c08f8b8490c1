/**
 * Builds' archives read from Tavern's own stores: the build record in the catalog says the kind,
 * the compression and the upload; the file is the upload's single file, named after kind and
 * compression (`image.tar`, `oci-bundle.tar.lz4`, see {@link buildFileName}), read through the
 * uploads service, which serves completed uploads only.
 */
import type { BuildArchive, BuildArchives } from '../io/build-archives.js';
import type { BuildStore, UploadStore } from '../io/catalog.js';
import { buildFileName } from './builds.js';
import type { Uploads } from './uploads.js';

const KINDS: ReadonlySet<string> = new Set(['docker_image', 'oci_bundle']);
const COMPRESSIONS: ReadonlySet<string> = new Set(['none', 'lz4']);

/**
 * @example
 * const archives = new StoredBuildArchives({ catalog, uploads });
 * const archive = await archives.build(buildId); // undefined until its upload is complete
 */
export class StoredBuildArchives implements BuildArchives {
  readonly #catalog: BuildStore & UploadStore;
  readonly #uploads: Pick<Uploads, 'openFile'>;

  constructor(deps: { readonly catalog: BuildStore & UploadStore; readonly uploads: Pick<Uploads, 'openFile'> }) {
    this.#catalog = deps.catalog;
    this.#uploads = deps.uploads;
  }

  /**
   * The build's archive, or undefined when there is no such build or its upload is not complete.
   *
   * @effects BuildStore (getBuild), UploadStore (getUpload), Uploads (openFile, on `open`)
   * @example
   * const archive = await archives.build(buildId); archive?.kind // 'oci_bundle'
   */
  async build(buildId: string): Promise<BuildArchive | undefined> {
    const record = await this.#catalog.getBuild(buildId);
    if (record === undefined || !KINDS.has(record.kind) || !COMPRESSIONS.has(record.compression)) return undefined;
    const upload = await this.#catalog.getUpload(record.uploadId);
    if (upload?.completedAt === undefined) return undefined;
    const kind = record.kind as BuildArchive['kind'];
    const compression = record.compression as BuildArchive['compression'];
    const path = buildFileName(kind, compression);
    const uploads = this.#uploads;
    return {
      kind,
      compression,
      async open(): Promise<AsyncIterable<Uint8Array>> {
        const file = await uploads.openFile(record.uploadId, path);
        if (file === undefined) throw new Error(`the build's file ${path} is missing from upload ${record.uploadId}`);
        return file.body;
      },
    };
  }
}
