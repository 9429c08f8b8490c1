/**
 * HTTPS out of the box: names under `localhost` (the default job and CDN domains) get certificates
 * from Tavern's local CA (`src/adapters/local-ca.ts`), kept in `<data dir>/tls/`: the game proxy's
 * wildcard for every region (HAProxy's https frontend and the tcp_tls listeners) and the CDN's
 * wildcard for its sites. An operator's own certificates (`TAVERN_PROXY_TLS_CERT`/`KEY`,
 * `TAVERN_CDN_TLS_DIR`) take precedence; other names are never signed by the local CA, since no
 * client trusts it but the developer's own.
 */
import { resolve, join } from 'node:path';
import { LocalCa } from '../adapters/local-ca.js';
import type { ServerEnv } from './env.js';

/**
 * Whether the local CA signs for `domain` (and browsers and curl resolve it to this machine).
 *
 * @example
 * isLocalName('cdn.localhost') // true
 * isLocalName('example.com')   // false
 */
export const isLocalName = (domain: string): boolean => domain === 'localhost' || domain.endsWith('.localhost');

/**
 * The game proxy certificate's names: each region's lobbies and the path form's host.
 *
 * @example
 * proxyNames('localhost', ['local']) // ['*.lobby.local.localhost', 'lobby.localhost']
 */
export const proxyNames = (jobDomain: string, regions: readonly string[]): string[] => [...regions.map((r) => `*.lobby.${r}.${jobDomain}`), `lobby.${jobDomain}`];

/**
 * The one start-up line saying where the CA certificate is and how to trust it.
 *
 * @example
 * trustLine('/srv/.tavern/tls/ca.crt', true) // "Tavern's local CA (made now) … sudo cp …"
 */
export const trustLine = (caFile: string, created: boolean): string =>
  `Tavern's local CA${created ? ' (made now)' : ''} signs the HTTPS certificates of *.localhost: ${caFile}. Trust it once: ` +
  `sudo cp ${caFile} /usr/local/share/ca-certificates/tavern.crt && sudo update-ca-certificates; ` +
  `for Chromium (NSS, libnss3-tools): mkdir -p $HOME/.pki/nssdb && certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n tavern -i ${caFile}; for Node: NODE_EXTRA_CA_CERTS=${caFile}`;

/**
 * `env` with the local CA's certificates filled in where the defaults need them (made or renewed
 * now), and the CA's certificate file and whether it was made now; no CA when nothing needs one.
 *
 * @example
 * const { env, ca } = await withLocalCertificates(parseEnv(process.env));
 * if (ca !== undefined) process.stdout.write(`${trustLine(ca.certFile, ca.created)}\n`);
 */
export async function withLocalCertificates(env: ServerEnv): Promise<{ env: ServerEnv; ca?: { readonly certFile: string; readonly created: boolean } }> {
  const jobDomain = env.jobDomain ?? 'localhost';
  const proxy = env.proxy.mode !== 'off' && env.proxy.tls === undefined && isLocalName(jobDomain);
  const cdnTls = env.cdn?.tls?.local === true ? env.cdn.tls : undefined;
  if (!proxy && cdnTls === undefined) return { env };
  const dir = resolve(env.dataDir, 'tls');
  const ca = await LocalCa.open(dir);
  let next = env;
  if (proxy) {
    const pair = { certFile: join(dir, 'proxy.crt'), keyFile: join(dir, 'proxy.key') };
    await ca.ensure(proxyNames(jobDomain, env.regions.map((r) => r.id)), pair);
    next = { ...next, proxy: { ...next.proxy, tls: pair } };
  }
  if (cdnTls !== undefined && env.cdnDomain !== undefined) {
    const base = join(cdnTls.dir, `_.${env.cdnDomain}`);
    await ca.ensure([`*.${env.cdnDomain}`], { certFile: `${base}.crt`, keyFile: `${base}.key` });
  }
  return { env: next, ca: { certFile: ca.certFile, created: ca.created } };
}
