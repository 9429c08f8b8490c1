/**
 * A Docker Engine that answers image uploads (`loadImage`, `importImage`) as a test scripts them,
 * reading as much of each upload as it likes, has no images of its own, and says its version
 * (so a runtime on it is reachable). Test helper.
 */
import { Readable } from 'node:stream';
import type Dockerode from 'dockerode';

/** What the scripted engine saw of an upload. */
export interface Seen {
  bytes: number;
  aborted: boolean;
}

/**
 * An engine with no images that answers each upload with `answer(body)`.
 *
 * @example
 * const engine = scripted(async (body, seen) => { await readAll(body, seen); return '{"status":"sha256:…"}\n'; });
 * new BuildImages({ docker: engine.docker, source }); engine.seen[0]?.bytes
 */
export const scripted = (answer: (body: NodeJS.ReadableStream, seen: Seen) => Promise<string>): { docker: Dockerode; seen: Seen[] } => {
  const seen: Seen[] = [];
  const upload = async (body: NodeJS.ReadableStream, options: { abortSignal?: AbortSignal }): Promise<NodeJS.ReadableStream> => {
    const s: Seen = { bytes: 0, aborted: false };
    seen.push(s);
    options.abortSignal?.addEventListener('abort', () => (s.aborted = true));
    return Readable.from([await answer(body, s)]);
  };
  const docker = {
    getImage: () => ({ inspect: () => Promise.reject(Object.assign(new Error('No such image'), { statusCode: 404 })), tag: () => Promise.resolve() }),
    loadImage: upload,
    importImage: upload,
    version: () => Promise.resolve({ Version: '20.10.24' }),
  };
  return { docker: docker as unknown as Dockerode, seen };
};

/**
 * Reads the whole body, counting it.
 *
 * @example
 * await readAll(body, seen); seen.bytes // the archive's size
 */
export const readAll = async (body: NodeJS.ReadableStream, seen: Seen): Promise<void> => {
  for await (const chunk of body) seen.bytes += (chunk as Buffer).length;
};
