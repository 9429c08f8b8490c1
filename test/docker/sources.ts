/**
 * Build archives served from local files, as a {@link BuildImageSource} that counts how often each
 * build's archive is opened (a load opens it once; an OCI bundle whose config.json comes last,
 * twice; a broken or cached build, never again). Test helper.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { BuildArchive } from '../../src/io/build-archives.js';
import type { BuildImageSource } from '../../src/adapters/docker/images.js';

/** A build as a test declares it: its kind, compression and archive file. */
export interface FileBuild {
  readonly kind: BuildArchive['kind'];
  readonly compression: BuildArchive['compression'];
  readonly path: string;
}

/**
 * @example
 * const files = fileSource();
 * const id = files.add({ kind: 'oci_bundle', compression: 'lz4', path: fixture.ociBundleLz4 });
 * await new BuildImages({ docker, source: files.source }).ensure(id); files.opens(id) // 1
 */
export const fileSource = (): {
  source: BuildImageSource;
  add: (build: FileBuild) => string;
  set: (id: string, build: FileBuild) => void;
  opens: (id: string) => number;
} => {
  const builds = new Map<string, FileBuild>();
  const opened = new Map<string, number>();
  return {
    source: {
      build(id) {
        const b = builds.get(id);
        if (b === undefined) return Promise.resolve(undefined);
        return Promise.resolve({
          kind: b.kind,
          compression: b.compression,
          open: () => {
            opened.set(id, (opened.get(id) ?? 0) + 1);
            return Promise.resolve(createReadStream(b.path, { highWaterMark: 256 * 1024 }));
          },
        });
      },
    },
    add(build) {
      const id = randomUUID();
      builds.set(id, build);
      return id;
    },
    set(id, build) {
      builds.set(id, build);
    },
    opens: (id) => opened.get(id) ?? 0,
  };
};
