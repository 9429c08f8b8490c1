/**
 * Builds through a real registry (Debian's docker-registry, CNCF Distribution 2.8, started here on
 * 127.0.0.1 with a config of its own) and the real engine: a build, once loaded, is pushed once
 * however many ask at the same time, its digest recorded on the build; the registry serves that
 * manifest, and an engine without the image pulls it by digest (the Docker runtime's resolver
 * does, a cluster's leaves it to the nodes). A registry that is down marks the build broken with
 * the reason; plain HTTP without TAVERN_REGISTRY_INSECURE is refused before any push; a build
 * whose image is recorded is never loaded or pushed again (a restart, another instance).
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BuildImageError, BuildImages } from '../../src/adapters/docker/images.js';
import { RegistryImages, type RegistryTarget } from '../../src/adapters/docker/registry-images.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/catalog.js';
import type { BuildRecord } from '../../src/io/catalog.js';
import { describeNeeding } from '../needs.js';
import { freePort } from '../proxy/helpers.js';
import { startRegistry } from '../swarm/registry.js';
import { pidsMentioning, signalAndWait } from '../swarm/system.js';
import { docker, dockerProblem, removeRepository } from './engine.js';
import { writeOciBundle } from './rootfs.js';
import { fileSource } from './sources.js';

const REGISTRY_BIN = '/usr/bin/docker-registry';
const problem = (await dockerProblem()) ?? (existsSync(REGISTRY_BIN) ? undefined : `${REGISTRY_BIN} is missing`);
const MANIFEST_V2 = 'application/vnd.docker.distribution.manifest.v2+json';

describeNeeding({ what: 'the Docker Engine and docker-registry', start: 'start dockerd and apt-get install docker-registry' }, 'builds pushed to a registry (real engine, real registry)', problem, () => {
  const tag = randomUUID().slice(0, 8);
  const localRepo = `tavern-test-${tag}`;
  const prefix = `swarmreg-${tag}`;
  const files = fileSource();
  const catalog = new MemoryCatalogStore();
  const logged: string[] = [];
  const log = (id: string, line: string): void => void logged.push(`${id} ${line}`);
  const local = new BuildImages({ docker, source: files.source, repository: localRepo, log });
  let dir: string;
  let address: string;
  let bundle: string;
  const pulled: string[] = [];

  const registry = (over: Partial<RegistryTarget> = {}): RegistryTarget => ({ address, prefix, insecure: true, ...over });
  /** A build of the test's own image (unique to this run: removing it touches no other test's). */
  const build = async (): Promise<string> => {
    const id = randomUUID();
    files.set(id, { kind: 'oci_bundle', compression: 'none', path: bundle });
    const record: BuildRecord = { id, gameId: randomUUID(), uploadId: randomUUID(), displayName: 'b', imageTag: `game:${id}`, kind: 'oci_bundle', compression: 'none', createdAt: 1 };
    expect((await catalog.createBuild(record)).ok).toBe(true);
    return id;
  };
  const manifest = (ref: string): Promise<Response> =>
    fetch(`http://${address}/v2/${prefix}/tavern-build/manifests/${ref}`, { method: 'HEAD', headers: { accept: MANIFEST_V2 } });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tavern-swarmreg-registry-'));
    address = `127.0.0.1:${await freePort()}`;
    bundle = join(dir, 'bundle.tar');
    await writeOciBundle(bundle, [{ path: 'etc', kind: 'dir' }, { path: 'etc/build', kind: 'text', text: `${tag}\n` }], { args: ['/bin/true'], env: [], cwd: '/', uid: 1000, gid: 1000 });
    await startRegistry(join(dir, 'registry'), address);
  }, 60_000);

  afterAll(async () => {
    await signalAndWait(await pidsMentioning(`${dir}/`), 'SIGKILL', 10_000);
    await removeRepository(localRepo);
    await removeRepository(`${address}/${prefix}/tavern-build`);
    for (const ref of pulled) await docker.getImage(ref).remove({ force: true }).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it('pushes a build once, records its digest, and the registry serves it: an engine without the image pulls it by digest', async () => {
    const id = await build();
    const images = new RegistryImages({ docker, local, registry: registry(), builds: catalog, log });
    const [a, b] = await Promise.all([images.ensure(id), images.ensure(id)]);
    expect(b).toBe(a);
    expect(a).toMatch(new RegExp(`^${address.replaceAll('.', '\\.')}/${prefix}/tavern-build@sha256:[0-9a-f]{64}$`));
    const digest = a.slice(a.indexOf('@') + 1);
    expect(logged.filter((l) => l.startsWith(id) && l.includes('pushed the build')).length).toBe(1);
    expect(files.opens(id)).toBe(1);
    expect((await catalog.getBuild(id))?.image).toBe(a);

    // The registry has it, under the digest and under the build's tag.
    const byDigest = await manifest(digest);
    expect(byDigest.status).toBe(200);
    expect(byDigest.headers.get('docker-content-digest')).toBe(digest);
    expect((await manifest(id)).headers.get('docker-content-digest')).toBe(digest);

    // Pushed again where it is not recorded (an instance with a store of its own): the same digest, and fine.
    const elsewhere = new MemoryCatalogStore();
    const recorded = await catalog.getBuild(id);
    if (recorded === undefined) throw new Error('the build is not in the catalog');
    const { image: _pushed, ...unpushed } = recorded;
    await elsewhere.createBuild(unpushed);
    const repushed = new RegistryImages({ docker, local, registry: registry(), builds: elsewhere, log });
    expect(await repushed.ensure(id)).toBe(a);
    expect(logged.filter((l) => l.startsWith(id) && l.includes('pushed the build')).length).toBe(2);

    // Gone from this engine (the image is this test's alone), then pulled back by digest as a node would.
    const imageId = (await docker.getImage(a).inspect()).Id;
    await docker.getImage(imageId).remove({ force: true });
    await expect(docker.getImage(a).inspect()).rejects.toMatchObject({ statusCode: 404 });
    pulled.push(a);
    // A cluster's runtime gets the reference as it is (its nodes pull); the Docker runtime, whose
    // containers are created on this engine, gets it pulled first.
    expect(await images.ensure(id)).toBe(a);
    await expect(docker.getImage(a).inspect()).rejects.toMatchObject({ statusCode: 404 });
    const here = new RegistryImages({ docker, local, registry: registry(), builds: catalog, log, runsHere: true });
    expect(await here.ensure(id)).toBe(a);
    expect(logged.filter((l) => l.startsWith(id) && l.includes('pulling the build')).length).toBe(1);
    expect(await here.ensure(id)).toBe(a);
    expect(logged.filter((l) => l.startsWith(id) && l.includes('pulling the build')).length).toBe(1);
    const back = await docker.getImage(a).inspect();
    expect(back.Id).toBe(imageId);
    expect(back.RepoDigests).toContain(a);
  });

  it('a build whose image is recorded is neither loaded nor pushed again (a restart, another instance)', async () => {
    const id = await build();
    const first = await new RegistryImages({ docker, local, registry: registry(), builds: catalog, log }).ensure(id);
    const opened = files.opens(id);
    const refusing = { ensure: (): Promise<string> => Promise.reject(new Error('loaded again')) };
    const restarted = new RegistryImages({ docker, local: refusing, registry: registry(), builds: catalog, log });
    expect(await restarted.ensure(id)).toBe(first);
    expect(files.opens(id)).toBe(opened);
  });

  it('a registry that is down marks the build broken, with the reason', async () => {
    const id = await build();
    const down = `127.0.0.1:${await freePort()}`;
    const images = new RegistryImages({ docker, local, registry: registry({ address: down }), builds: catalog, log });
    const error = await images.ensure(id).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(BuildImageError);
    const e = error as BuildImageError;
    expect(e.failure).toBe('registry');
    expect(e.lasting).toBe(true);
    expect(e.message).toMatch(new RegExp(`^the build's image could not be pushed to the registry ${down.replaceAll('.', '\\.')}: .*connection refused`));
    await expect(images.ensure(id)).rejects.toBe(e);
    expect(images.broken().get(id)).toBe(e);
    expect((await catalog.getBuild(id))?.image).toBeUndefined();
    expect(logged.some((l) => l.startsWith(id) && l.includes(`build marked broken: ${e.message}`))).toBe(true);
  });

  it('refuses to push over plain HTTP unless TAVERN_REGISTRY_INSECURE allows it, and pushes nothing', async () => {
    const id = await build();
    const images = new RegistryImages({ docker, local, registry: registry({ insecure: false }), builds: catalog, log });
    const error = await images.ensure(id).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(BuildImageError);
    expect((error as BuildImageError).message).toBe(`the Docker Engine lists the registry ${address} as insecure, so builds could go to it over plain HTTP: set TAVERN_REGISTRY_INSECURE=true to allow that, or serve the registry over HTTPS and remove it from the engine's insecure registries`);
    expect((error as BuildImageError).lasting).toBe(false);
    expect((await manifest(id)).status).toBe(404);
    expect((await catalog.getBuild(id))?.image).toBeUndefined();
  });
});
