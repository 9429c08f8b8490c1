/**
 * The effects Tavern's services need, as interfaces. Adapters (`src/adapters`) implement them for
 * the server (SQLite/PostgreSQL, the system clock, HTTP verifiers, a container runtime) and the
 * simulator implements them on virtual time (`src/sim/world`). Services never reach past these.
 */
import type { CaptchaCheck, CaptchaVerdict } from '../core/admission/captcha.js';
import type { VerificationCheck, VerificationResponse } from '../core/admission/verification.js';
import type { AppendLog, ProxyRoute, StartLobby, StopLobby } from '../core/effects.js';
import type { Decision } from '../core/tx.js';
import type { World } from '../core/world.js';

/** Epoch milliseconds; the simulator's is virtual. */
export interface Clock {
  now(): number;
}

/** Fresh ids and seeds for the core's random draws; the simulator's is seeded. */
export interface Random {
  /** A fresh UUID (lobby, player and lobby group ids). */
  uuid(): string;
  /** A fresh u32 (a decision's `Ctx.seed`). */
  u32(): number;
}

/** A lobby's state to write with a transaction: its JSON text, or undefined to clear it. */
export interface LobbyStateWrite {
  readonly namespaceId: string;
  readonly lobbyId: string;
  readonly json: string | undefined;
}

/**
 * What a {@link MatchStore.transact} callback returns: its result, the decision to persist (if
 * any), and a lobby state to write in the same commit (decided on the same world).
 */
export interface Transaction<T> {
  readonly result: T;
  readonly decision?: Decision<unknown>;
  readonly lobbyState?: LobbyStateWrite;
}

/** The states a listing carries ({@link MatchStore.lobbyStates}): JSON texts by lobby, and the lobbies whose state did not fit. */
export interface LobbyStatePage {
  /** In the order asked. */
  readonly states: ReadonlyMap<string, string>;
  readonly omitted: ReadonlySet<string>;
}

/**
 * The matchmaker's world, persisted. `transact` is the only way to change it: it hands the latest
 * committed world to `decide` and persists the decision `decide` returns, atomically with respect
 * to every other `transact` on the same store (across processes for a shared database). `decide`
 * is a pure core call: it may run more than once if the store retries a conflict.
 */
export interface MatchStore {
  /** The latest committed world, read-only (for queries; decisions go through `transact`). */
  snapshot(): Promise<World>;
  transact<T>(decide: (world: World) => Transaction<T>): Promise<{ readonly result: T; readonly decision?: Decision<unknown> }>;
  /**
   * A lobby's state as committed (its JSON text), or undefined. States are written by `transact`
   * (`lobbyState`) and deleted in the commit that stops their lobby, or forgets it.
   */
  lobbyState(lobbyId: string): Promise<string | undefined>;
  /** The committed states of `lobbyIds`, within `maxBytes` of UTF-8 in all (see `fitStates`). */
  lobbyStates(lobbyIds: readonly string[], maxBytes: number): Promise<LobbyStatePage>;
}

/** Why a lobby's container went away on its own. */
export type ExitReason = 'exited' | 'crashed' | 'start-failed' | 'lost';

/** Where a runtime reports containers that went away, with their exit code when known (wired to the services' `lobbyExited`). */
export interface RuntimeListener {
  exited(namespaceId: string, lobbyId: string, reason: ExitReason, exitCode?: number): void;
}

/**
 * Runs lobby containers. `start` resolves once the container is started (not ready: the game calls
 * `lobbies/ready` itself) and rejects if it could not be; `stop` asks it to go (`force`: kill now).
 */
export interface Runtime {
  start(lobby: StartLobby): Promise<void>;
  stop(stop: StopLobby): Promise<void>;
  /**
   * Whether lobbies can start now (the engine answers). Absent: always. While false, finds that
   * need a new lobby answer `MATCHMAKER_RUNTIME_UNAVAILABLE` and the idle pool waits.
   */
  available?(): boolean;
  /**
   * Where lobbies can start now, per region (a runtime of several hosts: Swarm), as a function that
   * stays the same while its answers do. Absent: {@link available} answers for every region.
   */
  startableIn?(): (region: string) => boolean;
}

/** POSTs a verification request (wire.md §3.8) and reports what happened; never throws. */
export interface Verifier {
  verify(check: VerificationCheck): Promise<VerificationResponse>;
}

/** Asks hCaptcha or Turnstile whether a client's answer is a solved captcha; never throws. */
export interface CaptchaVerifier {
  verify(check: CaptchaCheck): Promise<CaptchaVerdict>;
}

/** The game proxy's route table. */
export interface ProxyRoutes {
  bind(route: ProxyRoute): Promise<void>;
  unbind(route: ProxyRoute): Promise<void>;
}

/** Lobby log lines Tavern writes itself, on the lobby's `tavern` stream (the runtime appends the container's own output). */
export interface LobbyLogs {
  append(line: AppendLog): Promise<void>;
}

/**
 * Delayed calls: the server's long polls and seat waits go through this, so tests and the
 * simulator expire them instantly or on virtual time.
 *
 * @example
 * const cancel = timers.after(40_000, () => finish());
 */
export interface Timers {
  /** Calls `fn` once, `ms` from now; the returned function cancels it (a no-op once it ran). */
  after(ms: number, fn: () => void): () => void;
}
