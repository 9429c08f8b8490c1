/**
 * `npm run bench -- proxy [--json] [--seconds 3] [--rounds 3] [--routes 1000] [--threads 1] [--pin]`:
 * the game proxy's data plane, in one run:
 * - requests/s and latency at 64 kept-alive connections (the `http` benchmark's raw HTTP/1.1 load
 *   generator) of a GET to one lobby among `--routes` bound routes, by Host, for two lobbies: nginx
 *   (one worker, a 19-byte body: a fast server, so the proxy's own cost shows) and node:http (a
 *   game server written in Node). Each **direct**, through **Tavern's proxy** (the HAProxy adapter
 *   as `npm start` runs it, `--threads` threads, limits off, then on with limits too high to hit:
 *   the cost of the per-address stick tables), and through **nginx configured by hand** with the
 *   same routes (a `map` of Host to one `upstream` per route, keep-alive to the lobby, one worker);
 * - TLS handshakes/s: fresh connections (no session reuse, ECDSA P-256 certificate, TLS 1.3), each
 *   with one request, through Tavern's proxy (HAProxy, an `https` route; and Tavern's `tcp_tls`
 *   listener, in a process of its own as in the server, the request going through as plain bytes)
 *   and through nginx with the same certificate.
 * Rounds interleave the targets; figures are medians over the rounds, ratios the median of the
 * rounds' ratios. `--pin`: the load generator on core 1 and every server on core 0 (default: the
 * kernel places them: a proxy shares the host's cores with its lobbies).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { HaproxyGameProxy } from '../src/adapters/haproxy/proxy.js';
import type { ProxyLimits } from '../src/adapters/haproxy/config.js';
import type { ProxyRoute } from '../src/core/effects.js';
import { canPin, pinProcess, pinSelf, type ServerChild } from './http-child.js';
import { runLoad, type LoadResult } from './http-load.js';
import { intArg, table } from './measure.js';

const NGINX = '/usr/sbin/nginx';
const HAPROXY = process.env['TAVERN_HAPROXY'] ?? '/usr/sbin/haproxy';
const DOMAIN = 'bench.test';
const BODY = 'hello from a lobby\n';
const CONNECTIONS = 64;
const TLS_CLIENTS = 8;
const hostOf = (i: number): string => `lobby-${i}-web.lobby.local.${DOMAIN}`;
const TLS_PORTS = fileURLToPath(new URL('../src/adapters/tls-ports.js', import.meta.url));

/** Tavern's `tcp_tls` listener for one route, in a child process (the server runs it beside its API, not in the load generator's loop). */
async function startTlsPorts(work: string, publicPort: number, hostPort: number, cpu: number | undefined): Promise<() => Promise<void>> {
  const route = { lobbyId: 'tls', region: 'local', label: 'raw', protocol: 'tcp_tls', publicPort, hostPort };
  const script = `import(${JSON.stringify(TLS_PORTS)}).then(async ({ TlsPorts }) => {
    const log = { info() {}, warn() {}, error(o, m) { process.stderr.write(m + '\\n'); } };
    const ports = await TlsPorts.start({ host: '127.0.0.1', upstreamHost: '127.0.0.1', certFile: ${JSON.stringify(join(work, 'lobby.crt'))}, keyFile: ${JSON.stringify(join(work, 'lobby.key'))}, idleTimeoutMs: 30000, log });
    await ports.bind(${JSON.stringify(route)});
    process.stdout.write('ready\\n');
  });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (c: string) => c.includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the tcp_tls listener exited (${String(code)})`)));
  });
  if (cpu !== undefined) pinProcess(child.pid ?? 0, cpu);
  return async () => {
    child.kill();
    await new Promise((r) => child.once('exit', r));
  };
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
};

/** nginx in the foreground with `conf`, ready once `probe` answers. */
async function startNginx(name: string, dir: string, conf: string, probe: () => Promise<boolean>, cpu: number | undefined): Promise<ServerChild> {
  const file = join(dir, `${name}.conf`);
  writeFileSync(file, conf);
  const child = spawn(NGINX, ['-c', file, '-e', 'stderr'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let tail = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (tail = (tail + c).slice(-4096)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  for (let i = 0; ; i++) {
    if (child.exitCode !== null || i > 100) {
      child.kill('SIGKILL');
      throw new Error(`nginx (${name}) did not start: ${tail}`);
    }
    if (await probe()) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  // nginx's worker is a child of the master: pin every process of the group.
  if (cpu !== undefined) for (const pid of execFileSync('pgrep', ['-g', String(child.pid)], { encoding: 'utf8' }).split('\n').filter(Boolean)) pinProcess(Number(pid), cpu);
  return {
    name, pid: child.pid ?? 0, origin: '', output: () => tail, exited,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const NGINX_HEAD = (dir: string, name: string): string => `worker_processes 1;
daemon off;
pid ${join(dir, `${name}.pid`)};
error_log ${join(dir, `${name}.log`)} warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
`;

/** The status of a GET / naming `host` (fetch cannot set Host); 0 when the connection fails. */
const get = (port: number, host: string): Promise<number> =>
  new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', headers: { host }, agent: false }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0)).end();
  });

/** Fresh TLS connections, each with one request (no session reuse), for `ms`: handshakes/s. */
async function handshakes(port: number, host: string, ca: Buffer, ms: number): Promise<number> {
  let done = 0;
  let failed = 0;
  let sample = '';
  let lastError = '';
  const end = performance.now() + ms;
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, servername: host, ca, minVersion: 'TLSv1.3' }, () => {
        socket.write(`GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      });
      let got = '';
      socket.setEncoding('utf8').on('data', (c: string) => (got += c));
      socket.on('close', () => {
        if (got.startsWith('HTTP/1.1 200')) done += 1;
        else {
          failed += 1;
          sample = `${socket.authorized ? 'handshake done' : `no handshake (${String(socket.authorizationError)})`}, answer: ${JSON.stringify(got.slice(0, 120))}`;
        }
        resolve();
      });
      socket.on('error', (error: Error) => (lastError = error.message));
    });
  const client = async (): Promise<void> => {
    while (performance.now() < end) await one();
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: TLS_CLIENTS }, client));
  if (failed > done) throw new Error(`TLS requests to port ${port} failed (${failed} of ${failed + done}): ${sample} ${lastError}`);
  return done / ((performance.now() - started) / 1000);
}

interface Row {
  readonly lobby: string;
  readonly target: string;
  readonly rps: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly errors: number;
}

export async function proxyBench(args: readonly string[]): Promise<void> {
  const json = args.includes('--json');
  const seconds = intArg(args, '--seconds', 3, 1, 120);
  const rounds = intArg(args, '--rounds', 3, 1, 20);
  const routeCount = intArg(args, '--routes', 1_000, 4, 100_000);
  const pin = args.includes('--pin') && canPin();
  const threads = intArg(args, '--threads', 1, 1, 64);
  const serverCpu = pin ? 0 : undefined;
  if (pin) pinSelf(1);
  if (spawnSync(NGINX, ['-v'], { stdio: 'ignore' }).status !== 0) throw new Error(`${NGINX} is missing (apt-get install nginx-light): it is the lobby and the peer`);
  if (spawnSync(HAPROXY, ['-v'], { stdio: 'ignore' }).status !== 0) throw new Error(`${HAPROXY} is missing (apt-get install haproxy)`);
  const work = mkdtempSync(join(tmpdir(), 'tavern-bench-proxy-'));
  const stops: Array<() => Promise<void>> = [];
  const loads = new Map<string, LoadResult[]>();
  const tls = new Map<string, number[]>();
  const target = Math.floor(routeCount / 2) - 1;
  try {
    // The certificate both proxies terminate TLS with.
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', `/CN=*.lobby.local.${DOMAIN}`,
      '-addext', `subjectAltName=DNS:*.lobby.local.${DOMAIN}`, '-keyout', join(work, 'lobby.key'), '-out', join(work, 'lobby.crt')], { stdio: 'ignore' });
    const ca = execFileSync('cat', [join(work, 'lobby.crt')]);

    // The lobbies: nginx (a fast server: the proxy's own cost shows) and node:http (a game server
    // written in Node), each behind one route; every other route points at ports nobody serves.
    const nginxLobbyPort = await freePort();
    const nodeLobbyPort = await freePort();
    const lobby = await startNginx('lobby', work, `${NGINX_HEAD(work, 'lobby')}  server { listen 127.0.0.1:${nginxLobbyPort}; location / { return 200 "${BODY.trim()}\\n"; } }\n}\n`,
      async () => (await get(nginxLobbyPort, 'x')) === 200, serverCpu);
    stops.push(() => lobby.stop());
    const script = `const s = require('node:http').createServer((q, r) => r.end(${JSON.stringify(BODY)})); s.keepAliveTimeout = 60000; s.listen(${nodeLobbyPort}, '127.0.0.1');`;
    const nodeLobby = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    stops.push(async () => {
      nodeLobby.kill();
      await new Promise((r) => nodeLobby.once('exit', r));
    });
    for (let i = 0; (await get(nodeLobbyPort, 'x')) !== 200; i++) {
      if (i > 100) throw new Error('the node lobby did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
    if (serverCpu !== undefined) pinProcess(nodeLobby.pid ?? 0, serverCpu);
    const lobbies = [
      { kind: 'nginx lobby', index: target, port: nginxLobbyPort },
      { kind: 'node lobby', index: target + 1, port: nodeLobbyPort },
    ] as const;
    const portOf = (i: number): number => lobbies.find((l) => l.index === i)?.port ?? 20_000 + (i % 5_000);

    // Tavern's proxy (limits off, then on but too high to hit).
    const limitsOff: ProxyLimits = { headerTimeoutMs: 10_000, idleTimeoutMs: 30_000, connectTimeoutMs: 5_000 };
    const limitsOn: ProxyLimits = { ...limitsOff, rate: { average: 100_000_000, periodMs: 300_000, burst: 256 }, inFlight: 100_000 };
    const tavern: Record<string, { http: number; https: number }> = {};
    for (const [name, limits] of [['Tavern proxy', limitsOff], ['Tavern proxy, limits on', limitsOn]] as const) {
      const http = await freePort();
      const https = await freePort();
      const proxy = await HaproxyGameProxy.start({
        binary: HAPROXY, dir: join(work, name.replace(/\W+/g, '-')), host: '127.0.0.1', httpPort: http, jobDomain: DOMAIN, upstreamHost: '127.0.0.1', limits, threads, maxRoutes: routeCount + 1,
        tls: { port: https, certFile: join(work, 'lobby.crt'), keyFile: join(work, 'lobby.key') },
        log: { info: () => undefined, warn: () => undefined, error: (o, m) => process.stderr.write(`${m ?? ''} ${JSON.stringify(o)}\n`) },
      });
      stops.push(() => proxy.close());
      const routes: ProxyRoute[] = Array.from({ length: routeCount }, (_, i) => ({ lobbyId: `lobby-${i}`, region: 'local', label: 'web', protocol: 'http', publicPort: 80, hostPort: portOf(i) }));
      await Promise.all(routes.map((r) => proxy.bind(r)));
      await proxy.bind({ ...routes[target]!, protocol: 'https', publicPort: 443 });
      if (serverCpu !== undefined) pinProcess(proxy.status().pid ?? 0, serverCpu);
      tavern[name] = { http, https };
    }

    // Tavern's tcp_tls listener in front of the nginx lobby.
    const tcpTls = await freePort();
    stops.push(await startTlsPorts(work, tcpTls, nginxLobbyPort, serverCpu));

    // nginx by hand: the same routes, a map of Host to one upstream per route.
    const nginxHttp = await freePort();
    const nginxHttps = await freePort();
    const upstreams = Array.from({ length: routeCount }, (_, i) => `  upstream r${i} { server 127.0.0.1:${portOf(i)}; keepalive 64; }\n`).join('');
    const map = Array.from({ length: routeCount }, (_, i) => `    ${hostOf(i)} r${i};\n`).join('');
    const location = 'location / { if ($lobby = "") { return 404 "no lobby at this address"; } proxy_pass http://$lobby; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host $host; proxy_set_header X-Forwarded-For $remote_addr; }';
    const nginx = await startNginx('peer', work, `${NGINX_HEAD(work, 'peer')}  map_hash_bucket_size 128;\n  map $host $lobby {\n    hostnames;\n    default "";\n${map}  }\n${upstreams}` +
      `  server { listen 127.0.0.1:${nginxHttp}; ${location} }\n` +
      `  server { listen 127.0.0.1:${nginxHttps} ssl; ssl_certificate ${join(work, 'lobby.crt')}; ssl_certificate_key ${join(work, 'lobby.key')}; ssl_protocols TLSv1.2 TLSv1.3; ssl_session_cache off; ssl_session_tickets off; ${location} }\n}\n`,
    async () => (await get(nginxHttp, hostOf(target))) === 200, serverCpu);
    stops.push(() => nginx.stop());

    const proxies: ReadonlyArray<readonly [string, number]> = [
      ['Tavern proxy', tavern['Tavern proxy']!.http], ['Tavern proxy, limits on', tavern['Tavern proxy, limits on']!.http], ['nginx by hand', nginxHttp],
    ];
    for (const l of lobbies) for (const [name, port] of proxies) if ((await get(port, hostOf(l.index))) !== 200) throw new Error(`${name} does not answer 200 for ${hostOf(l.index)}`);
    for (let round = 0; round < rounds; round++) {
      for (const l of lobbies) {
        for (const [name, port] of [['direct', l.port] as const, ...proxies]) {
          const load = await runLoad({
            origin: `http://127.0.0.1:${port}`, concurrency: CONNECTIONS, warmupMs: 1_000, durationMs: seconds * 1_000,
            shot: () => ({ method: 'GET', path: '/', headers: { host: hostOf(l.index) }, body: Buffer.alloc(0) }),
            check: (body) => {
              if (body !== BODY) throw new Error(`${name} answered ${JSON.stringify(body.slice(0, 80))}`);
            },
          });
          const key = `${l.kind}|${name}`;
          loads.set(key, [...(loads.get(key) ?? []), load]);
        }
      }
      for (const [name, port] of [['Tavern proxy', tavern['Tavern proxy']!.https], ['Tavern tcp_tls listener', tcpTls], ['nginx by hand', nginxHttps]] as const) {
        tls.set(name, [...(tls.get(name) ?? []), await handshakes(port, hostOf(target), ca, seconds * 1_000)]);
      }
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }

  const rows: Row[] = [...loads].map(([key, runs]) => {
    const [lobby = '', target = ''] = key.split('|');
    return {
      lobby, target, rps: median(runs.map((r) => r.rps)), p50_ms: median(runs.map((r) => r.p50_ms)), p99_ms: median(runs.map((r) => r.p99_ms)), errors: runs.reduce((n, r) => n + r.errors, 0),
    };
  });
  const direct = (lobby: string): LoadResult[] => loads.get(`${lobby}|direct`) ?? [];
  const ratioTo = (lobby: string, name: string): number => median((loads.get(`${lobby}|${name}`) ?? []).map((r, i) => r.rps / (direct(lobby)[i]?.rps ?? NaN)));
  const addedP99 = (lobby: string, name: string): number => median((loads.get(`${lobby}|${name}`) ?? []).map((r, i) => r.p99_ms - (direct(lobby)[i]?.p99_ms ?? NaN)));
  const tlsRows = [...tls].map(([target, runs]) => ({ target, handshakes_per_s: median(runs) }));
  const result = {
    connections: CONNECTIONS, seconds, rounds, routes: routeCount, pinned: pin, haproxy_threads: threads,
    rows: rows.map((r) => (r.target === 'direct' ? r : { ...r, vs_direct: ratioTo(r.lobby, r.target), p99_added_ms: addedP99(r.lobby, r.target) })),
    tls: tlsRows,
    tls_ratio_tavern_to_nginx: median((tls.get('Tavern proxy') ?? []).map((t, i) => t / (tls.get('nginx by hand')?.[i] ?? NaN))),
    tcp_tls_ratio_to_nginx: median((tls.get('Tavern tcp_tls listener') ?? []).map((t, i) => t / (tls.get('nginx by hand')?.[i] ?? NaN))),
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const f = (n: number, d = 2): string => (Number.isFinite(n) ? n.toFixed(d) : '-');
  process.stdout.write(`${table(['lobby', 'target', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'vs direct', 'p99 added ms'], rows.map((r) => [
    r.lobby, r.target, r.rps.toFixed(0), f(r.p50_ms), f(r.p99_ms), String(r.errors),
    r.target === 'direct' ? '1.00×' : `${f(ratioTo(r.lobby, r.target))}×`, r.target === 'direct' ? '-' : f(addedP99(r.lobby, r.target)),
  ]))}\n\n`);
  process.stdout.write(`${table(['TLS (fresh connection + 1 request)', 'handshakes/s'], tlsRows.map((r) => [r.target, r.handshakes_per_s.toFixed(0)]))}\n`);
  process.stdout.write(`${CONNECTIONS} connections, ${routeCount} routes bound, ${rounds} rounds of ${seconds} s, HAProxy ${threads} thread(s), ${pin ? 'servers pinned to core 0, load to core 1' : 'not pinned'}.\n`);
  for (const l of ['nginx lobby', 'node lobby']) {
    process.stdout.write(`${l}: Tavern proxy / direct ${f(ratioTo(l, 'Tavern proxy'))}× (goal ≥ 0.85), p99 added ${f(addedP99(l, 'Tavern proxy'))} ms (goal ≤ 1); nginx by hand / direct ${f(ratioTo(l, 'nginx by hand'))}×\n`);
  }
  process.stdout.write(`TLS handshakes Tavern / nginx ${f(result.tls_ratio_tavern_to_nginx)}× (https, HAProxy), ${f(result.tcp_tls_ratio_to_nginx)}× (tcp_tls, Node)\n`);
}
