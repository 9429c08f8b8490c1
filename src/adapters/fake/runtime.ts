/**
 * A container runtime that runs nothing: it records starts and stops, can call the lobby's
 * `ready` itself after a delay (through injected timers), can fail starts, and can report a
 * container gone. The server tests and the end-to-end tests use it.
 */
import type { StartLobby, StopLobby } from '../../core/effects.js';
import type { LogLine, LogStream } from '../../io/catalog.js';
import type { Clock, ExitReason, Runtime, RuntimeListener, Timers } from '../../io/index.js';

/** Who the fake reports to: the matchmaker (`lobbyReady`, `exited`). */
export interface FakeRuntimeTarget extends RuntimeListener {
  lobbyReady(ref: { readonly namespaceId: string; readonly lobbyId: string }): Promise<unknown>;
}

export interface FakeRuntimeOptions {
  readonly timers?: Timers;
  /**
   * Call `lobbyReady` this long after each start (0: during `start`), or after what this returns
   * for each start (a delay drawn from a distribution); absent: never on its own.
   */
  readonly readyAfterMs?: number | (() => number);
  /** A start for which this returns a reason rejects with it (`start-failed`). */
  readonly failStart?: (lobby: StartLobby) => string | undefined;
  /** Where the fake writes a line per start (like a container's first output). */
  readonly logs?: { write(lobbyId: string, stream: LogStream, lines: readonly LogLine[]): Promise<unknown> };
  readonly clock?: Clock;
  /** Report each stopped container gone (`exited`) at once, as a real runtime does once it is; default: never. */
  readonly exitOnStop?: boolean;
}

/**
 * @example
 * const runtime = new FakeRuntime({ timers, readyAfterMs: 0 });
 * const matchmaker = new Matchmaker({ ..., runtime });
 * runtime.attach(matchmaker);
 */
export class FakeRuntime implements Runtime {
  readonly started: StartLobby[] = [];
  readonly stopped: StopLobby[] = [];
  readonly #options: FakeRuntimeOptions;
  #target: FakeRuntimeTarget | undefined;
  /** Lobbies whose start failed or whose container went away. */
  readonly #gone = new Set<string>();

  constructor(options: FakeRuntimeOptions = {}) {
    this.#options = options;
  }

  attach(target: FakeRuntimeTarget): void {
    this.#target = target;
  }

  /** Lobby ids started (successfully) and not stopped or gone. */
  get running(): string[] {
    const gone = new Set([...this.stopped.map((s) => s.lobbyId), ...this.#gone]);
    return this.started.map((s) => s.lobbyId).filter((id) => !gone.has(id));
  }

  /** The last start of a lobby. */
  startOf(lobbyId: string): StartLobby | undefined {
    return [...this.started].reverse().find((s) => s.lobbyId === lobbyId);
  }

  async start(lobby: StartLobby): Promise<void> {
    if (this.running.includes(lobby.lobbyId)) return;
    this.started.push(lobby);
    const failure = this.#options.failStart?.(lobby);
    if (failure !== undefined) {
      this.#gone.add(lobby.lobbyId);
      throw new Error(failure);
    }
    const { logs, clock } = this.#options;
    if (logs !== undefined) await logs.write(lobby.lobbyId, 'std_out', [{ at: clock?.now() ?? 0, line: `fake container ${lobby.lobbyId} started` }]);
    const after = this.#options.readyAfterMs;
    if (after === undefined) return;
    const delay = typeof after === 'number' ? after : after();
    const ready = (): void => void this.ready(lobby.lobbyId);
    if (delay === 0 || this.#options.timers === undefined) ready();
    else this.#options.timers.after(delay, ready);
  }

  stop(stop: StopLobby): Promise<void> {
    const running = this.running.includes(stop.lobbyId);
    this.stopped.push(stop);
    if (running && this.#options.exitOnStop === true) this.exit(stop.lobbyId, 'exited');
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
    const lobby = this.startOf(lobbyId);
    if (lobby === undefined) return;
    this.#gone.add(lobbyId);
    this.#target?.exited(lobby.namespaceId, lobbyId, reason, exitCode);
  }
}
