/**
 * The CDN tests' world: the route harness with a CDN listener on 127.0.0.1 (domain `cdn.test`),
 * helpers that upload a site and publish it as a namespace's version through the API, and raw
 * HTTP requests with any `Host` and headers.
 */
import { createServer, request, Agent, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CdnSites } from '../../src/services/cdn-sites.js';
import { BcryptPool, type PasswordChecker } from '../../src/server/cdn/bcrypt-pool.js';
import { cdnHandler, type CdnDeps } from '../../src/server/cdn/serve.js';
import { defaultConfig, harness, str, type Harness, type HarnessOptions } from './harness.js';

export const CDN_DOMAIN = 'cdn.test';

export interface SiteFile {
  readonly path: string;
  readonly body: string | Uint8Array;
  readonly contentType?: string;
}

export interface Got {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface CdnWorld {
  readonly h: Harness;
  readonly port: number;
  readonly gameId: string;
  readonly cloud: string;
  readonly nsId: string;
  /** Uploads the files as a completed site; its id. */
  site(files: readonly SiteFile[]): Promise<string>;
  /** A version of the game using the site (and routes); its id. */
  version(siteId: string, routes?: unknown): Promise<string>;
  /** Makes the version current in the namespace (default prod). */
  publish(versionId: string, nsId?: string): Promise<void>;
  /** Uploads and publishes a site in one go (prod by default). */
  deploy(files: readonly SiteFile[], routes?: unknown, nsId?: string): Promise<void>;
  get(host: string, path: string, headers?: Record<string, string>, method?: string): Promise<Got>;
  close(): Promise<void>;
}

/** The CDN handler's settings a test may choose (default: a one-worker bcrypt pool, no auth limits, the harness clock). */
export type CdnOptions = Partial<Pick<CdnDeps, 'checker' | 'trustProxyHeaders' | 'rateLimits' | 'logger'>>;

export async function cdnWorld(nameId = 'my-game', options: HarnessOptions = {}, cdn: CdnOptions = {}): Promise<CdnWorld> {
  const h = harness({ ...options, config: { cdnDomain: CDN_DOMAIN } });
  const { gameId, cloud, nsId, buildId } = await h.setup(undefined, nameId);
  // Its workers start on the first check: none when the test brings its own checker.
  const pool = new BcryptPool({ workers: 1 });
  const checker: PasswordChecker = cdn.checker ?? pool;
  const server: Server = createServer(cdnHandler({ ...cdn, sites: new CdnSites(h.catalog, CDN_DOMAIN), blobs: h.blobs, checker, clock: h.clock }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });

  const site = async (files: readonly SiteFile[]): Promise<string> => {
    const created = await h.call('POST', `/cloud/games/${gameId}/cdn/sites`, {
      token: cloud,
      body: {
        display_name: 'Site',
        files: files.map((f) => ({ path: f.path, content_length: Buffer.byteLength(f.body), ...(f.contentType === undefined ? {} : { content_type: f.contentType }) })),
      },
    });
    if (created.status !== 200) throw new Error(JSON.stringify(created.body));
    const presigned = created.body['presigned_requests'] as unknown as { path: string; url: string }[];
    for (const p of presigned) {
      const file = files.find((f) => f.path === p.path);
      const body = file?.body ?? '';
      const headers = file?.contentType === undefined ? {} : { 'content-type': file.contentType };
      // Tavern's own presigned URLs are answered in process; an S3 bucket's over HTTP.
      const put = p.url.startsWith(h.origin) ? await h.app.handle(new Request(p.url, { method: 'PUT', body, headers })) : await fetch(p.url, { method: 'PUT', body, headers });
      if (put.status !== 200) throw new Error(await put.text());
    }
    const done = await h.call('POST', `/cloud/uploads/${str(created.body['upload_id'])}/complete`, { token: cloud });
    if (done.status !== 200) throw new Error(JSON.stringify(done.body));
    return str(created.body['site_id']);
  };

  let versions = 0;
  const version = async (siteId: string, routes?: unknown): Promise<string> => {
    versions += 1;
    const config = { ...(defaultConfig(buildId) as object), cdn: { site_id: siteId, ...(routes === undefined ? {} : { routes }) } };
    const v = await h.call('POST', `/cloud/games/${gameId}/versions`, { token: cloud, body: { display_name: `cdn ${versions}`, config } });
    if (v.status !== 200) throw new Error(JSON.stringify(v.body));
    return str(v.body['version_id']);
  };

  const publish = async (versionId: string, ns = nsId): Promise<void> => {
    const set = await h.call('PUT', `/cloud/games/${gameId}/namespaces/${ns}/version`, { token: cloud, body: { version_id: versionId } });
    if (set.status !== 200) throw new Error(JSON.stringify(set.body));
  };

  const get = (host: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Got> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method, agent, headers: { host, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });

  return {
    h, port, gameId, cloud, nsId, site, version, publish, get,
    deploy: async (files, routes, ns) => publish(await version(await site(files), routes), ns),
    close: async () => {
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
      h.cleanup();
    },
  };
}
