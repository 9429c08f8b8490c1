/**
 * The game proxy's wildcard certificate: HAProxy reads the pair as one PEM file Tavern writes, and
 * a new pair on disk reaches a running HAProxy through its runtime API (`set ssl cert` + `commit
 * ssl cert`), without a restart.
 */
import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { runtimeCall } from './runtime-api.js';

export interface ProxyTls {
  readonly port: number;
  /** The wildcard certificate (`*.lobby.<region>.<job domain>`, chain included) and its key, PEM. */
  readonly certFile: string;
  readonly keyFile: string;
}

/**
 * What changes when either file is replaced (modification times and sizes).
 *
 * @example
 * if ((await certStamp(tls)) !== served) await rotateCert(socket, pem, await writePem(tls, pem));
 */
export async function certStamp(tls: ProxyTls): Promise<string> {
  const [c, k] = await Promise.all([stat(tls.certFile), stat(tls.keyFile)]);
  return `${c.mtimeMs}:${c.size}:${k.mtimeMs}:${k.size}`;
}

/**
 * Writes the certificate and its key as one PEM file at `pemFile` (owner-only, replaced atomically); returns its text.
 *
 * @example
 * await writePem(tls, '/var/lib/tavern/proxy/lobby-wildcard.pem')
 */
export async function writePem(tls: ProxyTls, pemFile: string): Promise<string> {
  const [cert, key] = await Promise.all([readFile(tls.certFile, 'utf8'), readFile(tls.keyFile, 'utf8')]);
  const pem = `${cert.trim()}\n${key.trim()}\n`;
  await writeFile(`${pemFile}.tmp`, pem, { mode: 0o600 });
  await rename(`${pemFile}.tmp`, pemFile);
  return pem;
}

/**
 * Hands `pem` to the HAProxy at `socket` as the new content of `pemFile`; throws with HAProxy's words when it refuses.
 *
 * @example
 * await rotateCert('/var/lib/tavern/proxy/haproxy.sock', pemFile, pem)
 */
export async function rotateCert(socket: string, pemFile: string, pem: string): Promise<void> {
  const set = await runtimeCall(socket, `set ssl cert ${pemFile} <<\n${pem}\n`);
  if (!/Transaction (created|updated)/i.test(set)) throw new Error(`HAProxy refused the certificate: ${set.trim()}`);
  const commit = await runtimeCall(socket, `commit ssl cert ${pemFile}`);
  if (!/Success/i.test(commit)) throw new Error(`HAProxy did not commit the certificate: ${commit.trim()}`);
}
