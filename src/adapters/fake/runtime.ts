/**
 * The one fake container runtime: it runs nothing, on the timers it is given (the server's real
 * ones, a test's manual ones, the simulator's virtual time). The server (`TAVERN_RUNTIME=fake`),
 * the server tests and the simulator all use it; what a real fleet does besides starting and
 * stopping is opt-in: a fixed or sampled cold start before the lobby calls ready, sampled crashes,
 * a capacity per region, starts that fail, and outages of the engine.
 */
import type { StartLobby, StopLobby } from '../../core/effects.js';
import type { LogLine, LogStream } from '../../io/catalog.js';
import type { Clock, ExitReason, Runtime, RuntimeListener, Timers } from '../../io/index.js';

/** Who the fake reports to: the matchmaker (`lobbyReady`, `exited`). */
export interface FakeRuntimeTarget extends RuntimeListener {
  lobbyReady(ref: { readonly namespaceId: string; readonly lobbyId: string }): Promise<unknown>;
}

/** A window of clock time in which the container engine does not answer. */
export interface RuntimeOutage {
  /** Clock ms: starts fail from then, until `to` (exclusive). Running containers are not touched. */
  readonly from: number;
  readonly to: number;
  /**
   * How long the runtime takes to notice (a health check's period): {@link FakeRuntime.available}
   * says false from `from + noticedAfterMs` until `to + noticedAfterMs`.
   */
  readonly noticedAfterMs: number;
}

/** What the fake did, for a trace (the simulator's). */
export type FakeRuntimeEvent =
  | { readonly type: 'started'; readonly lobby: StartLobby; readonly readyInMs?: number; readonly crashInMs?: number }
  | { readonly type: 'refused'; readonly lobby: StartLobby; readonly reason: string }
  | { readonly type: 'stopping'; readonly lobbyId: string; readonly force: boolean }
  | { readonly type: 'exited'; readonly lobbyId: string; readonly reason: ExitReason };

export interface FakeRuntimeOptions {
  /** Where delays run (ready, crash, exit after a stop); absent: what would wait happens at once. */
  readonly timers?: Timers;
  /** For log lines and outages. */
  readonly clock?: Clock;
  /**
   * Call `lobbyReady` this long after each start: a number (0: during `start`), or what this
   * returns for each start (a delay drawn from a distribution, always on the timers); absent:
   * never on its own.
   */
  readonly readyAfterMs?: number | ((lobby: StartLobby) => number);
  /** The container crashes this long after its start (drawn after its ready delay); undefined: never. */
  readonly crashAfterMs?: (lobby: StartLobby) => number | undefined;
  /** Containers a region can run at once (a stopping one included): a start beyond it fails. Absent: no limit. */
  readonly capacity?: (region: string) => number;
  /** A start for which this returns a reason fails with it (`start-failed`). */
  readonly failStart?: (lobby: StartLobby) => string | undefined;
  /** Windows in which the engine does not answer (needs `clock`). */
  readonly outages?: readonly RuntimeOutage[];
  /** A stopped container exits this long after (0: at once; a forced stop at once); absent: it is never reported gone on its own. */
  readonly exitAfterStopMs?: number;
  /** Keep every start and stop asked for (`started`, `stopped`), as tests read them; default true (a long simulation turns it off). */
  readonly history?: boolean;
  /** Where the fake writes a line per start (like a container's first output). */
  readonly logs?: { write(lobbyId: string, stream: LogStream, lines: readonly LogLine[]): Promise<unknown> };
  readonly observe?: (event: FakeRuntimeEvent) => void;
}

interface Container {
  readonly lobby: StartLobby;
  state: 'running' | 'stopping';
}

/** How often a running container's distant crash is looked at again: most crash times fall days away. */
const CRASH_CHECK_MS = 3_600_000;

/**
 * @example
 * const runtime = new FakeRuntime({ timers, readyAfterMs: 0, exitAfterStopMs: 0 });
 * const matchmaker = new Matchmaker({ ..., runtime });
 * runtime.attach(matchmaker);
 */
export class FakeRuntime implements Runtime {
  /** Every start asked for, failed ones included (with `history`). */
  readonly started: StartLobby[] = [];
  /** Every stop asked for (with `history`). */
  readonly stopped: StopLobby[] = [];
  /** Starts that failed (an outage, `failStart`, a full region). */
  refused = 0;
  readonly #o: FakeRuntimeOptions;
  readonly #history: boolean;
  #target: FakeRuntimeTarget | undefined;
  readonly #containers = new Map<string, Container>();
  readonly #perRegion = new Map<string, number>();

  constructor(options: FakeRuntimeOptions = {}) {
    if (options.outages !== undefined && options.clock === undefined) throw new Error('a fake runtime with outages needs a clock');
    this.#o = options;
    this.#history = options.history ?? true;
  }

  attach(target: FakeRuntimeTarget): void {
    this.#target = target;
  }

  /** Lobby ids started and neither stopped nor gone, in start order. */
  get running(): string[] {
    return [...this.#containers.values()].filter((c) => c.state === 'running').map((c) => c.lobby.lobbyId);
  }

  /** Containers in `region` now, stopping ones included. */
  inRegion(region: string): number {
    return this.#perRegion.get(region) ?? 0;
  }

  /** Whether `region` runs as many containers as its capacity allows. */
  full(region: string): boolean {
    return this.#o.capacity !== undefined && this.inRegion(region) >= this.#o.capacity(region);
  }

  /** The last start of a lobby. */
  startOf(lobbyId: string): StartLobby | undefined {
    return this.#containers.get(lobbyId)?.lobby ?? this.started.findLast((s) => s.lobbyId === lobbyId);
  }

  /** Whether the engine answers, as far as the runtime noticed (an outage is noticed late, and its end too). */
  available(): boolean {
    const now = this.#o.clock?.now() ?? 0;
    return !(this.#o.outages ?? []).some((o) => now >= o.from + o.noticedAfterMs && now < o.to + o.noticedAfterMs);
  }

  start(lobby: StartLobby): Promise<void> {
    if (this.#containers.has(lobby.lobbyId)) return Promise.resolve();
    if (this.#history) this.started.push(lobby);
    const failure = this.#failure(lobby);
    if (failure !== undefined) {
      this.refused += 1;
      this.#o.observe?.({ type: 'refused', lobby, reason: failure });
      return Promise.reject(new Error(failure));
    }
    const container: Container = { lobby, state: 'running' };
    this.#containers.set(lobby.lobbyId, container);
    this.#perRegion.set(lobby.region, this.inRegion(lobby.region) + 1);
    const ready = this.#o.readyAfterMs;
    const readyInMs = typeof ready === 'function' ? ready(lobby) : ready;
    const crashInMs = this.#o.crashAfterMs?.(lobby);
    this.#o.observe?.({ type: 'started', lobby, ...(readyInMs === undefined ? {} : { readyInMs }), ...(crashInMs === undefined ? {} : { crashInMs }) });
    const run = (): void => {
      if (readyInMs !== undefined) this.#readyIn(container, readyInMs, typeof ready === 'function');
      if (crashInMs !== undefined) this.#crashIn(container, crashInMs);
    };
    const { logs, clock } = this.#o;
    if (logs === undefined) {
      run();
      return Promise.resolve();
    }
    return logs.write(lobby.lobbyId, 'std_out', [{ at: clock?.now() ?? 0, line: `fake container ${lobby.lobbyId} started` }]).then(run);
  }

  /** Why a start fails now, if it does: the engine is out, the start is scripted to fail, or the region is full. */
  #failure(lobby: StartLobby): string | undefined {
    const now = this.#o.clock?.now() ?? 0;
    if (this.#o.outages?.some((o) => now >= o.from && now < o.to) === true) return 'the container engine does not answer (outage)';
    const scripted = this.#o.failStart?.(lobby);
    if (scripted !== undefined) return scripted;
    if (this.full(lobby.region)) return `region ${lobby.region} runs ${this.inRegion(lobby.region)} lobbies, its capacity`;
    return undefined;
  }

  /** The lobby calls ready after `delay` (a fixed 0: now; a drawn delay always on the timers), if its container is still there. */
  #readyIn(container: Container, delay: number, drawn: boolean): void {
    const ready = (): void => {
      if (this.#containers.get(container.lobby.lobbyId) === container) void this.ready(container.lobby.lobbyId);
    };
    const timers = this.#o.timers;
    if (timers === undefined || (delay === 0 && !drawn)) ready();
    else timers.after(delay, ready);
  }

  /**
   * Crash the container `delay` ms from now if it is still there, looking at least every hour: a
   * lobby that stopped long before would otherwise hold its timer until a crash days away.
   */
  #crashIn(container: Container, delay: number): void {
    const step = Math.min(delay, CRASH_CHECK_MS);
    const check = (): void => {
      if (this.#containers.get(container.lobby.lobbyId) !== container) return;
      if (delay > step) this.#crashIn(container, delay - step);
      else this.#gone(container, 'crashed');
    };
    if (this.#o.timers === undefined) check();
    else this.#o.timers.after(step, check);
  }

  stop(stop: StopLobby): Promise<void> {
    if (this.#history) this.stopped.push(stop);
    const container = this.#containers.get(stop.lobbyId);
    if (container === undefined) return Promise.resolve();
    this.#o.observe?.({ type: 'stopping', lobbyId: stop.lobbyId, force: stop.force });
    container.state = 'stopping';
    const after = this.#o.exitAfterStopMs;
    const timers = this.#o.timers;
    if (after === undefined) return Promise.resolve();
    if (stop.force || after === 0 || timers === undefined) this.#gone(container, 'exited');
    else timers.after(after, () => {
      if (this.#containers.get(stop.lobbyId) === container) this.#gone(container, 'exited');
    });
    return Promise.resolve();
  }

  /** Calls `lobbyReady` for a started lobby (as its game server would). */
  async ready(lobbyId: string): Promise<unknown> {
    const lobby = this.startOf(lobbyId);
    if (lobby === undefined || this.#target === undefined) return undefined;
    return this.#target.lobbyReady({ namespaceId: lobby.namespaceId, lobbyId });
  }

  /** Reports the container gone (crashed, exited), with an exit code when one is given. */
  exit(lobbyId: string, reason: ExitReason = 'exited', exitCode?: number): void {
    const container = this.#containers.get(lobbyId);
    if (container !== undefined) return this.#gone(container, reason, exitCode);
    const lobby = this.startOf(lobbyId);
    if (lobby !== undefined) this.#target?.exited(lobby.namespaceId, lobbyId, reason, exitCode);
  }

  #gone(container: Container, reason: ExitReason, exitCode?: number): void {
    const { lobbyId, namespaceId, region } = container.lobby;
    this.#containers.delete(lobbyId);
    this.#perRegion.set(region, this.inRegion(region) - 1);
    this.#o.observe?.({ type: 'exited', lobbyId, reason });
    this.#target?.exited(namespaceId, lobbyId, reason, exitCode);
  }
}
