/**
 * Tavern's local CA: made once in its folder (key readable by its owner only), reused by later
 * opens; the certificates it issues for the default names verify against it in a real TLS
 * handshake (node:tls, trusting only the CA), are kept while they fit and issued again when the
 * names change or their end is near; `withLocalCertificates` fills in what the defaults need and
 * leaves an operator's own certificates alone.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalCa } from '../../src/adapters/local-ca.js';
import { parseEnv } from '../../src/server/env.js';
import { proxyNames, withLocalCertificates } from '../../src/server/local-tls.js';

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'tavern-local-ca-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const mode = (file: string): number => statSync(file).mode & 0o777;

/** A TLS handshake with a server holding `pair`, the client trusting only `ca` and naming `servername`: 'ok' or the error's code. */
const handshake = (pair: { certFile: string; keyFile: string }, ca: string, servername: string): Promise<string> =>
  new Promise((resolve) => {
    const server = createServer({ cert: readFileSync(pair.certFile), key: readFileSync(pair.keyFile) }, (s) => s.end());
    server.listen(0, '127.0.0.1', () => {
      const socket = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, servername, ca: readFileSync(ca) }, () => {
        socket.end();
        server.close();
        resolve('ok');
      });
      socket.on('error', (error: NodeJS.ErrnoException) => {
        server.close();
        resolve(error.code ?? error.message);
      });
    });
  });

describe('the local CA', () => {
  it('is made once (ca.key 0600, ca.crt 0644, a CA certificate) and reused by later opens', async () => {
    const dir = tempDir();
    const first = await LocalCa.open(join(dir, 'tls'));
    expect(first.created).toBe(true);
    expect(mode(join(dir, 'tls', 'ca.key'))).toBe(0o600);
    expect(mode(join(dir, 'tls', 'ca.crt'))).toBe(0o644);
    expect(mode(join(dir, 'tls'))).toBe(0o700);
    const pem = readFileSync(first.certFile, 'utf8');
    const cert = new X509Certificate(pem);
    expect(cert.ca).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.publicKey.asymmetricKeyDetails).toMatchObject({ namedCurve: 'prime256v1' });
    const again = await LocalCa.open(join(dir, 'tls'));
    expect(again.created).toBe(false);
    expect(readFileSync(again.certFile, 'utf8')).toBe(pem);
  });

  it('issues a certificate for the default names that verifies against it in a TLS handshake, and for no other name', async () => {
    const dir = tempDir();
    const ca = await LocalCa.open(dir);
    const pair = { certFile: join(dir, 'proxy.crt'), keyFile: join(dir, 'proxy.key') };
    expect(await ca.ensure(proxyNames('localhost', ['local', 'lnd-fra']), pair)).toBe(true);
    expect(mode(pair.keyFile)).toBe(0o600);
    const leaf = new X509Certificate(readFileSync(pair.certFile));
    const root = new X509Certificate(readFileSync(ca.certFile));
    expect(leaf.checkIssued(root)).toBe(true);
    expect(leaf.verify(root.publicKey)).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.subjectAltName).toBe('DNS:*.lobby.local.localhost, DNS:*.lobby.lnd-fra.localhost, DNS:lobby.localhost');
    expect(leaf.checkHost('0f3c-default.lobby.local.localhost')).toBe('*.lobby.local.localhost');
    expect(await handshake(pair, ca.certFile, 'b6d1e2f0-default.lobby.local.localhost')).toBe('ok');
    expect(await handshake(pair, ca.certFile, 'b6d1e2f0-default.lobby.lnd-fra.localhost')).toBe('ok');
    expect(await handshake(pair, ca.certFile, 'lobby.localhost')).toBe('ok');
    expect(await handshake(pair, ca.certFile, 'example.com')).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    // Another CA's client refuses it: only this CA vouches for it.
    const other = await LocalCa.open(tempDir());
    expect(await handshake(pair, other.certFile, 'x-default.lobby.local.localhost')).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('keeps a certificate that fits, and issues again when the names change or fewer than 30 days are left', async () => {
    const dir = tempDir();
    let now = new Date('2026-01-01T00:00:00Z');
    const ca = await LocalCa.open(dir, () => now);
    const pair = { certFile: join(dir, 'cdn.crt'), keyFile: join(dir, 'cdn.key') };
    expect(await ca.ensure(['*.cdn.localhost'], pair)).toBe(true);
    const first = readFileSync(pair.certFile, 'utf8');
    expect(await ca.ensure(['*.cdn.localhost'], pair)).toBe(false);
    expect(readFileSync(pair.certFile, 'utf8')).toBe(first);
    expect(await ca.ensure(['*.cdn.localhost', 'cdn.localhost'], pair)).toBe(true);
    now = new Date('2027-01-15T00:00:00Z');
    expect(await ca.ensure(['*.cdn.localhost', 'cdn.localhost'], pair)).toBe(true);
    expect(new Date(new X509Certificate(readFileSync(pair.certFile)).validTo).getTime()).toBeGreaterThan(now.getTime() + 300 * 86_400_000);
  });
});

describe('certificates for the defaults', () => {
  it('the defaults get the proxy wildcard of every region and the CDN wildcard, both from one CA kept in <data dir>/tls', async () => {
    const dataDir = tempDir();
    const { env, ca } = await withLocalCertificates(parseEnv({ TAVERN_DATA_DIR: dataDir, TAVERN_REGIONS: 'local,lnd-sfo' }));
    expect(ca).toEqual({ certFile: join(dataDir, 'tls', 'ca.crt'), created: true });
    expect(env.proxy.tls).toEqual({ certFile: join(dataDir, 'tls', 'proxy.crt'), keyFile: join(dataDir, 'tls', 'proxy.key') });
    expect(new X509Certificate(readFileSync(join(dataDir, 'tls', 'proxy.crt'))).subjectAltName).toBe('DNS:*.lobby.local.localhost, DNS:*.lobby.lnd-sfo.localhost, DNS:lobby.localhost');
    expect(env.cdn?.tls).toEqual({ dir: join(dataDir, 'tls', 'cdn'), port: 8443, local: true });
    const cdn = join(dataDir, 'tls', 'cdn', '_.cdn.localhost');
    expect(new X509Certificate(readFileSync(`${cdn}.crt`)).subjectAltName).toBe('DNS:*.cdn.localhost');
    expect(mode(`${cdn}.key`)).toBe(0o600);
    expect(await handshake({ certFile: `${cdn}.crt`, keyFile: `${cdn}.key` }, join(dataDir, 'tls', 'ca.crt'), 'tanks--staging.cdn.localhost')).toBe('ok');
    expect((await withLocalCertificates(parseEnv({ TAVERN_DATA_DIR: dataDir }))).ca?.created).toBe(false);
  });

  it('an operator\'s own certificates and domains outside localhost get nothing from the local CA', async () => {
    const dataDir = tempDir();
    const own = parseEnv({ TAVERN_DATA_DIR: dataDir, TAVERN_PROXY_TLS_CERT: '/etc/tavern/lobby.crt', TAVERN_PROXY_TLS_KEY: '/etc/tavern/lobby.key', TAVERN_CDN_TLS_DIR: '/etc/tavern/cdn' });
    expect(await withLocalCertificates(own)).toEqual({ env: own });
    const elsewhere = parseEnv({ TAVERN_DATA_DIR: dataDir, TAVERN_JOB_DOMAIN: 'games.example.com', TAVERN_CDN_DOMAIN: 'cdn.example.com' });
    expect(await withLocalCertificates(elsewhere)).toEqual({ env: elsewhere });
    expect(elsewhere.cdn?.tls).toBeUndefined();
    expect(() => statSync(join(dataDir, 'tls'))).toThrow(/ENOENT/);
  });
});
