/**
 * The in-process server of the route tests: memory catalog and match store, a fake runtime, manual
 * timers on a manual clock, scripted verifier and captcha provider, and helpers to call the app.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CaptchaCheck, CaptchaVerdict } from '../../src/core/admission/captcha.js';
import type { VerificationCheck, VerificationResponse } from '../../src/core/admission/verification.js';
import { createWorld, type RegionInfo } from '../../src/core/world.js';
import { FakeRuntime } from '../../src/adapters/fake/runtime.js';
import { FsBlobs } from '../../src/adapters/fs/blobs.js';
import { MemoryAnalyticsHistoryStore } from '../../src/adapters/memory/analytics-history.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/catalog.js';
import { MemoryDemandStore } from '../../src/adapters/memory/demand-store.js';
import { MemoryMatchStore } from '../../src/adapters/memory/match-store.js';
import { MemoryStoppedLobbyStore } from '../../src/adapters/memory/stopped-lobbies.js';
import type { Blobs, DirectUploads } from '../../src/io/blobs.js';
import type { Clock, ProxyRoutes, Random, Timers } from '../../src/io/index.js';
import type { Logger } from '../../src/io/log.js';
import type { ClusterNodes } from '../../src/io/runtime.js';
import { createApp, type App } from '../../src/server/app.js';
import type { AppConfig } from '../../src/server/deps.js';
import { withLobbyEnv } from '../../src/services/lobby-env.js';
import { TokenIssuer } from '../../src/services/tokens.js';
import { AnalyticsHistory } from '../../src/services/analytics-history.js';
import { DemandRecorder } from '../../src/services/demand-recorder.js';
import { LogBook } from '../../src/services/lobby-logs.js';
import { Matchmaker } from '../../src/services/matchmaker.js';
import { StoppedLobbies } from '../../src/services/stopped-lobbies.js';
import { builtinSimulator } from '../../src/sim/dashboard.js';
import { Uploads, type UploadLimits } from '../../src/services/uploads.js';

export const ADMIN = 'test-admin-token';
export const ORIGIN = 'http://tavern.test';
export const REGIONS: readonly RegionInfo[] = [
  { id: 'local', displayName: 'Local', provider: 'Tavern', coords: { latitude: 51.5, longitude: -0.1 } },
  { id: 'lnd-atl', displayName: 'Atlanta', provider: 'Tavern', coords: { latitude: 33.7, longitude: -84.4 } },
];

/** Timers that fire only when the test moves the clock (or `flush`es). */
export class ManualTimers implements Timers {
  #pending: { at: number; fn: () => void; id: number }[] = [];
  #next = 0;
  constructor(private readonly clock: { now(): number; set(t: number): void }) {}

  after(ms: number, fn: () => void): () => void {
    const id = this.#next++;
    this.#pending.push({ at: this.clock.now() + ms, fn, id });
    return () => {
      this.#pending = this.#pending.filter((p) => p.id !== id);
    };
  }

  get pending(): number {
    return this.#pending.length;
  }

  /** Moves the clock by `ms`, firing every timer due on the way, in order. */
  advance(ms: number): void {
    const end = this.clock.now() + ms;
    for (;;) {
      const due = this.#pending.filter((p) => p.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) break;
      this.#pending = this.#pending.filter((p) => p.id !== due.id);
      this.clock.set(Math.max(this.clock.now(), due.at));
      due.fn();
    }
    this.clock.set(end);
  }
}

export class ManualClock implements Clock {
  t = Date.UTC(2024, 0, 1);
  now(): number {
    return this.t;
  }
  set(t: number): void {
    this.t = t;
  }
}

export interface HarnessOptions {
  readonly readyAfterMs?: number;
  readonly runtime?: boolean;
  readonly config?: Partial<AppConfig>;
  readonly regions?: readonly RegionInfo[];
  /** The public origin (default {@link ORIGIN}); the end-to-end test uses the listening address. */
  readonly origin?: string;
  readonly logger?: Logger;
  /** The blob store (default: the local disk under a temp dir) and, for S3, the direct uploads it offers. */
  readonly blobs?: Blobs;
  readonly direct?: DirectUploads;
  readonly limits?: Partial<UploadLimits>;
  /** The game proxy's routes (default: none kept). */
  readonly routes?: ProxyRoutes;
  /** Record demand (a memory demand store and a recorder on the manual timers); default off. */
  readonly demand?: boolean;
  /** What `GET /metrics` answers (default: no metrics, 404). */
  readonly metrics?: () => Promise<string>;
  /** What `/health` reports beside `status: ok` (default: nothing more). */
  readonly health?: () => Readonly<Record<string, unknown>>;
  /** The runtime's nodes (default: none, as with one engine). */
  readonly nodes?: ClusterNodes;
}

export interface Call {
  readonly token?: string;
  readonly body?: unknown;
  /** A raw body (sent as is). */
  readonly raw?: string | Uint8Array;
  readonly headers?: Record<string, string>;
  readonly host?: string;
}

/** Wire JSON in tests: any member is more JSON (check shapes with `expect`, read strings with {@link str}). */
export interface W {
  readonly [key: string]: W;
}

/** The string at a JSON position (throws when it is not one). */
export const str = (w: W | undefined): string => {
  if (typeof w !== 'string') throw new Error(`expected a string, got ${JSON.stringify(w)}`);
  return w;
};

export interface Reply {
  readonly status: number;
  readonly body: W;
  readonly headers: Headers;
}

/** Lets pending promise callbacks run (a few macrotask turns). */
export const settle = async (turns = 5): Promise<void> => {
  for (let i = 0; i < turns; i++) await new Promise<void>((r) => setImmediate(r));
};

/** Lets promise callbacks run until `condition` holds (fails after many turns: a stuck test fails fast). */
export const until = async (condition: () => boolean, turns = 2_000): Promise<void> => {
  for (let i = 0; i < turns; i++) {
    if (condition()) return;
    await new Promise<void>((r) => setImmediate(r));
  }
  throw new Error('the condition never held');
};

export function harness(options: HarnessOptions = {}) {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  let seed = 1;
  const random: Random = { uuid: () => randomUUID(), u32: () => (seed = (seed * 1_103_515_245 + 12_345) >>> 0) };
  const regions = options.regions ?? REGIONS;
  const origin = options.origin ?? ORIGIN;
  const catalog = new MemoryCatalogStore();
  const store = new MemoryMatchStore(createWorld(regions));
  const logBook = new LogBook(catalog);
  const tokens = new TokenIssuer({ catalog, clock, random, adminToken: ADMIN });
  const verifications: VerificationCheck[] = [];
  const verify = { answer: (_c: VerificationCheck): VerificationResponse => ({ kind: 'status', status: 200 }) };
  const captchas: CaptchaCheck[] = [];
  const captcha = { answer: (_c: CaptchaCheck): CaptchaVerdict => ({ success: true }) };
  const runtime = new FakeRuntime({ timers, clock, logs: logBook, ...(options.readyAfterMs === undefined ? {} : { readyAfterMs: options.readyAfterMs }) });
  const stoppedLobbies = new StoppedLobbies({ store: new MemoryStoppedLobbyStore(), catalog });
  const matchmaker = new Matchmaker({
    store, clock, random,
    verifier: { verify: (c) => (verifications.push(c), Promise.resolve(verify.answer(c))) },
    captcha: { verify: (c) => (captchas.push(c), Promise.resolve(captcha.answer(c))) },
    ...(options.runtime === false ? {} : { runtime: withLobbyEnv(runtime, { tokens, catalog, publicOrigin: origin }) }),
    routes: options.routes ?? { bind: () => Promise.resolve(), unbind: () => Promise.resolve() },
    logs: logBook,
    stops: stoppedLobbies,
  });
  runtime.attach(matchmaker);
  const blobDir = mkdtempSync(join(tmpdir(), 'tavern-server-test-'));
  const blobs = options.blobs ?? new FsBlobs(blobDir);
  const uploads = new Uploads({
    catalog, blobs, clock, random, secret: new Uint8Array(32).fill(7), publicOrigin: origin,
    ...(options.direct === undefined ? {} : { direct: options.direct }), ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
  const demandStore = new MemoryDemandStore();
  const recorder = options.demand === true ? new DemandRecorder({ store: demandStore, clock, timers, key: 'test-digest-key' }) : undefined;
  recorder?.attach(matchmaker.hub);
  const demand = { store: demandStore, ...(recorder === undefined ? {} : { recorder }) };
  const historyStore = new MemoryAnalyticsHistoryStore();
  const history = new AnalyticsHistory({ store: historyStore, world: matchmaker, clock, timers, instanceId: 'test-instance' });
  history.attach(matchmaker.hub);
  const app: App = createApp({
    catalog, matchmaker, clock, random, timers, regions, tokens, logBook, uploads, stoppedLobbies, history, simulator: builtinSimulator,
    ...(recorder === undefined ? {} : { demand }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.health === undefined ? {} : { health: options.health }),
    ...(options.nodes === undefined ? {} : { nodes: options.nodes }),
    config: { publicOrigin: origin, adminToken: ADMIN, ...options.config },
  });

  const request = (method: string, path: string, call: Call = {}): Request => {
    const headers = new Headers(call.headers);
    if (call.token !== undefined) headers.set('authorization', `Bearer ${call.token}`);
    if (call.host !== undefined) headers.set('host', call.host);
    if (!headers.has('x-forwarded-for') && !headers.has('cf-connecting-ip')) headers.set('x-forwarded-for', '203.0.113.7');
    const body = call.raw ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
    if (body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
    const url = path.startsWith('http') ? path : `${origin}${path}`;
    return new Request(url, { method, headers, ...(body === undefined ? {} : { body }) });
  };

  const call = async (method: string, path: string, c: Call = {}): Promise<Reply> => {
    const res = await app.handle(request(method, path, c));
    const text = await res.text();
    return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as W, headers: res.headers };
  };

  /** A game with a published version (`config`), its prod namespace and tokens. */
  const setup = async (config: (buildId: string) => unknown = defaultConfig, nameId = 'my-game') => {
    const game = await call('POST', '/cloud/games', { token: ADMIN, body: { name_id: nameId, display_name: 'My Game', developer_group_id: randomUUID() } });
    if (game.status !== 200) throw new Error(JSON.stringify(game.body));
    const gameId = str(game.body['game_id']);
    const cloud = str((await call('POST', `/cloud/games/${gameId}/tokens/cloud`, { token: ADMIN })).body['token']);
    const got = await call('GET', `/cloud/games/${gameId}`, { token: cloud });
    const prod = (got.body['game']?.['namespaces'] as unknown as { name_id: string; namespace_id: string }[]).find((n) => n.name_id === 'prod');
    if (prod === undefined) throw new Error('no prod namespace');
    const nsId = prod.namespace_id;
    const buildId = await completeBuild(gameId, cloud);
    const version = await call('POST', `/cloud/games/${gameId}/versions`, { token: cloud, body: { display_name: 'v1', config: config(buildId) } });
    if (version.status !== 200) throw new Error(JSON.stringify(version.body));
    const versionId = str(version.body['version_id']);
    const set = await call('PUT', `/cloud/games/${gameId}/namespaces/${nsId}/version`, { token: cloud, body: { version_id: versionId } });
    if (set.status !== 200) throw new Error(JSON.stringify(set.body));
    const pub = str((await call('POST', `/cloud/games/${gameId}/namespaces/${nsId}/tokens/public`, { token: cloud })).body['token']);
    return { gameId, cloud, nsId, versionId, pub, buildId };
  };

  /** A build whose upload is complete (a version can use it). */
  const completeBuild = async (gameId: string, cloud: string): Promise<string> => {
    const build = await call('POST', `/cloud/games/${gameId}/builds`, {
      token: cloud, body: { display_name: 'Build', image_tag: `game:${randomUUID().slice(0, 8)}`, image_file: { path: 'image.tar', content_length: 3 } },
    });
    const url = str(build.body['image_presigned_request']?.['url']);
    // Tavern's own presigned URLs are answered in process; an S3 bucket's over HTTP.
    const put = url.startsWith(origin) ? await app.handle(new Request(url, { method: 'PUT', body: 'abc' })) : await fetch(url, { method: 'PUT', body: 'abc' });
    if (put.status !== 200) throw new Error(await put.text());
    await call('POST', `/cloud/uploads/${str(build.body['upload_id'])}/complete`, { token: cloud });
    return str(build.body['build_id']);
  };

  const cleanup = (): void => {
    app.close();
    rmSync(blobDir, { recursive: true, force: true });
  };

  return { origin, app, call, request, setup, demand, recorder, stoppedLobbies, history, historyStore, completeBuild, blobs, blobDir, clock, timers, random, catalog, store, matchmaker, runtime, tokens, logBook, uploads, verify, verifications, captcha, captchas, cleanup };
}

export type Harness = ReturnType<typeof harness>;

/** A matchmaker config: modes `default` and `custom` (create enabled, taggable, dynamic max) in `local` and `lnd-atl`. */
export const defaultConfig = (imageId: string = randomUUID()): unknown => ({
  matchmaker: {
    regions: { local: {}, 'lnd-atl': {} },
    max_players: 4,
    docker: { image_id: imageId, ports: { default: { port: 7777, protocol: 'udp' }, web: { port: 8080, protocol: 'https' } } },
    game_modes: {
      default: {},
      custom: { actions: { create: { enabled: true, enable_public: true } }, taggable: true, allow_dynamic_max_players: true },
    },
  },
});
