/**
 * What the game proxy serves, and for each protocol it does not, why and what would enable it, in
 * words: the server gives them to version validation (`protocol-not-served` carries them), shows
 * the refused protocols in `/health` and says them at start. tcp and udp ports are published by
 * the runtime itself and need no proxy.
 */
import type { PortProtocol } from '../core/config/types.js';
import { isLocalName } from './local-tls.js';

/** Why the game proxy does not run. */
export type ProxyOff = 'off' | 'not-installed' | 'failed';

export interface Served {
  readonly protocols: ReadonlySet<PortProtocol>;
  readonly refusals: Readonly<Partial<Record<PortProtocol, string>>>;
}

const PROXIED = ['http', 'https', 'tcp_tls'] as const;
const TLS = ['https', 'tcp_tls'] as const;

const certificateFor = (jobDomain: string): string => `a certificate for *.lobby.<region>.${jobDomain}`;
const setCertificate = 'set TAVERN_PROXY_TLS_CERT and TAVERN_PROXY_TLS_KEY';

/**
 * The protocols served and the words of each refusal when the proxy is off.
 *
 * @example
 * servedWithoutProxy('not-installed', 'localhost').refusals.https
 * // 'https needs the game proxy with a certificate: install HAProxy (apt-get install haproxy) and restart Tavern'
 */
export function servedWithoutProxy(why: ProxyOff, jobDomain: string): Served {
  const needs = (p: PortProtocol): string => (p === 'http' ? `${p} needs the game proxy` : `${p} needs the game proxy with a certificate`);
  const install = (p: PortProtocol): string =>
    `${needs(p)}: install HAProxy (apt-get install haproxy) and restart Tavern${p === 'http' || isLocalName(jobDomain) ? '' : `, and ${setCertificate} (${certificateFor(jobDomain)})`}`;
  const words: Record<ProxyOff, (p: PortProtocol) => string> = {
    off: (p) => `${needs(p)}, which this server runs without (TAVERN_PROXY=off): unset TAVERN_PROXY to run it (HAProxy)`,
    'not-installed': install,
    failed: (p) => `${needs(p)}, which could not start on this server: its reason is in /health (proxy.off) and the server's log`,
  };
  return { protocols: new Set(['tcp', 'udp']), refusals: Object.fromEntries(PROXIED.map((p) => [p, words[why](p)])) };
}

/**
 * The protocols served and the refusals' words when the proxy runs, with or without a certificate.
 *
 * @example
 * servedByProxy(false, 'example.com').refusals.https
 * // 'https needs a certificate for *.lobby.<region>.example.com: set TAVERN_PROXY_TLS_CERT and TAVERN_PROXY_TLS_KEY …'
 */
export function servedByProxy(tls: boolean, jobDomain: string): Served {
  if (tls) return { protocols: new Set(['http', 'https', 'tcp', 'tcp_tls', 'udp']), refusals: {} };
  const why = (p: PortProtocol): string => `${p} needs ${certificateFor(jobDomain)}: ${setCertificate} (Tavern's local CA signs names under localhost only)`;
  return { protocols: new Set(['http', 'tcp', 'udp']), refusals: Object.fromEntries(TLS.map((p) => [p, why(p)])) };
}
