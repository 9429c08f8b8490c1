/**
 * `tavern deploy`: the Rivet CLI's deploy flow (wire.md §6.4) against Tavern. Reads the project
 * config, turns each docker block without `image_id` into an uploaded build, the `cdn` block
 * without `site_id` into an uploaded site, creates the version and publishes it to the namespace.
 * Builds and sites are named by their content's SHA-256, so a re-run after a failure reuses what
 * was already uploaded; a failing step says which it was and what was already done.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { produce } from 'immer';
import { checkGate, type GateCondition } from '../sim/preview/gate.js';
import { gateLines, previewLines, wireRows, type PreviewWire } from '../sim/preview/report.js';
import type { Api, Json } from './api.js';
import { checkConfigKeys } from './config-keys.js';
import { StepError } from './errors.js';
import { findNamespace, getGame, resolveGameId, type NamespaceSummary } from './game.js';
import { newImageTag, prepareImage, type ImageSource } from './image.js';
import type { Progress } from './progress.js';
import { PLACEHOLDER_ID, preflight } from './preflight.js';
import { loadProjectConfig } from './project-config.js';
import { collectSite, runBuildCommand } from './site.js';
import { uploadParts, type PartUpload } from './upload.js';
import { cliOnlyProblems, dockerBlocks, stripCliKeys, type DockerBlock } from './version-config.js';

export interface DeployOptions {
  readonly namespace: string;
  readonly configPath?: string;
  readonly overrides: readonly string[];
  readonly game?: string;
  readonly name?: string;
  readonly concurrency?: number;
  /** Publish only when the preview holds every condition (`--gate`); otherwise nothing is built. */
  readonly gate?: readonly GateCondition[];
  /** The preview's window (`--since`, default the server's 7 days) and seed. */
  readonly since?: string;
  readonly seed?: number;
}

export interface DeployIo {
  readonly cwd: string;
  readonly docker: () => Docker;
  readonly progress: Progress;
  /** Status lines (stderr). */
  readonly log: (line: string) => void;
  /** Where build commands write their output. */
  readonly commandOutput: NodeJS.WritableStream;
  readonly now: () => Date;
}

export interface DeployResult {
  readonly gameId: string;
  readonly namespaceId: string;
  readonly versionId: string;
  readonly buildIds: readonly string[];
  readonly siteId?: string;
  /** Where the site answers, when the server runs a CDN (its `TAVERN_CDN_DOMAIN` and port). */
  readonly cdnUrl?: string;
}

interface Presigned {
  readonly path: string;
  readonly url: string;
  readonly byte_offset: number;
  readonly content_length: number;
}

interface Listed {
  readonly display_name: string;
  readonly complete: boolean;
}

/** The version name Rivet's CLI gives by default: the UTC time, e.g. `Thu Nov 26 14:40:00 2026`. */
export const defaultVersionName = (now: Date): string => now.toUTCString().replace(',', '').replace(' GMT', '');

const buildName = (sha256: string): string => `build ${sha256.slice(0, 32)}`;
const siteName = (sha256: string): string => `site ${sha256.slice(0, 32)}`;

/** The source of a docker block's image, or undefined when it has `image_id` or nothing to build. */
const sourceOf = (block: Json): ImageSource | undefined => {
  if (block['image_id'] !== undefined) return undefined;
  if (typeof block['dockerfile'] === 'string') return { dockerfile: block['dockerfile'], buildArgs: (block['build_args'] ?? {}) as Record<string, string> };
  if (typeof block['image'] === 'string') return { image: block['image'] };
  return undefined;
};

/** Runs `fn` as the step `name`; a failure becomes a {@link StepError} listing `done`. */
async function step<T>(name: string, done: readonly string[], fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof StepError) throw e;
    throw new StepError(name, e, [...done]);
  }
}

/** What a deploy will do, checked by the server before anything is built. */
interface Plan {
  readonly project: Awaited<ReturnType<typeof loadProjectConfig>>;
  readonly gameId: string;
  readonly gameName: string;
  readonly ns: NamespaceSummary;
  readonly blocks: readonly DockerBlock[];
  readonly cdn: Json | undefined;
  readonly buildsSite: boolean;
  readonly displayName: string;
  /** The config as it will be sent, placeholders where builds and the site will go. */
  readonly checked: Json;
}

async function plan(api: Api, options: DeployOptions, io: DeployIo, done: string[]): Promise<Plan> {
  const project = await loadProjectConfig(io.cwd, { namespace: options.namespace, overrides: options.overrides, ...(options.configPath === undefined ? {} : { configPath: options.configPath }) });
  cliOnlyProblems(project.config, project.files[0] ?? 'config');
  checkConfigKeys(project.config, project.sources);
  const gameId = await step('finding the game', done, () => resolveGameId(api, options.game));
  const game = await step('reading the game', done, () => getGame(api, gameId));
  const ns = findNamespace(game, options.namespace);

  const blocks = dockerBlocks(project.config);
  const cdn = project.config['cdn'] as Json | undefined;
  const buildsSite = cdn !== undefined && cdn['site_id'] === undefined && (typeof cdn['build_output'] === 'string' || typeof cdn['build_command'] === 'string');
  const displayName = options.name ?? defaultVersionName(io.now());
  // The whole config checked by the server before anything is built or uploaded.
  const toBuild = blocks.filter((b) => sourceOf(b.value) !== undefined);
  const placeholders = new Map(toBuild.map((b) => [JSON.stringify(sourceOf(b.value)), PLACEHOLDER_ID]));
  const checked = finalConfig(project.config, blocks, placeholders, buildsSite ? PLACEHOLDER_ID : undefined);
  await step('checking the config with the server', done, () => preflight(api, gameId, checked, { built: toBuild, site: buildsSite, displayName }));
  return { project, gameId, gameName: game.name_id, ns, blocks, cdn, buildsSite, displayName, checked };
}

/** The server's preview of the planned config against the namespace's live version. */
async function askPreview(api: Api, p: Plan, options: DeployOptions, done: string[]): Promise<PreviewWire> {
  const query = new URLSearchParams({ ...(options.since === undefined ? {} : { since: options.since }), ...(options.seed === undefined ? {} : { seed: String(options.seed) }) }).toString();
  const path = `/cloud/games/${p.gameId}/namespaces/${p.ns.namespace_id}/preview${query === '' ? '' : `?${query}`}`;
  return (await step('previewing on recorded demand', done, () => api.call<{ preview: PreviewWire }>('POST', path, p.checked))).preview;
}

/**
 * `tavern deploy --preview`: the config checked by the server and previewed on the namespace's
 * recorded demand against its live version; nothing is built, uploaded or created.
 *
 * @example
 * const preview = await previewOnly(api, { namespace: 'prod', overrides: [] }, io);
 */
export async function previewOnly(api: Api, options: DeployOptions, io: DeployIo): Promise<PreviewWire> {
  const done: string[] = [];
  const p = await plan(api, options, io, done);
  io.log(`previewing ${p.project.files.join(' + ')} against the live version of ${p.gameName}/${p.ns.name_id} (nothing is built)`);
  return askPreview(api, p, options, done);
}

/**
 * @example
 * const r = await deploy(api, { namespace: 'prod', overrides: [] }, io);
 */
export async function deploy(api: Api, options: DeployOptions, io: DeployIo): Promise<DeployResult> {
  const done: string[] = [];
  const planned = await plan(api, options, io, done);
  const { project, gameId, ns, blocks, cdn, buildsSite, displayName } = planned;
  io.log(`deploying ${project.files.join(' + ')} to ${planned.gameName}/${ns.name_id}`);
  if (options.gate !== undefined) {
    const preview = await askPreview(api, planned, options, done);
    const checks = checkGate(options.gate, wireRows(preview));
    const lines = [...previewLines(preview), ...gateLines(checks)];
    if (checks.some((c) => !c.holds)) throw new StepError('the preview gate', new Error(`the new config does not hold the gate, so nothing was built or published:\n${lines.join('\n')}`), []);
    for (const line of lines) io.log(line);
  }

  const tmp = await mkdtemp(join(tmpdir(), 'tavern-deploy-'));
  try {
    const imageIds = new Map<string, string>();
    for (const block of blocks) {
      const source = sourceOf(block.value);
      if (source === undefined) continue;
      const key = JSON.stringify(source);
      if (imageIds.has(key)) continue;
      const label = 'dockerfile' in source ? source.dockerfile : source.image;
      imageIds.set(key, await step(`the image of ${block.path} (${label})`, done, () => uploadImage(api, gameId, source, project.root, join(tmp, `image-${imageIds.size}.tar`), options, io, done)));
    }
    let siteId: string | undefined;
    if (buildsSite && cdn !== undefined) {
      const site = { api, gameId, namespace: ns };
      siteId = await step('the cdn site', done, () => uploadSite(site, cdn, project.root, options, io, done));
    }
    const config = finalConfig(project.config, blocks, imageIds, siteId);
    const { version_id: versionId } = await step('creating the version', done, () => api.call<{ version_id: string }>('POST', `/cloud/games/${gameId}/versions`, { display_name: displayName, config }));
    done.push(`version ${displayName} (${versionId})`);
    await step(`publishing to ${ns.name_id}`, done, () => api.call('PUT', `/cloud/games/${gameId}/namespaces/${ns.namespace_id}/version`, { version_id: versionId }));
    // Published: the site's URL is a courtesy, so a failure to read it fails nothing.
    const cdnUrl = siteId === undefined
      ? undefined
      : await api.call<{ namespace?: { config?: { cdn?: { url?: unknown } } } }>('GET', `/cloud/games/${gameId}/namespaces/${ns.namespace_id}`)
        .then((r) => r.namespace?.config?.cdn?.url, () => undefined);
    return {
      gameId, namespaceId: ns.namespace_id, versionId, buildIds: [...new Set(imageIds.values())],
      ...(siteId === undefined ? {} : { siteId }),
      ...(typeof cdnUrl === 'string' ? { cdnUrl } : {}),
    };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** The config sent: image and site ids filled in (mode blocks without their own inherit the top one), CLI-only keys removed. */
function finalConfig(config: Json, blocks: readonly DockerBlock[], imageIds: ReadonlyMap<string, string>, siteId: string | undefined): Json {
  const withIds = produce(config, (draft) => {
    const top = blocks.find((b) => b.mode === undefined);
    const topSource = top === undefined ? undefined : sourceOf(top.value);
    const topId = topSource === undefined ? (top?.value['image_id'] as string | undefined) : imageIds.get(JSON.stringify(topSource));
    for (const block of blocks) {
      const target = block.locate(draft);
      const source = sourceOf(block.value);
      const id = source === undefined ? undefined : imageIds.get(JSON.stringify(source));
      if (id !== undefined) target['image_id'] = id;
      else if (block.mode !== undefined && target['image_id'] === undefined && topId !== undefined) target['image_id'] = topId;
    }
    if (siteId !== undefined) (draft['cdn'] as Json)['site_id'] = siteId;
  });
  return stripCliKeys(withIds);
}

async function uploadImage(api: Api, gameId: string, source: ImageSource, root: string, file: string, options: DeployOptions, io: DeployIo, done: string[]): Promise<string> {
  io.log('dockerfile' in source ? `building ${source.dockerfile}` : `saving ${source.image}`);
  const image = await prepareImage(io.docker(), root, source, file);
  const name = buildName(image.sha256);
  const existing = (await api.call<{ builds: (Listed & { build_id: string })[] }>('GET', `/cloud/games/${gameId}/builds`)).builds.find((b) => b.display_name === name && b.complete);
  if (existing !== undefined) {
    io.log(`build ${existing.build_id} already holds this image (sha256 ${image.sha256.slice(0, 12)}): not uploaded again`);
    done.push(`build ${existing.build_id} (reused)`);
    return existing.build_id;
  }
  const build = await api.call<{ build_id: string; upload_id: string; image_presigned_requests: Presigned[] }>('POST', `/cloud/games/${gameId}/builds`, {
    display_name: name, image_tag: newImageTag(), image_file: { path: 'image.tar', content_type: 'binary/octet-stream', content_length: image.bytes },
    multipart_upload: true, kind: 'docker_image', compression: 'none',
  });
  const parts: PartUpload[] = build.image_presigned_requests.map((p) => ({ url: p.url, file, offset: p.byte_offset, length: p.content_length, contentType: 'binary/octet-stream', name: `image.tar bytes ${p.byte_offset}+${p.content_length}` }));
  io.progress.start(`build ${build.build_id.slice(0, 8)}`, image.bytes);
  try {
    await uploadParts(parts, { ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }), progress: io.progress });
  } finally {
    io.progress.stop();
  }
  await api.call('POST', `/cloud/uploads/${build.upload_id}/complete`, {});
  done.push(`build ${build.build_id}`);
  return build.build_id;
}

/**
 * What a site's build command is given besides `build_env`, as Rivet's CLI gave it: where the
 * game's client finds the API (`RIVET_API_ENDPOINT`) and which namespace it deploys to.
 */
export const buildCommandEnv = (origin: string, namespace: { readonly namespace_id: string; readonly name_id: string }): Record<string, string> => ({
  RIVET_API_ENDPOINT: origin,
  RIVET_NAMESPACE: namespace.name_id,
  RIVET_NAMESPACE_ID: namespace.namespace_id,
});

async function uploadSite(target: { readonly api: Api; readonly gameId: string; readonly namespace: NamespaceSummary }, cdn: Json, root: string, options: DeployOptions, io: DeployIo, done: string[]): Promise<string> {
  const { api, gameId } = target;
  if (typeof cdn['build_command'] === 'string') {
    io.log(`running ${cdn['build_command']}`);
    const env = { ...buildCommandEnv(api.origin, target.namespace), ...(cdn['build_env'] ?? {}) as Record<string, string> };
    await runBuildCommand(cdn['build_command'], root, io.commandOutput, env);
  }
  const site = await collectSite(root, typeof cdn['build_output'] === 'string' ? cdn['build_output'] : '.');
  const name = siteName(site.sha256);
  const existing = (await api.call<{ sites: (Listed & { site_id: string })[] }>('GET', `/cloud/games/${gameId}/cdn/sites`)).sites.find((s) => s.display_name === name && s.complete);
  if (existing !== undefined) {
    io.log(`site ${existing.site_id} already holds these ${site.files.length} files: not uploaded again`);
    done.push(`site ${existing.site_id} (reused)`);
    return existing.site_id;
  }
  const created = await api.call<{ site_id: string; upload_id: string; presigned_requests: Presigned[] }>('POST', `/cloud/games/${gameId}/cdn/sites`, {
    display_name: name, files: site.files.map((f) => ({ path: f.path, content_type: f.contentType, content_length: f.bytes })),
  });
  const byPath = new Map(site.files.map((f) => [f.path, f]));
  const parts: PartUpload[] = created.presigned_requests.map((p) => {
    const f = byPath.get(p.path);
    if (f === undefined) throw new Error(`the server presigned a file that was not asked for: ${p.path}`);
    return { url: p.url, file: f.file, offset: 0, length: f.bytes, contentType: f.contentType, name: p.path };
  });
  const total = site.files.reduce((n, f) => n + f.bytes, 0);
  io.progress.start(`site ${created.site_id.slice(0, 8)} (${site.files.length} files)`, total);
  try {
    await uploadParts(parts, { ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }), progress: io.progress });
  } finally {
    io.progress.stop();
  }
  await api.call('POST', `/cloud/uploads/${created.upload_id}/complete`, {});
  done.push(`site ${created.site_id}`);
  return created.site_id;
}
