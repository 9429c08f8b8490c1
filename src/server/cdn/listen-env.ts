/**
 * The CDN listener's variables (`TAVERN_CDN_PORT`, `TAVERN_CDN_HOST`, `TAVERN_CDN_TLS_DIR`,
 * `TAVERN_CDN_TLS_PORT`), parsed: on by default, HTTPS with the operator's certificate folder or,
 * for a CDN domain under `localhost`, the local CA's.
 */
import { join } from 'node:path';
import { isLocalName } from '../local-tls.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface CdnListenEnv {
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  /**
   * HTTPS with the certificates of this directory (`<domain>.crt`/`<domain>.key`, `_.<domain>` for a
   * wildcard); `local`: Tavern's own directory, filled by its local CA (`local-tls.ts`).
   */
  readonly tls?: { readonly dir: string; readonly port: number; readonly local?: true };
  /** Where to listen instead when a default port is taken (0: any free port); absent for ports set explicitly. */
  readonly fallback?: { readonly port?: number; readonly tlsPort?: number };
}

const opt = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());

const portOf = (env: Env, name: string): number | undefined => {
  const raw = opt(env[name]);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d{1,5}$/.test(raw) || n > 65_535) throw new Error(`${name} must be a port number`);
  return n;
};

/**
 * `TAVERN_CDN_*`: the CDN listener, on by default (8081, HTTPS on 8443; a default port that is taken
 * becomes any free port); `TAVERN_CDN_PORT=off` turns it off. HTTPS with `TAVERN_CDN_TLS_DIR`, else
 * with the local CA's certificate when the CDN domain is under `localhost`.
 *
 * @example
 * parseCdn({}, '127.0.0.1', 'cdn.localhost', '.tavern')
 * // { host: '127.0.0.1', port: 8081, tls: { dir: '.tavern/tls/cdn', port: 8443, local: true }, fallback: { port: 0, tlsPort: 0 } }
 */
export function parseCdn(env: Env, host: string, cdnDomain: string, dataDir: string): CdnListenEnv | undefined {
  const off = opt(env['TAVERN_CDN_PORT']) === 'off';
  const port = off ? undefined : portOf(env, 'TAVERN_CDN_PORT');
  const tlsPort = portOf(env, 'TAVERN_CDN_TLS_PORT');
  const dir = opt(env['TAVERN_CDN_TLS_DIR']);
  if (off) {
    if (dir !== undefined) throw new Error('TAVERN_CDN_TLS_DIR needs the CDN (TAVERN_CDN_PORT is off)');
    return undefined;
  }
  const local = dir === undefined && isLocalName(cdnDomain);
  const tls = dir !== undefined ? { dir, port: tlsPort ?? 8443 } : local ? { dir: join(dataDir, 'tls', 'cdn'), port: tlsPort ?? 8443, local: true as const } : undefined;
  const fallback = { ...(port === undefined ? { port: 0 } : {}), ...(local && tlsPort === undefined ? { tlsPort: 0 } : {}) };
  return {
    host: opt(env['TAVERN_CDN_HOST']) ?? host, port: port ?? 8081,
    ...(tls === undefined ? {} : { tls }),
    ...(Object.keys(fallback).length === 0 ? {} : { fallback }),
  };
}
