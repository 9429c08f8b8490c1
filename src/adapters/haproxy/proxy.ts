/**
 * The game proxy (wire.md §5.2) as a managed HAProxy process: Tavern writes its configuration and
 * route maps, starts it, checks it answers, restarts it when it dies (with the routes Tavern holds),
 * and changes routes through the runtime API only (no reload: other connections are never dropped).
 * The route table lives here; HAProxy holds a copy. `bind`/`unbind` resolve once HAProxy has the
 * change (or, while it is down, once the change is recorded for its restart).
 *
 * With a certificate, `https` routes are served on the HTTPS port; the files are watched and a new
 * pair is handed to HAProxy (`set ssl cert` + `commit ssl cert`) without a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProxyRoute } from '../../core/effects.js';
import { routeHostname } from '../../core/lobby/routes.js';
import type { ProxyRoutes } from '../../io/index.js';
import { renderConfig, TABLES, type ProxyLimits } from './config.js';
import { runtimeBatch, runtimeCall, showMap, showTable, type TableEntry } from './runtime-api.js';

export interface ProxyLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface ProxyTls {
  readonly port: number;
  /** The wildcard certificate (`*.lobby.<region>.<job domain>`, chain included) and its key, PEM. */
  readonly certFile: string;
  readonly keyFile: string;
}

export interface HaproxyOptions {
  /** The `haproxy` binary. */
  readonly binary: string;
  /** Tavern's files for the proxy (configuration, maps, socket, certificate); created if missing. */
  readonly dir: string;
  readonly host: string;
  readonly httpPort: number;
  readonly tls?: ProxyTls;
  readonly jobDomain: string;
  /** Where lobbies' host ports are reached (the Docker runtime's publish address). */
  readonly upstreamHost: string;
  readonly limits: ProxyLimits;
  readonly threads?: number;
  readonly log: ProxyLog;
  /** How often the certificate files are checked for a new pair (default 5 s). */
  readonly certPollMs?: number;
  /** How often HAProxy is asked whether it answers (default 5 s). */
  readonly healthMs?: number;
}

type Proto = 'http' | 'https';

/** One route's counters, as HAProxy counted them since the route's first request. */
export interface RouteStats {
  readonly route: ProxyRoute;
  readonly hostname: string;
  readonly requests: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** Requests HAProxy counts as client errors (4xx answers and invalid requests). */
  readonly clientErrors: number;
  /** 5xx answers of the lobby (connection failures are counted per listener only: `listenerStats`). */
  readonly serverErrors: number;
  /** Requests refused by a per-address limit (429). */
  readonly limited: number;
}

export interface ProxyStatus {
  readonly running: boolean;
  readonly pid?: number;
  readonly restarts: number;
  readonly https: boolean;
  readonly routes: number;
}

const BATCH_BYTES = 8_000;
const READY_MS = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Which map a route goes in; `tcp`/`udp` are published by the runtime itself, `tcp_tls` is not proxied yet. */
const protoOf = (route: ProxyRoute): Proto | undefined => (route.protocol === 'http' ? 'http' : route.protocol === 'https' ? 'https' : undefined);

/**
 * @example
 * const proxy = await HaproxyGameProxy.start({ binary: '/usr/sbin/haproxy', dir, host: '127.0.0.1', httpPort: 8081, jobDomain, upstreamHost: '127.0.0.1', limits, log });
 * await proxy.bind(route); // the lobby answers at routeHostname(route, jobDomain)
 */
export class HaproxyGameProxy implements ProxyRoutes {
  readonly #o: HaproxyOptions;
  readonly #socket: string;
  readonly #cfg: string;
  readonly #pem: string;
  readonly #pidFile: string;
  readonly #maps: Record<Proto, string>;
  /** What Tavern wants served, and what HAProxy is known to hold, per map: hostname → address. */
  readonly #desired: Record<Proto, Map<string, string>> = { http: new Map(), https: new Map() };
  #applied: Record<Proto, Map<string, string>> = { http: new Map(), https: new Map() };
  readonly #dirty = new Set<string>();
  /** Hostname → the route (metrics and lobby logs name lobbies). */
  readonly #routes = new Map<string, ProxyRoute>();
  #child: ChildProcess | undefined;
  #up = false;
  #closing = false;
  #restarts = 0;
  #certStamp = '';
  #waiters: Array<() => void> = [];
  #draining = false;
  readonly #timers: NodeJS.Timeout[] = [];

  private constructor(options: HaproxyOptions) {
    this.#o = options;
    this.#socket = join(options.dir, 'haproxy.sock');
    this.#cfg = join(options.dir, 'haproxy.cfg');
    this.#pem = join(options.dir, 'lobby-wildcard.pem');
    this.#pidFile = join(options.dir, 'haproxy.pid');
    this.#maps = { http: join(options.dir, 'routes-http.map'), https: join(options.dir, 'routes-https.map') };
  }

  /** Writes the files and starts HAProxy; rejects with HAProxy's own words when it cannot start. */
  static async start(options: HaproxyOptions): Promise<HaproxyGameProxy> {
    const proxy = new HaproxyGameProxy(options);
    await mkdir(options.dir, { recursive: true, mode: 0o700 });
    if (options.tls !== undefined) {
      proxy.#certStamp = await proxy.#stamp();
      await proxy.#writePem();
    }
    await writeFile(proxy.#cfg, renderConfig({
      socket: proxy.#socket,
      host: options.host,
      httpPort: options.httpPort,
      ...(options.tls === undefined ? {} : { https: { port: options.tls.port, pem: proxy.#pem } }),
      maps: proxy.#maps,
      jobDomain: options.jobDomain.toLowerCase(),
      limits: options.limits,
      ...(options.threads === undefined ? {} : { threads: options.threads }),
    }));
    await proxy.#launch();
    proxy.#timers.push(setInterval(() => void proxy.#checkHealth(), options.healthMs ?? 5_000));
    if (options.tls !== undefined) proxy.#timers.push(setInterval(() => void proxy.#checkCert(), options.certPollMs ?? 5_000));
    for (const t of proxy.#timers) t.unref();
    return proxy;
  }

  /** The hostname clients use for a route (the path form is `lobby.<job domain>/<region>/<lobby>-<label>`). */
  hostname(route: ProxyRoute): string {
    return routeHostname(route, this.#o.jobDomain);
  }

  bind(route: ProxyRoute): Promise<void> {
    const proto = protoOf(route);
    if (proto === undefined) return Promise.resolve();
    const hostname = this.hostname(route);
    this.#routes.set(hostname, route);
    this.#desired[proto].set(hostname, `${this.#o.upstreamHost}:${route.hostPort}`);
    this.#dirty.add(`${proto} ${hostname}`);
    return this.#flush();
  }

  unbind(route: ProxyRoute): Promise<void> {
    const proto = protoOf(route);
    if (proto === undefined) return Promise.resolve();
    const hostname = this.hostname(route);
    this.#desired[proto].delete(hostname);
    this.#dirty.add(`${proto} ${hostname}`);
    return this.#flush();
  }

  status(): ProxyStatus {
    return {
      running: this.#up,
      ...(this.#child?.pid === undefined ? {} : { pid: this.#child.pid }),
      restarts: this.#restarts,
      https: this.#o.tls !== undefined,
      routes: this.#desired.http.size + this.#desired.https.size,
    };
  }

  /** Per-route counters of every route that served a request in the last 24 h (bound or not). */
  async routeStats(): Promise<RouteStats[]> {
    if (!this.#up) return [];
    const entries: TableEntry[] = await showTable(this.#socket, TABLES.routes);
    return entries.flatMap((e) => {
      const route = this.#routes.get(e.key);
      if (route === undefined) return [];
      const c = e.counters;
      return [{
        route, hostname: e.key,
        requests: c['http_req_cnt'] ?? 0, bytesIn: c['bytes_in_cnt'] ?? 0, bytesOut: c['bytes_out_cnt'] ?? 0,
        clientErrors: c['http_err_cnt'] ?? 0, serverErrors: c['http_fail_cnt'] ?? 0, limited: c['gpc0'] ?? 0,
      }];
    });
  }

  /**
   * Per listener: requests, requests refused by the limits (429) and bad or slow requests (408);
   * and for the lobbies' side (`listener: 'lobbies'`), connections to a lobby that failed (nothing
   * listening on its port: 503), which HAProxy does not count per route.
   */
  async listenerStats(): Promise<Array<{ readonly listener: string; readonly denied: number; readonly invalid: number; readonly requests: number; readonly connectErrors: number }>> {
    if (!this.#up) return [];
    const csv = await runtimeCall(this.#socket, 'show stat');
    const lines = csv.split('\n').filter((l) => l.trim() !== '');
    const header = lines[0]?.replace(/^# /, '').split(',') ?? [];
    const col = (row: string[], name: string): number => Number(row[header.indexOf(name)] ?? 0) || 0;
    return lines.slice(1).map((l) => l.split(',')).filter((row) => (row[1] === 'FRONTEND' && row[0] !== 'stats') || (row[0] === 'lobbies' && row[1] === 'BACKEND')).map((row) => ({
      listener: row[0] ?? '', denied: col(row, 'dreq'), invalid: col(row, 'ereq'), requests: col(row, 'req_tot'), connectErrors: col(row, 'econ'),
    }));
  }

  /** Stops HAProxy (its connections close) and the timers. */
  async close(): Promise<void> {
    this.#closing = true;
    for (const t of this.#timers) clearInterval(t);
    const child = this.#child;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
  }

  /** Maps written from the routes held now, HAProxy started, ready when its runtime API answers. */
  async #launch(): Promise<void> {
    for (const proto of ['http', 'https'] as const) {
      const text = [...this.#desired[proto]].map(([host, addr]) => `${host} ${addr}\n`).join('');
      await writeFile(`${this.#maps[proto]}.tmp`, text);
      await rename(`${this.#maps[proto]}.tmp`, this.#maps[proto]);
    }
    const written = { http: new Map(this.#desired.http), https: new Map(this.#desired.https) };
    const dirtyBefore = new Set(this.#dirty);
    await this.#killOrphan();
    const child = spawn(this.#o.binary, ['-db', '-f', this.#cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.#child = child;
    // HAProxy writes no pid file in the foreground: Tavern keeps it, for the next start after a kill -9.
    if (child.pid !== undefined) await writeFile(this.#pidFile, `${child.pid}\n`);
    let said = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      said = (said + chunk).slice(-4_000);
      for (const raw of chunk.split('\n')) {
        const line = raw.trim();
        if (line === '') continue;
        if (line.startsWith('[ALERT]')) this.#o.log.error({ haproxy: line }, 'haproxy');
        else if (line.startsWith('[WARNING]')) this.#o.log.warn({ haproxy: line }, 'haproxy');
        else this.#o.log.info({ haproxy: line }, 'haproxy');
      }
    });
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (error) => reject(new Error(`haproxy could not be started (${this.#o.binary}): ${error.message}`)));
      child.once('exit', (code, signal) => reject(new Error(`haproxy exited at start (${signal ?? `code ${code}`}): ${said.trim()}`)));
    });
    failed.catch(() => undefined);
    const deadline = Date.now() + READY_MS;
    for (;;) {
      const answered = await Promise.race([runtimeCall(this.#socket, 'show info').then((a) => a.includes('Pid:'), () => false), failed]);
      if (answered) break;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`haproxy did not answer on ${this.#socket} within ${READY_MS} ms: ${said.trim()}`);
      }
      await sleep(50);
    }
    this.#applied = written;
    for (const key of dirtyBefore) if (!this.#changedSince(key, written)) this.#dirty.delete(key);
    this.#up = true;
    child.once('exit', (code, signal) => this.#exited(child, code, signal));
    this.#o.log.info({ pid: child.pid, http: `${this.#o.host}:${this.#o.httpPort}`, https: this.#o.tls?.port, routes: this.status().routes }, 'game proxy (haproxy) running');
    if (this.#dirty.size > 0) void this.#flush();
  }

  /**
   * An HAProxy started with this directory's configuration by a Tavern that was killed (`kill -9`)
   * still holds the ports and the socket: stop it first (only a process whose command line names
   * this configuration file).
   */
  async #killOrphan(): Promise<void> {
    const pid = Number((await readFile(this.#pidFile, 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(pid) || pid <= 1 || pid === this.#child?.pid) return;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.split('\0').includes(this.#cfg)) return;
    this.#o.log.warn({ pid }, 'stopping a game proxy (haproxy) left running by an earlier Tavern');
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 100 && (await readFile(`/proc/${pid}/cmdline`, 'utf8').then((c) => c !== '', () => false)); i++) await sleep(20);
  }

  #changedSince(key: string, written: Record<Proto, Map<string, string>>): boolean {
    const [proto, host] = key.split(' ') as [Proto, string];
    return this.#desired[proto].get(host) !== written[proto].get(host);
  }

  #exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#child !== child) return;
    this.#up = false;
    if (this.#closing) return;
    this.#o.log.error({ code, signal }, 'the game proxy (haproxy) died: restarting it with the current routes');
    void this.#restart();
  }

  async #restart(): Promise<void> {
    for (let delay = 200; !this.#closing; delay = Math.min(delay * 2, 10_000)) {
      await sleep(delay);
      if (this.#closing) return;
      try {
        this.#restarts += 1;
        await this.#launch();
        return;
      } catch (error) {
        this.#o.log.error({ err: error, retryMs: delay * 2 }, 'the game proxy (haproxy) could not be restarted');
      }
    }
  }

  async #checkHealth(): Promise<void> {
    const child = this.#child;
    if (!this.#up || child === undefined || this.#closing) return;
    const ok = await runtimeCall(this.#socket, 'show info').then((a) => a.includes('Pid:'), () => false);
    if (!ok && this.#child === child && this.#up) {
      this.#o.log.error({ pid: child.pid }, 'the game proxy (haproxy) does not answer its runtime API: killing it to restart it');
      child.kill('SIGKILL');
    }
  }

  /** Resolves once every change recorded before the call reached HAProxy (or HAProxy is down). */
  #flush(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      if (!this.#draining) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    while (this.#waiters.length > 0) {
      const waiters = this.#waiters.splice(0);
      if (this.#up) {
        try {
          await this.#apply();
        } catch (error) {
          this.#o.log.warn({ err: error }, 'a route change failed: re-reading the proxy\'s routes and trying again');
          try {
            for (const proto of ['http', 'https'] as const) this.#applied[proto] = await showMap(this.#socket, this.#maps[proto]);
            for (const proto of ['http', 'https'] as const) for (const host of new Set([...this.#desired[proto].keys(), ...this.#applied[proto].keys()])) this.#dirty.add(`${proto} ${host}`);
            await this.#apply();
          } catch (again) {
            this.#o.log.error({ err: again }, 'route changes could not be applied; they are applied when the proxy restarts');
          }
        }
      }
      for (const w of waiters) w();
    }
    this.#draining = false;
  }

  /** Sends the dirty routes' differences, in batches that fit HAProxy's command buffer. */
  async #apply(): Promise<void> {
    const keys = [...this.#dirty];
    this.#dirty.clear();
    const commands: string[] = [];
    const changes: Array<() => void> = [];
    for (const key of keys) {
      const [proto, host] = key.split(' ') as [Proto, string];
      const want = this.#desired[proto].get(host);
      const have = this.#applied[proto].get(host);
      if (want === have) continue;
      const map = this.#maps[proto];
      commands.push(want === undefined ? `del map ${map} ${host}` : have === undefined ? `add map ${map} ${host} ${want}` : `set map ${map} ${host} ${want}`);
      changes.push(() => (want === undefined ? this.#applied[proto].delete(host) : this.#applied[proto].set(host, want)));
    }
    let batch: string[] = [];
    let bytes = 0;
    let done = 0;
    const send = async (): Promise<void> => {
      try {
        await runtimeBatch(this.#socket, batch);
      } catch (error) {
        for (const key of keys.slice(done)) this.#dirty.add(key);
        throw error;
      }
      for (const change of changes.slice(done, done + batch.length)) change();
      done += batch.length;
      batch = [];
      bytes = 0;
    };
    for (const command of commands) {
      if (bytes + command.length > BATCH_BYTES) await send();
      batch.push(command);
      bytes += command.length + 1;
    }
    if (batch.length > 0) await send();
  }

  async #writePem(): Promise<string> {
    const tls = this.#o.tls;
    if (tls === undefined) throw new Error('no certificate is configured');
    const [cert, key] = await Promise.all([readFile(tls.certFile, 'utf8'), readFile(tls.keyFile, 'utf8')]);
    const pem = `${cert.trim()}\n${key.trim()}\n`;
    await writeFile(`${this.#pem}.tmp`, pem, { mode: 0o600 });
    await rename(`${this.#pem}.tmp`, this.#pem);
    return pem;
  }

  async #stamp(): Promise<string> {
    const tls = this.#o.tls;
    if (tls === undefined) return '';
    const [c, k] = await Promise.all([stat(tls.certFile), stat(tls.keyFile)]);
    return `${c.mtimeMs}:${c.size}:${k.mtimeMs}:${k.size}`;
  }

  /** A new certificate pair on disk goes to HAProxy through the runtime API (no restart). */
  async #checkCert(): Promise<void> {
    if (!this.#up || this.#closing) return;
    try {
      const stamp = await this.#stamp();
      if (stamp === this.#certStamp) return;
      const pem = await this.#writePem();
      const set = await runtimeCall(this.#socket, `set ssl cert ${this.#pem} <<\n${pem}\n`);
      if (!/Transaction (created|updated)/i.test(set)) throw new Error(`HAProxy refused the certificate: ${set.trim()}`);
      const commit = await runtimeCall(this.#socket, `commit ssl cert ${this.#pem}`);
      if (!/Success/i.test(commit)) throw new Error(`HAProxy did not commit the certificate: ${commit.trim()}`);
      this.#certStamp = stamp;
      this.#o.log.info({ cert: this.#o.tls?.certFile }, 'game proxy certificate rotated');
    } catch (error) {
      this.#o.log.error({ err: error }, 'the game proxy certificate could not be rotated; the previous one is still served');
    }
  }
}
