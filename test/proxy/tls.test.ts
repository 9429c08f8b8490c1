/**
 * TLS termination on the real data plane: a CA made in the test signs the wildcard
 * `*.lobby.<region>.<job domain>`; an https route answers over TLS trusted by that CA only, to the
 * lobby's plain HTTP port (X-Forwarded-Proto https); an http route is not reachable over HTTPS; a
 * new certificate pair written over the files is served without a restart.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HaproxyGameProxy } from '../../src/adapters/haproxy/proxy.js';
import type { ProxyRoute } from '../../src/core/effects.js';
import { describeNeeding } from '../needs.js';
import { eventually } from '../wait.js';
import { makeCa, writeLeaf } from './certs.js';
import { freePort, HAPROXY, haproxyProblem, NEED, OPEN_LIMITS, QUIET, startUpstream } from './helpers.js';

describeNeeding(NEED, 'game proxy TLS (HAProxy, openssl)', haproxyProblem(), () => {
  let dir: string;
  let proxy: HaproxyGameProxy;
  let upstream: ChildProcess;
  let up: number;
  let httpsPort: number;

  /** GET over TLS with SNI and Host `host`, trusting only `ca`; the answer and the server's certificate. */
  const getTls = (host: string, ca: Buffer): Promise<{ status: number; body: string; cert: PeerCertificate }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: httpsPort, path: '/tls', servername: host, ca, headers: { host }, agent: false }, (res) => {
        const cert = (res.socket as TLSSocket).getPeerCertificate();
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body, cert }));
      });
      req.on('error', reject).end();
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tavern-proxy-tls-'));
    makeCa(dir, 'ca-one');
    makeCa(dir, 'ca-two');
    writeLeaf(dir, 'ca-one', '0x1001');
    up = await freePort();
    upstream = await startUpstream([up]);
    httpsPort = await freePort();
    proxy = await HaproxyGameProxy.start({
      binary: HAPROXY, dir: join(dir, 'proxy'), host: '127.0.0.1', httpPort: await freePort(), jobDomain: 'example.test', upstreamHost: '127.0.0.1',
      limits: OPEN_LIMITS, log: QUIET, certPollMs: 100, tls: { port: httpsPort, certFile: join(dir, 'lobby.crt'), keyFile: join(dir, 'lobby.key') },
    });
    const route = (label: string, protocol: ProxyRoute['protocol']): ProxyRoute => ({ lobbyId: 'lobby-t', region: 'local', label, protocol, publicPort: 443, hostPort: up });
    await proxy.bind(route('secure', 'https'));
    await proxy.bind(route('plain', 'http'));
  });

  afterAll(async () => {
    await proxy?.close();
    upstream?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('terminates TLS with the wildcard certificate and forwards plain HTTP to the lobby; an http route is 404 over HTTPS', async () => {
    const ca = readFileSync(join(dir, 'ca-one.crt'));
    const answer = await getTls('lobby-t-secure.lobby.local.example.test', ca);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(new RegExp(`^up-${up} GET /tls host=lobby-t-secure.lobby.local.example.test xff=127.0.0.1 proto=https`));
    expect(answer.cert.serialNumber).toBe('1001');
    expect((await getTls('lobby-t-plain.lobby.local.example.test', ca)).status).toBe(404);
    await expect(getTls('lobby-t-secure.lobby.local.example.test', readFileSync(join(dir, 'ca-two.crt')))).rejects.toThrow(/certificate/i);
  });

  it('serves a rotated certificate pair without a restart', async () => {
    const pid = proxy.status().pid;
    writeLeaf(dir, 'ca-two', '0x2002');
    const ca = readFileSync(join(dir, 'ca-two.crt'));
    await eventually('the rotated certificate to be served', async () => (await getTls('lobby-t-secure.lobby.local.example.test', ca).then((a) => a.cert.serialNumber, () => '')) === '2002', { timeoutMs: 5_000, everyMs: 100 });
    expect(proxy.status()).toMatchObject({ pid, restarts: 0 });
  });
});
