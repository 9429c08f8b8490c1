/**
 * The CDN in the real server process (`TAVERN_CDN_*`): a site deployed through the API is served
 * on its CDN host over HTTP; a custom domain is served over HTTP and says so until a certificate
 * for it appears in `TAVERN_CDN_TLS_DIR`, which the HTTPS listener then uses without a restart
 * (a wildcard pair too); the site's URL the API gives (and tavern deploy prints) is then HTTPS.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, field, getWithHost as get, ok, startServer, type Server } from './process.js';

const ADMIN = 'cdn-process-admin';
let server: Server;
let dir: string;
let certs: string;

/** A self-signed certificate pair for `name` (openssl), written as `<file>.crt` / `<file>.key` in the TLS directory. */
const certificate = (name: string, file: string): void => {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`,
    '-keyout', join(certs, `${file}.key`), '-out', join(certs, `${file}.crt`)], { stdio: 'ignore' });
};

/** An HTTPS GET naming `servername` (SNI and Host), trusting only `ca`. */
const getTls = (origin: string, servername: string, ca: Buffer): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const url = new URL('/', origin);
    const req = httpsRequest(url, { servername, ca, headers: { host: servername } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject).end();
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tavern-cdn-process-'));
  certs = join(dir, 'certs');
  execFileSync('mkdir', ['-p', certs]);
  server = await startServer('cdn', {
    TAVERN_PORT: '0', TAVERN_DATA_DIR: dir, TAVERN_ADMIN_TOKEN: ADMIN, TAVERN_RUNTIME: 'fake', TAVERN_RATE_LIMITS: 'off',
    TAVERN_CDN_PORT: '0', TAVERN_CDN_TLS_PORT: '0', TAVERN_CDN_TLS_DIR: certs, TAVERN_CDN_DOMAIN: 'cdn.test',
  });
}, 90_000);

afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the CDN listener of the server process', () => {
  it('serves a deployed site on its CDN host and a custom domain, over HTTPS once a certificate appears', async () => {
    const cdnOrigin = String(server.listening['cdnOrigin']);
    const tlsOrigin = String(server.listening['cdnTlsOrigin']);
    expect(cdnOrigin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(tlsOrigin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const o = server.origin;
    const gameId = field(ok('game', await api(o, 'POST', '/cloud/games', { token: ADMIN, body: { name_id: 'web-game', display_name: 'Web', developer_group_id: randomUUID() } })), 'game_id');
    const site = ok('site', await api(o, 'POST', `/cloud/games/${gameId}/cdn/sites`, { token: ADMIN, body: { display_name: 'Site', files: [{ path: 'index.html', content_length: 5 }] } }));
    const [put] = site['presigned_requests'] as { url: string }[];
    expect((await fetch(put?.url ?? '', { method: 'PUT', body: 'hello' })).status).toBe(200);
    ok('complete', await api(o, 'POST', `/cloud/uploads/${field(site, 'upload_id')}/complete`, { token: ADMIN }));
    const versionId = field(ok('version', await api(o, 'POST', `/cloud/games/${gameId}/versions`, { token: ADMIN, body: { display_name: 'v1', config: { cdn: { site_id: field(site, 'site_id') } } } })), 'version_id');
    const game = ok('get game', await api(o, 'GET', `/cloud/games/${gameId}`, { token: ADMIN }))['game'] as { namespaces: { name_id: string; namespace_id: string }[] };
    const nsId = game.namespaces.find((n) => n.name_id === 'prod')?.namespace_id ?? '';
    ok('publish', await api(o, 'PUT', `/cloud/games/${gameId}/namespaces/${nsId}/version`, { token: ADMIN, body: { version_id: versionId } }));

    expect(await get(cdnOrigin, 'web-game.cdn.test', '/')).toEqual({ status: 200, body: 'hello' });
    ok('domain', await api(o, 'POST', `/cloud/games/${gameId}/namespaces/${nsId}/domains`, { token: ADMIN, body: { domain: 'play.example.com' } }));
    expect(await get(cdnOrigin, 'play.example.com', '/')).toEqual({ status: 200, body: 'hello' });
    const state = async (): Promise<unknown> => {
      const ns = ok('ns', await api(o, 'GET', `/cloud/games/${gameId}/namespaces/${nsId}`, { token: ADMIN }))['namespace'] as { config: { cdn: { domains: { verification_errors: string[] }[] } } };
      return ns.config.cdn.domains[0]?.verification_errors;
    };
    expect(await state()).toEqual(['no TLS certificate for this domain in TAVERN_CDN_TLS_DIR: served over HTTP only']);
    const siteUrl = async (): Promise<unknown> => {
      const ns = ok('ns', await api(o, 'GET', `/cloud/games/${gameId}/namespaces/${nsId}`, { token: ADMIN }))['namespace'] as { config: { cdn: { url?: string } } };
      return ns.config.cdn.url;
    };
    // The site's URL (what tavern deploy prints): HTTP while no certificate covers its host.
    expect(await siteUrl()).toBe(`http://web-game.cdn.test:${new URL(cdnOrigin).port}/`);
    await expect(getTls(tlsOrigin, 'play.example.com', Buffer.from(''))).rejects.toThrow();

    certificate('play.example.com', 'play.example.com');
    expect(await state()).toEqual([]);
    expect(await getTls(tlsOrigin, 'play.example.com', readFileSync(join(certs, 'play.example.com.crt')))).toEqual({ status: 200, body: 'hello' });
    // A wildcard pair covers the game hosts under the CDN domain.
    certificate('*.cdn.test', '_.cdn.test');
    expect(await getTls(tlsOrigin, 'web-game.cdn.test', readFileSync(join(certs, '_.cdn.test.crt')))).toEqual({ status: 200, body: 'hello' });
    // Once one does, the site's URL is the HTTPS one, on the HTTPS listener's port.
    expect(await siteUrl()).toBe(`https://web-game.cdn.test:${new URL(tlsOrigin).port}/`);
  }, 60_000);
});
