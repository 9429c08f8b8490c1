/**
 * Decompression bombs (no engine needed: a scripted engine reads what Tavern sends): a build whose
 * archive expands past `maxExpandedBytes` (TAVERN_BUILD_MAX_EXPANDED_BYTES) is refused as soon as
 * it crosses the bound: the upload to the engine is aborted with at most the bound sent, the
 * archive is no longer read, the build is marked broken with a reason that names the bound and the
 * setting, and the lobby that needed it has that reason in its log.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildImageError, BuildImages } from '../../../src/adapters/docker/images.js';
import { DockerRuntime } from '../../../src/adapters/docker/runtime.js';
import { MemoryCatalogStore } from '../../../src/adapters/memory/catalog.js';
import { MemoryMatchStore } from '../../../src/adapters/memory/match-store.js';
import { createWorld, makeVersion } from '../../../src/core/world.js';
import type { BuildArchive } from '../../../src/io/build-archives.js';
import { Matchmaker } from '../../../src/services/matchmaker.js';
import { ids, mode, NS, REGIONS } from '../../core/fixtures.js';
import { writeBomb } from '../../docker/bomb.js';
import { readAll, scripted } from './scripted-engine.js';

const MiB = 1024 * 1024;
const LIMIT = 16 * MiB;
const IMAGE_ID = `sha256:${'cd'.repeat(32)}`;
const reason = (what: string): string =>
  `the build's archive (${what}) cannot be used: the archive is more than ${LIMIT} bytes (16.8 MB) once decompressed, the most this server takes `
  + '(TAVERN_BUILD_MAX_EXPANDED_BYTES): upload a smaller build, or ask the operator to raise that setting';

/** An engine that reads every upload whole and answers as a successful import (or load) does. */
const willing = () => scripted(async (body, seen) => {
  await readAll(body, seen).catch(() => undefined);
  return `{"status":"${IMAGE_ID}"}\n{"stream":"Loaded image ID: ${IMAGE_ID}\\n"}\n`;
});

/** Builds read from files, counting the bytes read of each. */
const counting = (builds: Record<string, Omit<BuildArchive, 'open'> & { path: string }>) => {
  const read = new Map<string, number>();
  return {
    read: (id: string): number => read.get(id) ?? 0,
    source: {
      build: (id: string): Promise<BuildArchive | undefined> => {
        const b = builds[id];
        if (b === undefined) return Promise.resolve(undefined);
        return Promise.resolve({
          kind: b.kind,
          compression: b.compression,
          open: () => Promise.resolve((async function* counted(): AsyncGenerator<Uint8Array> {
            for await (const chunk of createReadStream(b.path, { highWaterMark: 64 * 1024 })) {
              read.set(id, (read.get(id) ?? 0) + (chunk as Buffer).length);
              yield chunk as Buffer;
            }
          })()),
        });
      },
    },
  };
};

describe('a build that expands past the bound', () => {
  let dir: string;
  const bombs = { ociLz4: '', dockerLz4: '', dockerGzip: '', small: '' };
  let smallExpanded = 0;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tavern-bombs-'));
    bombs.ociLz4 = join(dir, 'oci-bundle.tar.lz4');
    bombs.dockerLz4 = join(dir, 'image.tar.lz4');
    bombs.dockerGzip = join(dir, 'image.tar.gz');
    bombs.small = join(dir, 'small.tar.lz4');
    await writeBomb(bombs.ociLz4, { kind: 'oci_bundle', compression: 'lz4', zeroBytes: 1024 * MiB });
    await writeBomb(bombs.dockerLz4, { kind: 'docker_image', compression: 'lz4', zeroBytes: 256 * MiB });
    await writeBomb(bombs.dockerGzip, { kind: 'docker_image', compression: 'gzip', zeroBytes: 256 * MiB });
    smallExpanded = await writeBomb(bombs.small, { kind: 'oci_bundle', compression: 'lz4', zeroBytes: 8 * MiB });
  }, 60_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('an LZ4 OCI bundle of 4 MB that expands to 1 GiB stops at the bound: engine upload aborted, archive left unread, build broken, reason logged', async () => {
    const size = (await stat(bombs.ociLz4)).size;
    expect(size).toBeLessThan(5 * MiB);
    const engine = willing();
    const files = counting({ bomb: { kind: 'oci_bundle', compression: 'lz4', path: bombs.ociLz4 } });
    const logged: string[] = [];
    const images = new BuildImages({ docker: engine.docker, source: files.source, maxExpandedBytes: LIMIT, log: (id, line) => logged.push(`${id} ${line}`) });
    const e = await images.ensure('bomb').then(() => undefined, (error: unknown) => error);
    expect(e).toBeInstanceOf(BuildImageError);
    expect(e).toMatchObject({ failure: 'invalid', lasting: true, message: reason('oci_bundle, compression lz4') });
    // Nothing past the bound went to the engine (what it got is a re-packed part of the tar), and it got no whole archive.
    expect(engine.seen).toHaveLength(1);
    expect(engine.seen[0]?.bytes).toBeLessThanOrEqual(LIMIT);
    expect(engine.seen[0]?.aborted).toBe(true);
    // 16 MiB of zeros is 66 KB of LZ4: the archive stopped being read long before its end.
    expect(files.read('bomb')).toBeLessThan(size / 8);
    expect(images.broken().get('bomb')).toBe(e);
    await expect(images.ensure('bomb')).rejects.toBe(e);
    expect(engine.seen).toHaveLength(1);
    expect(logged).toEqual([
      "bomb loading the build's image (oci_bundle, compression lz4) as tavern-build:bomb",
      `bomb build marked broken: ${(e as Error).message}`,
    ]);
  });

  it('exactly at the bound a build loads; one byte under its size, it is refused', async () => {
    const files = counting({ small: { kind: 'oci_bundle', compression: 'lz4', path: bombs.small } });
    const exact = new BuildImages({ docker: willing().docker, source: files.source, maxExpandedBytes: smallExpanded });
    expect(await exact.ensure('small')).toBe('tavern-build:small');
    const under = new BuildImages({ docker: willing().docker, source: files.source, maxExpandedBytes: smallExpanded - 1 });
    await expect(under.ensure('small')).rejects.toMatchObject({ failure: 'invalid', message: expect.stringContaining(`more than ${smallExpanded - 1} bytes`) as unknown });
  });

  it('docker save archives too, LZ4-compressed or gzipped (gzip inflated by Tavern is bounded as well)', async () => {
    const files = counting({
      lz4: { kind: 'docker_image', compression: 'lz4', path: bombs.dockerLz4 },
      gzip: { kind: 'docker_image', compression: 'none', path: bombs.dockerGzip },
    });
    for (const [id, what] of [['lz4', 'docker_image, compression lz4'], ['gzip', 'docker_image, compression none']] as const) {
      const engine = willing();
      const images = new BuildImages({ docker: engine.docker, source: files.source, maxExpandedBytes: LIMIT });
      await expect(images.ensure(id)).rejects.toMatchObject({ failure: 'invalid', message: reason(what) });
      expect(engine.seen[0]?.bytes).toBeLessThanOrEqual(LIMIT);
      expect(engine.seen[0]?.aborted).toBe(true);
    }
  });

  it("the lobby that needed the build fails to start, and its log says why", async () => {
    const buildId = mode('default').container?.imageId ?? 'no build';
    const files = counting({ [buildId]: { kind: 'oci_bundle', compression: 'lz4', path: bombs.ociLz4 } });
    const images = new BuildImages({ docker: willing().docker, source: files.source, maxExpandedBytes: LIMIT });
    const catalog = new MemoryCatalogStore();
    const clock = { now: (): number => 1_000_000 };
    const runtime = new DockerRuntime({
      docker: willing().docker, images, instanceId: 'bombs', hosts: catalog, logs: { write: () => Promise.resolve() },
      apiOrigin: { bridge: 'http://127.0.0.1:9', host: 'http://127.0.0.1:9' }, stopGraceMs: 1_000, clock,
    });
    const lines: { lobbyId: string; line: string }[] = [];
    const store = new MemoryMatchStore(createWorld(REGIONS));
    const mm = new Matchmaker({
      store, clock, random: { uuid: ids('id'), u32: () => 7 }, runtime,
      verifier: { verify: () => Promise.resolve({ kind: 'status', status: 204 }) },
      captcha: { verify: () => Promise.resolve({ success: true }) },
      routes: { bind: () => Promise.resolve(), unbind: () => Promise.resolve() },
      logs: { append: (l) => Promise.resolve(void lines.push({ lobbyId: l.lobbyId, line: l.line })) },
    });
    expect((await runtime.health()).reachable).toBe(true);
    await mm.addNamespace(NS);
    await mm.publish(NS, makeVersion('v1', { gameModes: [mode('default')] }));
    const outcome = await mm.find({ namespaceId: NS, gameModes: ['default'], client: { ip: '203.0.113.9' } });
    if (!outcome.ok) throw new Error(outcome.error.code);
    const { lobbyId } = outcome.seat;
    expect(store.world.namespaces.get(NS)?.lobbies.get(lobbyId)?.lifecycle).toMatchObject({ status: 'stopped', reason: 'start-failed', failed: true });
    expect(lines).toContainEqual({ lobbyId, line: `start failed: ${reason('oci_bundle, compression lz4')}` });
  });
});
