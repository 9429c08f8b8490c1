/**
 * A docker block's image as a file to upload: built from its `dockerfile` through the Docker
 * Engine (dockerode; the build context is the project folder, `.dockerignore` honoured) or taken
 * from a local `image`, then saved (`docker save`) to a temporary file; its image id is its content hash.
 * A failed build shows the engine's output. Nothing is ever pulled.
 */
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type Docker from 'dockerode';
import { customAlphabet } from 'nanoid';
import { listFiles } from './files.js';
import { stripAnsi } from './terminal.js';

/** The local tag of a built image: `tavern-game:<id>` (Rivet CLI's `rivet-game:<uuid>`). */
export const newImageTag = (): string => `tavern-game:${tagId()}`;
const tagId = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyz', 16);

export class ImageBuildFailed extends Error {}

export interface SavedImage {
  readonly tag: string;
  readonly file: string;
  readonly bytes: number;
  /**
   * Hex SHA-256 of the image's content: its id (the digest of its config, which names every
   * layer's digest). The saved archive itself also names the local tag, so it differs per build.
   */
  readonly sha256: string;
}

interface BuildEvent {
  readonly stream?: string;
  readonly error?: string;
  readonly errorDetail?: { readonly message?: string };
}

/** Builds `dockerfile` (relative to `root`) into `tag`; rejects with the build's output on failure. */
async function build(docker: Docker, root: string, dockerfile: string, tag: string, buildArgs: Record<string, string>): Promise<void> {
  const src = await listFiles(root);
  const stream = await docker.buildImage({ context: root, src }, { t: tag, dockerfile, buildargs: buildArgs, rm: true, forcerm: true, pull: false });
  const output: string[] = [];
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(stream, (err: Error | null, events: BuildEvent[]) => {
      const failed = events.find((e) => e.error !== undefined);
      if (err !== null || failed !== undefined) {
        const why = failed?.errorDetail?.message ?? failed?.error ?? err?.message ?? 'unknown error';
        reject(new ImageBuildFailed(`docker build of ${dockerfile} failed: ${why}\n--- build output ---\n${stripAnsi(output.join('')).trimEnd()}`));
      } else resolve();
    }, (e: BuildEvent) => {
      if (e.stream !== undefined) output.push(e.stream);
    });
  });
}

/** `docker save` of `image` into `file`; its size. */
async function save(docker: Docker, image: string, file: string): Promise<number> {
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _e, done) {
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(await docker.getImage(image).get(), count, createWriteStream(file));
  return bytes;
}

export type ImageSource = { readonly dockerfile: string; readonly buildArgs?: Record<string, string> } | { readonly image: string };

/**
 * @example
 * const saved = await prepareImage(new Docker(), '/game', { dockerfile: 'Dockerfile' }, '/tmp/x/image.tar');
 */
export async function prepareImage(docker: Docker, root: string, source: ImageSource, file: string): Promise<SavedImage> {
  let tag: string;
  if ('dockerfile' in source) {
    tag = newImageTag();
    await build(docker, root, source.dockerfile, tag, source.buildArgs ?? {});
  } else {
    tag = source.image;
    try {
      await docker.getImage(tag).inspect();
    } catch {
      throw new ImageBuildFailed(`the image ${tag} is not in the local Docker engine (tavern deploy never pulls: docker pull or build it first)`);
    }
  }
  const { Id } = await docker.getImage(tag).inspect();
  return { tag, file, bytes: await save(docker, tag, file), sha256: Id.replace(/^sha256:/, '') };
}
