/**
 * The game proxy when lobbies run on several hosts (Swarm): a route's upstream is its lobby's
 * address as the runtime gives it (`upstreamOf`); a route whose lobby is not placed yet is not
 * served (404, never Tavern's own host), and `readdress` points routes at where their lobbies run
 * now (a real HAProxy; two upstreams on one port at 127.0.0.1 and 127.0.0.2, both loopback).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HaproxyGameProxy } from '../../src/adapters/haproxy/proxy.js';
import type { ProxyRoute } from '../../src/core/effects.js';
import { describeNeeding } from '../needs.js';
import { freePort, get, HAPROXY, haproxyProblem, NEED, OPEN_LIMITS, QUIET } from './helpers.js';

const DOMAIN = 'example.test';
const HOST = 'lobby-a-web.lobby.lnd.example.test';

/** An HTTP server on `host:port` answering `node <name>`. */
const upstream = (host: string, port: number, name: string): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = createServer((_req, res) => res.end(`node ${name}`));
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });

describeNeeding(NEED, 'game proxy routes that follow their lobby to its host (HAProxy)', haproxyProblem(), () => {
  let dir: string;
  let proxy: HaproxyGameProxy;
  let port: number;
  let lobbyPort: number;
  const servers: Server[] = [];
  /** Where each lobby runs, as the runtime would say. */
  const placed = new Map<string, string>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tavern-proxy-readdress-'));
    port = await freePort();
    lobbyPort = await freePort();
    servers.push(await upstream('127.0.0.1', lobbyPort, 'one'), await upstream('127.0.0.2', lobbyPort, 'two'));
    proxy = await HaproxyGameProxy.start({
      binary: HAPROXY, dir, host: '127.0.0.1', httpPort: port, jobDomain: DOMAIN, upstreamHost: '127.0.0.1', upstreamOf: (lobbyId) => placed.get(lobbyId), limits: OPEN_LIMITS, log: QUIET,
    });
  });

  afterAll(async () => {
    await proxy?.close();
    for (const s of servers) s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves a route only once its lobby has an address, follows it when it moves, and forgets it once unbound', async () => {
    const route: ProxyRoute = { lobbyId: 'lobby-a', region: 'lnd', label: 'web', protocol: 'http', publicPort: 80, hostPort: lobbyPort };
    await proxy.bind(route);
    expect(await get(port, HOST, '/')).toMatchObject({ status: 404, body: 'no lobby at this address' });
    expect(proxy.status().routes).toBe(0);
    placed.set('lobby-a', '127.0.0.2');
    await proxy.readdress();
    expect(await get(port, HOST, '/')).toMatchObject({ status: 200, body: 'node two' });
    placed.set('lobby-a', '127.0.0.1');
    await proxy.readdress();
    expect(await get(port, HOST, '/')).toMatchObject({ status: 200, body: 'node one' });
    // Gone from the runtime (lost): the route waits again rather than point anywhere.
    placed.delete('lobby-a');
    await proxy.readdress();
    expect((await get(port, HOST, '/')).status).toBe(404);
    placed.set('lobby-a', '127.0.0.2');
    await proxy.unbind(route);
    await proxy.readdress();
    expect((await get(port, HOST, '/')).status).toBe(404);
    expect(proxy.status().routes).toBe(0);
  });

  it('binds a route of a lobby already placed straight to its address', async () => {
    placed.set('lobby-b', '127.0.0.2');
    await proxy.bind({ lobbyId: 'lobby-b', region: 'lnd', label: 'web', protocol: 'http', publicPort: 80, hostPort: lobbyPort });
    expect(await get(port, 'lobby-b-web.lobby.lnd.example.test', '/')).toMatchObject({ status: 200, body: 'node two' });
  });
});
