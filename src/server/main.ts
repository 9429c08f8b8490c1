/**
 * `npm start`: the server's composition root. Reads the environment (`env.ts`), opens storage
 * (PostgreSQL when `DATABASE_URL` is set, else SQLite under `TAVERN_DATA_DIR`), wires the
 * matchmaker, uploads and the HTTP edge, runs the maintenance tick, and shuts down gracefully on
 * SIGTERM/SIGINT (stop accepting, answer in-flight requests with `Connection: close` within a
 * bounded grace, close storage, exit).
 */
import { join } from 'node:path';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createPlainServer } from 'node:http';
import { BlockList, type AddressInfo } from 'node:net';
import { FsBlobs } from '../adapters/fs/blobs.js';
import { HttpCaptchaVerifier } from '../adapters/http/captcha.js';
import { HttpVerifier } from '../adapters/http/verifier.js';
import { SystemRandom } from '../adapters/system-random.js';
import { TICK_INTERVAL_MS } from '../core/tick.js';
import type { Blobs, DirectUploads } from '../io/blobs.js';
import type { Clock, Timers } from '../io/index.js';
import { AnalyticsHistory } from '../services/analytics-history.js';
import { DemandRecorder } from '../services/demand-recorder.js';
import { LogBook } from '../services/lobby-logs.js';
import { Matchmaker } from '../services/matchmaker.js';
import { StoppedLobbies } from '../services/stopped-lobbies.js';
import { CdnSites } from '../services/cdn-sites.js';
import { Uploads } from '../services/uploads.js';
import { BcryptPool } from './cdn/bcrypt-pool.js';
import { cdnHandler } from './cdn/serve.js';
import { CertDir } from './cdn/tls.js';
import { createApp, type App } from './app.js';
import { parseEnv, type ServerEnv } from './env.js';
import { startGameProxy } from './game-proxy.js';
import { proxyMetrics, watchRouteErrors } from './proxy-metrics.js';
import { json } from './errors.js';
import type { Incoming, Outgoing } from './incoming.js';
import { closeHttpServer, createHttpServer } from './http.js';
import { withLocalCertificates, trustLine } from './local-tls.js';
import { createLogger } from './logger.js';
import { listenOr } from './ports.js';
import { createServerRuntime } from './runtime.js';
import { openStores } from './stores.js';
import { builtinSimulator } from '../sim/dashboard.js';
import { TokenIssuer } from '../services/tokens.js';

const systemClock: Clock = { now: () => Date.now() };
const systemTimers: Timers = {
  after(ms, fn) {
    const handle = setTimeout(fn, ms);
    handle.unref();
    return () => clearTimeout(handle);
  },
};

const UPLOAD_KEY_SETTING = 'upload-signing-key';
/** The key of recorded demand's seat keys (player-id pseudonyms); the setting keeps its first name. */
const DEMAND_KEY_SETTING = 'demand-digest-key';
const HOUR_MS = 3_600_000;

/** Builds and sites live in the S3 bucket of `TAVERN_S3_*` (uploaded to it directly), else on the local disk. */
async function openBlobs(env: ServerEnv): Promise<{ blobs: Blobs; direct?: DirectUploads }> {
  if (env.s3 === undefined) return { blobs: new FsBlobs(join(env.dataDir, 'blobs')) };
  const { S3Blobs } = await import('../adapters/s3/blobs.js');
  const s3 = new S3Blobs(env.s3);
  return { blobs: s3, direct: s3 };
}

const originOf = (scheme: string, host: string, port: number): string => `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;

async function main(): Promise<void> {
  const logger = createLogger();
  // HTTPS for the default *.localhost names: certificates of Tavern's local CA, made at first start.
  const { env, ca } = await withLocalCertificates(parseEnv(process.env));
  const stores = await openStores(env, logger);
  const { catalog } = stores;
  const clock = systemClock;
  const random = new SystemRandom();
  const live: { app?: App } = {};
  const starting = (): Promise<Outgoing> => Promise.resolve(json({ code: 'ERROR', message: 'starting' }, 503));
  const respond = { respond: (request: Incoming) => (live.app === undefined ? starting() : live.app.respond(request)) };
  // The lobbies' listener: the matchmaker API only (`App.lobbies`).
  const respondLobbies = { respond: (request: Incoming) => (live.app === undefined ? starting() : live.app.lobbies.respond(request)) };
  // The lobbies' subnet, when the API listens on every address: its public listener refuses them (they have their own).
  const lobbySubnets = new BlockList();
  const server = createHttpServer(respond, logger, { ...env.http, refuse: (address) => lobbySubnets.check(address, 'ipv4') });
  const servers = [server];
  await new Promise<void>((resolve) => server.listen(env.port, env.host, resolve));
  const { port } = server.address() as AddressInfo;
  const publicOrigin = env.publicOrigin ?? `http://${env.host.includes(':') ? `[${env.host}]` : env.host}:${port}`;

  const tokens = new TokenIssuer({ catalog, clock, random, ...(env.adminToken === undefined ? {} : { adminToken: env.adminToken }) });
  const logBook = new LogBook(catalog);
  const secret = await catalog.putSettingIfAbsent(UPLOAD_KEY_SETTING, Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url'));
  const { blobs, direct } = await openBlobs(env);
  const uploads = new Uploads({ catalog, blobs, clock, random, secret: new Uint8Array(Buffer.from(secret, 'base64url')), publicOrigin, ...(direct === undefined ? {} : { direct }) });
  // The CDN: its own listener (HTTP, and HTTPS with the certificate directory), same catalog and blobs.
  const certs = env.cdn?.tls === undefined ? undefined : new CertDir(env.cdn.tls.dir);
  const cdn: Record<string, string> = {};
  let cdnPort: number | undefined;
  // The CDN's basic-auth checks: worker threads, started on the first check.
  const passwords = new BcryptPool();
  let cdnTlsPort: number | undefined;
  if (env.cdn !== undefined) {
    const handler = cdnHandler({
      sites: new CdnSites(catalog, env.cdnDomain), blobs, logger, checker: passwords, clock,
      trustProxyHeaders: env.trustProxyHeaders, ...(env.rateLimits === undefined ? {} : { rateLimits: env.rateLimits }),
    });
    const plain = createPlainServer({ keepAliveTimeout: env.http.keepAliveTimeoutMs, headersTimeout: env.http.headersTimeoutMs }, handler);
    servers.push(plain);
    // A default port that is taken: any free one (the URLs the API gives carry it).
    const taken = (port: number) => (why: string): void => logger.warn({ port, why }, `CDN port ${port} is ${why}: listening on another port`);
    cdnPort = await listenOr(plain, env.cdn.host, env.cdn.port, env.cdn.fallback?.port, taken(env.cdn.port));
    cdn['cdnOrigin'] = originOf('http', env.cdn.host, cdnPort);
    if (certs !== undefined && env.cdn.tls !== undefined) {
      const secure = createHttpsServer({ SNICallback: certs.sniCallback, keepAliveTimeout: env.http.keepAliveTimeoutMs, headersTimeout: env.http.headersTimeoutMs }, handler);
      servers.push(secure);
      cdnTlsPort = await listenOr(secure, env.cdn.host, env.cdn.tls.port, env.cdn.fallback?.tlsPort, taken(env.cdn.tls.port));
      cdn['cdnTlsOrigin'] = originOf('https', env.cdn.host, cdnTlsPort);
    }
  }
  const hosted = await createServerRuntime({
    env, catalog, tokens, logBook, uploads, clock, timers: systemTimers, logger, port, publicOrigin,
    // Bridge containers reach the API at their network's gateway: a listener there, of the lobby endpoints only.
    listenAlso: async (host, on) => {
      const extra = createHttpServer(respondLobbies, logger, env.http);
      servers.push(extra);
      return listenOr(extra, host, on, undefined, () => undefined);
    },
    refuseFrom: (subnet) => {
      const [net = '', bits = '32'] = subnet.split('/');
      lobbySubnets.addSubnet(net, Number(bits), 'ipv4');
    },
  });
  const { runtime } = hosted;
  const lobbyAddress = hosted.lobbyAddress === undefined ? undefined : (lobbyId: string): string | undefined => hosted.lobbyAddress?.(lobbyId);
  const proxy = await startGameProxy({
    env: env.proxy, jobDomain: env.jobDomain, dataDir: env.dataDir, upstreamHost: env.publishHost, log: logger,
    ...(lobbyAddress === undefined ? {} : { upstreamOf: lobbyAddress }),
  });
  // Lobbies on several hosts (Swarm): a route follows its lobby to the node that runs it.
  hosted.placed?.(() => {
    proxy.readdress().catch((error: unknown) => logger.warn({ err: error }, 'pointing the game proxy at lobbies\' nodes failed'));
  });
  const egress = env.egressAllow.length > 0 ? { egress: { allow: env.egressAllow } } : {};
  // Follow-up work (the idle update after a find), awaited on shutdown before the stores close.
  const background = new Set<Promise<unknown>>();
  // Lobbies that stopped, kept with their log's last lines (24 h, 50 failures and 50 other stops per namespace).
  const stoppedLobbies = new StoppedLobbies({ store: stores.stopped, catalog });
  const matchmaker = new Matchmaker({
    store: stores.match, clock, random,
    verifier: new HttpVerifier({ ...egress, userAgent: 'Tavern' }),
    captcha: new HttpCaptchaVerifier({
      ...egress,
      userAgent: 'Tavern',
      ...(env.hcaptchaVerifyUrl === undefined ? {} : { hcaptchaUrl: env.hcaptchaVerifyUrl }),
      ...(env.turnstileVerifyUrl === undefined ? {} : { turnstileUrl: env.turnstileVerifyUrl }),
    }),
    ...(runtime === undefined ? {} : { runtime }),
    routes: proxy.routes,
    logs: logBook,
    stops: stoppedLobbies,
    effectFailed: (effect, error) => logger.warn({ effect, err: error }, 'an effect failed'),
    background: (task) => {
      const running: Promise<unknown> = task()
        .catch((error: unknown) => logger.error({ err: error }, 'background matchmaker work failed'))
        .finally(() => background.delete(running));
      background.add(running);
    },
  });
  hosted.attach(matchmaker);
  // Demand recording (TAVERN_DEMAND_RETENTION, default 7 days; off: none): buffered, written once a
  // second (the recorder's default) in batches that let waiting requests run between them. Four
  // flushes a second cost about half a point more: a flush costs as much in starting cold as in its facts.
  const demandKey = await catalog.putSettingIfAbsent(DEMAND_KEY_SETTING, Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url'));
  const recorder = env.demandRetentionMs === undefined
    ? undefined
    : new DemandRecorder({
        store: stores.demand, clock, timers: systemTimers, key: demandKey, retentionMs: env.demandRetentionMs,
        onError: (error) => logger.warn({ err: error }, 'recorded demand could not be written: kept to retry'),
      });
  recorder?.attach(matchmaker.hub);
  // The dashboard's per-minute history (TAVERN_ANALYTICS_RETENTION, default 7 days): this process's
  // counts, one row per namespace when each minute ends.
  const history = new AnalyticsHistory({
    store: stores.history, world: matchmaker, clock, timers: systemTimers, instanceId: random.uuid(), retentionMs: env.analyticsRetentionMs,
    onError: (error) => logger.warn({ err: error }, 'analytics history could not be written: kept to retry'),
  });
  history.attach(matchmaker.hub);
  const started = createApp({
    catalog, matchmaker, clock, random, timers: systemTimers, regions: env.regions, tokens, logBook, uploads, logger, stoppedLobbies, history, simulator: builtinSimulator,
    health: () => ({ runtime: hosted.status(), proxy: proxy.status() }),
    metrics: () => proxyMetrics(proxy),
    ...(hosted.nodes === undefined ? {} : { nodes: hosted.nodes }),
    demand: { store: stores.demand, ...(recorder === undefined ? {} : { recorder }) },
    config: {
      publicOrigin,
      ...(lobbyAddress === undefined ? {} : { lobbyAddress }),
      trustProxyHeaders: env.trustProxyHeaders,
      egressAllow: env.egressAllow,
      ...(env.tierPrices === undefined ? {} : { tierPrices: env.tierPrices }),
      ...(env.rateLimits === undefined ? {} : { rateLimits: env.rateLimits }),
      ...(env.adminToken === undefined ? {} : { adminToken: env.adminToken }),
      ...(env.metricsToken === undefined ? {} : { metricsToken: env.metricsToken }),
      hostNetworkAllowed: env.allowHostNetwork,
      ...(env.cdnDomain === undefined ? {} : { cdnDomain: env.cdnDomain }),
      ...(cdnPort === undefined ? {} : { cdnPort }),
      ...(certs === undefined ? {} : { cdnTls: certs }),
      ...(cdnTlsPort === undefined ? {} : { cdnTlsPort }),
      ...(env.jobDomain === undefined ? {} : { jobDomain: env.jobDomain }),
      ...proxy.settings,
    },
  });
  await started.ready();
  await proxy.restore(await matchmaker.snapshot());
  const stopRouteErrors = watchRouteErrors(proxy, (lobbyId, line) => {
    logBook.append({ type: 'append-log', lobbyId, at: clock.now(), line }).catch((error: unknown) => logger.warn({ err: error, lobbyId }, 'a route error could not be logged'));
  }, 10_000);
  // The runtime's first health check (the engine, the lobbies' network and listener, adoption)
  // before any request is answered: until then the API answers 503 starting, never a find refused
  // for want of a runtime it has not looked for yet.
  await hosted.run();
  live.app = started;
  const admin = await tokens.adminToken();
  // Printed on the start that generated it (set TAVERN_ADMIN_TOKEN to choose your own; `tavern admin token` shows it again).
  if (admin.generated) process.stdout.write(`\nTavern admin token: ${admin.token}\n(shown on this first start; \`tavern admin token\` prints it again)\n\n`);
  if (ca !== undefined) process.stdout.write(`${trustLine(ca.certFile, ca.created)}\n`);

  const tick = setInterval(() => {
    matchmaker.maintain().catch((error: unknown) => logger.error({ err: error }, 'maintenance failed'));
  }, TICK_INTERVAL_MS);
  // Uploads that expired without completing: their parts aborted and deleted.
  const sweep = setInterval(() => {
    uploads.sweepExpired().catch((error: unknown) => logger.warn({ err: error }, 'sweeping expired uploads failed'));
  }, 60_000);
  sweep.unref();
  history.start();
  const prune = (): void => {
    recorder?.prune().catch((error: unknown) => logger.warn({ err: error }, 'pruning recorded demand failed'));
    history.prune().catch((error: unknown) => logger.warn({ err: error }, 'pruning analytics history failed'));
  };
  prune();
  const pruning = setInterval(prune, HOUR_MS);
  pruning.unref();

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    clearInterval(tick);
    clearInterval(sweep);
    clearInterval(pruning);
    stopRouteErrors();
    hosted.close();
    // Long polls and seat waits answer now; each answer closes its connection.
    started.close();
    Promise.all(servers.map((s) => closeHttpServer(s, env.shutdownGraceMs)))
      .then(() => Promise.allSettled([...background]))
      .then(() => passwords.close())
      .then(() => recorder?.close())
      .then(() => history.close())
      .then(() => proxy.close())
      .then(() => stores.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'closing storage failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // Said once everything is up, the signal handlers included: a SIGTERM from here on is a graceful stop.
  logger.info({ publicOrigin, ...cdn, storage: env.databaseUrl === undefined ? 'sqlite' : 'postgres', regions: env.regions.map((r) => r.id), runtime: hosted.status().runtime, proxy: proxy.settings?.proxyPorts ?? 'off' }, 'tavern listening');
  process.stdout.write(`Tavern is up: API ${publicOrigin}, dashboard ${publicOrigin}/dashboard\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`tavern: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
