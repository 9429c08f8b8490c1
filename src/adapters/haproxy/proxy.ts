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
import { join, resolve } from 'node:path';
import type { ProxyRoute } from '../../core/effects.js';
import { routeHostname } from '../../core/lobby/routes.js';
import type { ProxyRoutes } from '../../io/index.js';
import { renderConfig, slotName, TABLES, type ProxyLimits } from './config.js';
import { runtimeBatch, runtimeCall, showTable, type TableEntry } from './runtime-api.js';

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
  /** Tavern's files for the proxy (configuration, maps, socket, certificate); created if missing; may be relative (to the working directory). */
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
  /** Routes at once at most (HAProxy route slots, default 1024): a bind beyond fails. */
  readonly maxRoutes?: number;
  /** Started as root: the user HAProxy drops to once its ports are bound (Debian's package makes `haproxy`). */
  readonly user?: string;
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
  /** 5xx answers of the game server (the proxy's own 503 when the lobby does not answer: `connectErrors`). */
  readonly serverErrors: number;
  /** Requests refused by a per-address limit (429). */
  readonly limited: number;
  /** Connections to the lobby that failed since the route was bound (nothing listening on its port: 503). */
  readonly connectErrors: number;
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
/** HAProxy's lines about a route slot going down or empty: what Tavern did itself when it unbound a route. */
const OWN_DOING = /Server lobby-slot-\d+\/lobby is |backend '?lobby-slot-\d+'? has no server available/;

/** `127.0.0.1:20001` → ['127.0.0.1', '20001']; `[::1]:20001` → ['::1', '20001']. */
const splitAddress = (addr: string): [string, string] => {
  const colon = addr.lastIndexOf(':');
  return [addr.slice(0, colon).replace(/^\[|\]$/g, ''), addr.slice(colon + 1)];
};

/** An address as a `server` line takes it (IPv6 in brackets). */
const configAddress = (addr: string): string => {
  const [ip, port] = splitAddress(addr);
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
};

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
  /** `<proto> <hostname>` → its route slot (a backend whose server points at the lobby); free slots, oldest freed first. */
  readonly #slotOf = new Map<string, number>();
  readonly #free: number[];
  /** A slot's failed connections when its route was bound (HAProxy's counters live as long as the slot). */
  readonly #connectBase = new Map<number, number>();
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
    // Absolute paths: HAProxy reads a `stats socket` path that does not start with `/` as an address.
    const dir = resolve(options.dir);
    this.#socket = join(dir, 'haproxy.sock');
    this.#cfg = join(dir, 'haproxy.cfg');
    this.#pem = join(dir, 'lobby-wildcard.pem');
    this.#pidFile = join(dir, 'haproxy.pid');
    this.#maps = { http: join(dir, 'routes-http.map'), https: join(dir, 'routes-https.map') };
    this.#free = Array.from({ length: options.maxRoutes ?? 1_024 }, (_, i) => i);
  }

  /** Writes the files and starts HAProxy; rejects with HAProxy's own words when it cannot start. */
  static async start(options: HaproxyOptions): Promise<HaproxyGameProxy> {
    const proxy = new HaproxyGameProxy(options);
    await mkdir(options.dir, { recursive: true, mode: 0o700 });
    if (options.tls !== undefined) {
      proxy.#certStamp = await proxy.#stamp();
      await proxy.#writePem();
    }
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
    // Without a certificate there is no HTTPS listener (publishing refuses https ports then).
    if (proto === undefined || (proto === 'https' && this.#o.tls === undefined)) return Promise.resolve();
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
    const [entries, failed] = await Promise.all([showTable(this.#socket, TABLES.routes), this.#slotConnectErrors()]);
    return entries.flatMap((e: TableEntry) => {
      const route = this.#routes.get(e.key);
      const proto = route === undefined ? undefined : protoOf(route);
      if (route === undefined || proto === undefined) return [];
      const slot = this.#slotOf.get(`${proto} ${e.key}`);
      const c = e.counters;
      return [{
        route, hostname: e.key,
        requests: c['http_req_cnt'] ?? 0, bytesIn: c['bytes_in_cnt'] ?? 0, bytesOut: c['bytes_out_cnt'] ?? 0,
        clientErrors: c['http_err_cnt'] ?? 0, serverErrors: c['http_fail_cnt'] ?? 0, limited: c['gpc0'] ?? 0,
        connectErrors: slot === undefined ? 0 : Math.max(0, (failed.get(slot) ?? 0) - (this.#connectBase.get(slot) ?? 0)),
      }];
    });
  }

  /** Each route slot's failed connections (`econ`), by slot number. */
  async #slotConnectErrors(): Promise<Map<number, number>> {
    const csv = await runtimeCall(this.#socket, 'show stat -1 2 -1');
    const lines = csv.split('\n').filter((l) => l.trim() !== '');
    const header = lines[0]?.replace(/^# /, '').split(',') ?? [];
    const out = new Map<number, number>();
    const prefix = slotName(0).slice(0, -1);
    for (const row of lines.slice(1).map((l) => l.split(','))) {
      const name = row[0] ?? '';
      if (row[1] === 'BACKEND' && name.startsWith(prefix)) out.set(Number(name.slice(prefix.length)), Number(row[header.indexOf('econ')] ?? 0) || 0);
    }
    return out;
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
    const rows = lines.slice(1).map((l) => l.split(','));
    const slots = rows.filter((row) => row[1] === 'BACKEND' && (row[0] ?? '').startsWith(slotName(0).slice(0, -1)));
    return [
      ...rows.filter((row) => row[1] === 'FRONTEND').map((row) => ({
        listener: row[0] ?? '', denied: col(row, 'dreq'), invalid: col(row, 'ereq'), requests: col(row, 'req_tot'), connectErrors: 0,
      })),
      { listener: 'lobbies', denied: 0, invalid: 0, requests: slots.reduce((n, row) => n + col(row, 'req_tot'), 0), connectErrors: slots.reduce((n, row) => n + col(row, 'econ'), 0) },
    ];
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
    // Every wanted route gets a slot; HAProxy starts with them in its configuration and maps.
    const written = { http: new Map<string, string>(), https: new Map<string, string>() };
    const slots: Array<string | undefined> = Array.from({ length: this.#free.length + this.#slotOf.size }, () => undefined);
    for (const [key, slot] of [...this.#slotOf]) {
      const [proto, host] = key.split(' ') as [Proto, string];
      if (!this.#desired[proto].has(host)) this.#release(key, slot);
    }
    for (const proto of ['http', 'https'] as const) {
      const lines: string[] = [];
      for (const [host, addr] of this.#desired[proto]) {
        const slot = this.#slotFor(`${proto} ${host}`);
        if (slot === undefined) continue;
        slots[slot] = configAddress(addr);
        written[proto].set(host, addr);
        lines.push(`${host} ${slotName(slot)}\n`);
      }
      await writeFile(`${this.#maps[proto]}.tmp`, lines.join(''));
      await rename(`${this.#maps[proto]}.tmp`, this.#maps[proto]);
    }
    await writeFile(this.#cfg, renderConfig({
      socket: this.#socket,
      host: this.#o.host,
      httpPort: this.#o.httpPort,
      ...(this.#o.tls === undefined ? {} : { https: { port: this.#o.tls.port, pem: this.#pem } }),
      maps: this.#maps,
      jobDomain: this.#o.jobDomain.toLowerCase(),
      limits: this.#o.limits,
      slots,
      ...(this.#o.threads === undefined ? {} : { threads: this.#o.threads }),
      ...(this.#o.user === undefined ? {} : { user: this.#o.user }),
    }));
    const dirtyBefore = new Set(this.#dirty);
    // A new HAProxy counts from zero.
    this.#connectBase.clear();
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
        // A slot's server changing state, and its backend then having no server, is Tavern's own
        // doing (a route bound or unbound: slot servers have no health checks), never an alert.
        if (OWN_DOING.test(line)) this.#o.log.info({ haproxy: line }, 'haproxy');
        else if (line.startsWith('[ALERT]')) this.#o.log.error({ haproxy: line }, 'haproxy');
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
          // HAProxy and Tavern disagree on its state: restart it from the routes Tavern holds.
          this.#o.log.error({ err: error }, 'a route change failed: restarting the game proxy with the current routes');
          this.#child?.kill('SIGKILL');
        }
      }
      for (const w of waiters) w();
    }
    this.#draining = false;
  }

  /** The slot of a route key, assigned now if it has none; undefined when every slot is taken. */
  #slotFor(key: string): number | undefined {
    const held = this.#slotOf.get(key);
    if (held !== undefined) return held;
    const slot = this.#free.shift();
    if (slot === undefined) {
      this.#o.log.error({ route: key, maxRoutes: this.#o.maxRoutes ?? 1_024 }, 'the game proxy has no free route slot: this route is not served (raise TAVERN_PROXY_MAX_ROUTES)');
      return undefined;
    }
    this.#slotOf.set(key, slot);
    return slot;
  }

  #release(key: string, slot: number): void {
    this.#slotOf.delete(key);
    this.#free.push(slot);
  }

  /**
   * Sends the dirty routes' differences, in batches that fit HAProxy's command buffer. A new route:
   * its slot's server pointed at the lobby and made ready, then its hostname mapped to the slot. A
   * removed route: its hostname unmapped, then its slot's server put in maintenance and its
   * sessions cut (the lobby is stopping); the slot is reused last.
   */
  async #apply(): Promise<void> {
    const keys = [...this.#dirty];
    this.#dirty.clear();
    const groups: Array<{ readonly commands: readonly string[]; readonly done: () => void; readonly bound?: number }> = [];
    for (const key of keys) {
      const [proto, host] = key.split(' ') as [Proto, string];
      const want = this.#desired[proto].get(host);
      const have = this.#applied[proto].get(host);
      if (want === have) continue;
      const map = this.#maps[proto];
      if (want !== undefined) {
        const slot = this.#slotFor(key);
        if (slot === undefined) continue;
        const server = `${slotName(slot)}/lobby`;
        const [ip, port] = splitAddress(want);
        const point = `set server ${server} addr ${ip} port ${port}`;
        groups.push({
          commands: have === undefined ? [point, `set server ${server} state ready`, `add map ${map} ${host} ${slotName(slot)}`] : [point],
          done: () => this.#applied[proto].set(host, want),
          ...(have === undefined ? { bound: slot } : {}),
        });
      } else {
        const slot = this.#slotOf.get(key);
        if (slot === undefined) continue;
        const server = `${slotName(slot)}/lobby`;
        groups.push({
          commands: [`del map ${map} ${host}`, `set server ${server} state maint`, `shutdown sessions server ${server}`],
          done: () => {
            this.#applied[proto].delete(host);
            this.#release(key, slot);
          },
        });
      }
    }
    let batch: Array<(typeof groups)[number]> = [];
    let bytes = 0;
    const send = async (): Promise<void> => {
      await runtimeBatch(this.#socket, batch.flatMap((g) => g.commands));
      for (const g of batch) g.done();
      // New routes count their lobby's failed connections from now (a slot's counter outlives its routes).
      const bound = batch.flatMap((g) => (g.bound === undefined ? [] : [g.bound]));
      if (bound.length > 0) {
        const failed = await this.#slotConnectErrors();
        for (const slot of bound) this.#connectBase.set(slot, failed.get(slot) ?? 0);
      }
      batch = [];
      bytes = 0;
    };
    for (const group of groups) {
      const size = group.commands.reduce((n, c) => n + c.length + 1, 0);
      if (bytes + size > BATCH_BYTES) await send();
      batch.push(group);
      bytes += size;
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
