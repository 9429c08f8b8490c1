/**
 * The game proxy (wire.md §5.2) as a managed HAProxy process: Tavern writes its configuration and
 * route maps, starts it, checks it answers, restarts it when it dies (with the routes Tavern holds),
 * and changes routes through the runtime API only (no reload: other connections are never dropped).
 * The route table lives here; HAProxy holds a copy. `bind`/`unbind` resolve once HAProxy has the
 * change (or, while it is down, once the change is recorded for its restart). Which slot serves a
 * route is the slot table's answer (`slots.ts`), which commands change a route the diff's
 * (`diff.ts`); this file sends them and supervises the process.
 *
 * With a certificate, `https` routes are served on the HTTPS port; the files are watched and a new
 * pair is handed to HAProxy (`cert.ts`) without a restart.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProxyRoute } from '../../core/effects.js';
import { routeHostname } from '../../core/lobby/routes.js';
import type { ProxyRoutes } from '../../io/index.js';
import type { Logger } from '../../io/log.js';
import { certStamp, rotateCert, writePem, type ProxyTls } from './cert.js';
import { renderConfig, TABLES, type ProxyLimits } from './config.js';
import { differs, inBatches, protoOf, PROTOS, routeChanges, routeKey, routeSteps, slotsForStart, startingRoutes, type Proto } from './diff.js';
import { answers, killOrphan, spawnHaproxy } from './process.js';
import { runtimeBatch, runtimeCall, showTable } from './runtime-api.js';
import { SlotTable } from './slots.js';
import { listenerCounts, routeCounters, slotFailures, type ListenerStats, type RouteStats } from './stats.js';

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
  /**
   * Where one lobby's host ports are reached, when lobbies run on several hosts (the Swarm node its
   * task runs on); undefined while it is not known (not placed yet): its routes wait, unserved,
   * until {@link HaproxyGameProxy.readdress} finds an address. Absent: `upstreamHost` for every lobby.
   */
  readonly upstreamOf?: (lobbyId: string) => string | undefined;
  readonly limits: ProxyLimits;
  readonly threads?: number;
  readonly log: Logger;
  /** How often the certificate files are checked for a new pair (default 5 s). */
  readonly certPollMs?: number;
  /** How often HAProxy is asked whether it answers (default 5 s). */
  readonly healthMs?: number;
  /** Routes at once at most (HAProxy route slots, default 1024): a bind beyond fails. */
  readonly maxRoutes?: number;
  /** Started as root: the user HAProxy drops to once its ports are bound (Debian's package makes `haproxy`). */
  readonly user?: string;
}

export interface ProxyStatus {
  readonly running: boolean;
  readonly pid?: number;
  readonly restarts: number;
  readonly https: boolean;
  readonly routes: number;
}

/** HAProxy's command buffer, for one runtime-API call's commands. */
const BATCH_BYTES = 8_000;

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
  /** The routes whose desired and applied addresses may differ, by key (`routeKey`). */
  readonly #dirty = new Set<string>();
  /** Route key → its route slot (a backend whose server points at the lobby). */
  readonly #slots: SlotTable;
  /** A slot's failed connections when its route was bound (HAProxy's counters live as long as the slot). */
  readonly #connectBase = new Map<number, number>();
  /** Hostname → the route (metrics and lobby logs name lobbies). */
  readonly #routes = new Map<string, ProxyRoute>();
  /** The routes bound now (served, or waiting for their lobby's address), by key. */
  readonly #bound = new Map<string, ProxyRoute>();
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
    this.#slots = new SlotTable(options.maxRoutes ?? 1_024);
  }

  /** Writes the files and starts HAProxy; rejects with HAProxy's own words when it cannot start. */
  static async start(options: HaproxyOptions): Promise<HaproxyGameProxy> {
    const proxy = new HaproxyGameProxy(options);
    await mkdir(options.dir, { recursive: true, mode: 0o700 });
    if (options.tls !== undefined) {
      proxy.#certStamp = await certStamp(options.tls);
      await writePem(options.tls, proxy.#pem);
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
    this.#bound.set(routeKey(proto, hostname), route);
    this.#aim(proto, hostname, route);
    return this.#flush();
  }

  unbind(route: ProxyRoute): Promise<void> {
    const proto = protoOf(route);
    if (proto === undefined) return Promise.resolve();
    const hostname = this.hostname(route);
    this.#bound.delete(routeKey(proto, hostname));
    this.#desired[proto].delete(hostname);
    this.#dirty.add(routeKey(proto, hostname));
    return this.#flush();
  }

  /**
   * Points every bound route at its lobby's address as `upstreamOf` gives it now (a lobby placed on
   * a node, adopted after a restart, or moved): resolves once HAProxy has the changes.
   */
  readdress(): Promise<void> {
    let changed = false;
    for (const route of this.#bound.values()) {
      const proto = protoOf(route);
      if (proto === undefined) continue;
      const hostname = this.hostname(route);
      if (this.#desired[proto].get(hostname) === this.#upstream(route)) continue;
      this.#aim(proto, hostname, route);
      changed = true;
    }
    return changed ? this.#flush() : Promise.resolve();
  }

  /** Where a route's lobby is reached now, or undefined while it is not known. */
  #upstream(route: ProxyRoute): string | undefined {
    const host = this.#o.upstreamOf === undefined ? this.#o.upstreamHost : this.#o.upstreamOf(route.lobbyId);
    return host === undefined ? undefined : `${host}:${route.hostPort}`;
  }

  /** Records where a bound route should point (nowhere while its lobby's address is unknown). */
  #aim(proto: Proto, hostname: string, route: ProxyRoute): void {
    const address = this.#upstream(route);
    if (address === undefined) this.#desired[proto].delete(hostname);
    else this.#desired[proto].set(hostname, address);
    this.#dirty.add(routeKey(proto, hostname));
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
    const [entries, failed] = await Promise.all([showTable(this.#socket, TABLES.routes), this.#slotFailures()]);
    return entries.flatMap((e) => {
      const route = this.#routes.get(e.key);
      const proto = route === undefined ? undefined : protoOf(route);
      if (route === undefined || proto === undefined) return [];
      const slot = this.#slots.slotOf(routeKey(proto, e.key));
      return [routeCounters(route, e, slot === undefined ? 0 : Math.max(0, (failed.get(slot) ?? 0) - (this.#connectBase.get(slot) ?? 0)))];
    });
  }

  /** Each route slot's failed connections (`econ`), by slot number. */
  async #slotFailures(): Promise<Map<number, number>> {
    return slotFailures(await runtimeCall(this.#socket, 'show stat -1 2 -1'));
  }

  /**
   * Per listener: requests, requests refused by the limits (429) and bad or slow requests (408);
   * and for the lobbies' side (`listener: 'lobbies'`), connections to a lobby that failed (nothing
   * listening on its port: 503), which HAProxy does not count per route.
   */
  async listenerStats(): Promise<ListenerStats[]> {
    if (!this.#up) return [];
    return listenerCounts(await runtimeCall(this.#socket, 'show stat'));
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
    this.#refused(slotsForStart(this.#slots, this.#desired));
    const { maps, slots, written } = startingRoutes(this.#desired, this.#slots.held(), this.#slots.size);
    for (const proto of PROTOS) {
      await writeFile(`${this.#maps[proto]}.tmp`, maps[proto]);
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
    await killOrphan(this.#pidFile, this.#cfg, this.#child?.pid, this.#o.log);
    const { child, ready } = spawnHaproxy({ binary: this.#o.binary, cfg: this.#cfg, socket: this.#socket, log: this.#o.log });
    this.#child = child;
    // HAProxy writes no pid file in the foreground: Tavern keeps it, for the next start after a kill -9.
    if (child.pid !== undefined) await writeFile(this.#pidFile, `${child.pid}\n`);
    await ready();
    this.#applied = written;
    for (const key of dirtyBefore) if (!differs(this.#desired, written, key)) this.#dirty.delete(key);
    this.#up = true;
    child.once('exit', (code, signal) => this.#exited(child, code, signal));
    this.#o.log.info({ haproxyPid: child.pid, http: `${this.#o.host}:${this.#o.httpPort}`, https: this.#o.tls?.port, routes: this.status().routes }, 'game proxy (haproxy) running');
    if (this.#dirty.size > 0) void this.#flush();
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
    if (!(await answers(this.#socket)) && this.#child === child && this.#up) {
      this.#o.log.error({ haproxyPid: child.pid }, 'the game proxy (haproxy) does not answer its runtime API: killing it to restart it');
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

  /** Says which routes are not served: every slot was held. */
  #refused(keys: readonly string[]): void {
    for (const key of keys) this.#o.log.error({ route: key, maxRoutes: this.#slots.size }, 'the game proxy has no free route slot: this route is not served (raise TAVERN_PROXY_MAX_ROUTES)');
  }

  /**
   * Sends the dirty routes' commands (`diff.ts`), in batches that fit HAProxy's command buffer, and
   * records each batch once HAProxy took it: a removed route's slot is freed only then (and reused
   * last), so no slot is lent twice while its commands are on the way.
   */
  async #apply(): Promise<void> {
    const { steps, refused } = routeSteps(routeChanges(this.#desired, this.#applied, this.#dirty), this.#slots, this.#maps);
    this.#dirty.clear();
    this.#refused(refused);
    for (const batch of inBatches(steps, BATCH_BYTES)) {
      await runtimeBatch(this.#socket, batch.flatMap((s) => s.commands));
      for (const { change } of batch) {
        if (change.want !== undefined) this.#applied[change.proto].set(change.host, change.want);
        else {
          this.#applied[change.proto].delete(change.host);
          this.#slots.release(change.key);
        }
      }
      // New routes count their lobby's failed connections from now (a slot's counter outlives its routes).
      const bound = batch.flatMap((s) => (s.change.want !== undefined && s.change.have === undefined ? [s.slot] : []));
      if (bound.length > 0) {
        const failed = await this.#slotFailures();
        for (const slot of bound) this.#connectBase.set(slot, failed.get(slot) ?? 0);
      }
    }
  }

  /** A new certificate pair on disk goes to HAProxy through the runtime API (no restart). */
  async #checkCert(): Promise<void> {
    const tls = this.#o.tls;
    if (!this.#up || this.#closing || tls === undefined) return;
    try {
      const stamp = await certStamp(tls);
      if (stamp === this.#certStamp) return;
      await rotateCert(this.#socket, this.#pem, await writePem(tls, this.#pem));
      this.#certStamp = stamp;
      this.#o.log.info({ cert: tls.certFile }, 'game proxy certificate rotated');
    } catch (error) {
      this.#o.log.error({ err: error }, 'the game proxy certificate could not be rotated; the previous one is still served');
    }
  }
}
